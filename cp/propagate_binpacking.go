package cp

// binPackProp: loads[j] == Σ sizes[i]*[assign[i]==bins[j]] for one
// resource. Per bin it maintains required (items fixed there) and possible
// (required + candidates) load, prunes candidates that no longer fit
// (Shaw 2004 "load maintenance" and "commitment"), and uses the total size
// when every item must land in a listed bin.
type binPackProp struct {
	items  []int32
	sizes  []int64
	bins   []int64
	loads  []int32
	binOf  map[int64]int // bin value -> j, when the bin values are spread out
	dense  []int32       // bin value - binLo -> j or -1, when they are not
	binLo  int64
	closed bool          // every item's initial domain is within bins
	total  int64
	req    []int64
	pos    []int64
}

// forCandidates calls f(j, value) for every listed bin in item i's domain.
func (p *binPackProp) forCandidates(s *solver, v int32, f func(j int, val int64) bool) bool {
	if s.size(v) <= int64(len(p.bins)) {
		for x, ok := s.lo[v], true; ok; x, ok = s.next(v, x+1) {
			if j, in := p.bin(x); in && !f(j, x) {
				return false
			}
			if x >= s.hi[v] {
				break
			}
		}
		return true
	}
	for j, b := range p.bins {
		if s.contains(v, b) && !f(j, b) {
			return false
		}
	}
	return true
}

func (p *binPackProp) propagate(s *solver) bool {
	for j := range p.req {
		p.req[j], p.pos[j] = 0, 0
	}
	for i, v := range p.items {
		sz := p.sizes[i]
		if sz == 0 {
			continue
		}
		if s.fixed(v) {
			if j, ok := p.bin(s.lo[v]); ok {
				p.req[j] += sz
				p.pos[j] += sz
			}
			continue
		}
		p.forCandidates(s, v, func(j int, _ int64) bool { p.pos[j] += sz; return true })
	}
	for j, l := range p.loads {
		if !s.setMin(l, p.req[j]) || !s.setMax(l, p.pos[j]) {
			return false
		}
	}
	if p.closed && len(p.loads) > 1 {
		var sumMin, sumMax int64
		for _, l := range p.loads {
			sumMin += s.lo[l]
			sumMax += s.hi[l]
		}
		if sumMin > p.total || sumMax < p.total {
			return false
		}
		for _, l := range p.loads {
			lo, hi := s.lo[l], s.hi[l]
			if !s.setMin(l, p.total-(sumMax-hi)) || !s.setMax(l, p.total-(sumMin-lo)) {
				return false
			}
			sumMin += s.lo[l] - lo
			sumMax += s.hi[l] - hi
		}
	}
	for i, v := range p.items {
		sz := p.sizes[i]
		if sz == 0 || s.fixed(v) {
			continue
		}
		ok := p.forCandidates(s, v, func(j int, val int64) bool {
			l := p.loads[j]
			if p.req[j]+sz > s.hi[l] {
				return s.remove(v, val) // does not fit any more
			}
			if p.pos[j]-sz < s.lo[l] {
				return s.fix(v, val) // bin cannot reach its minimum without it
			}
			return true
		})
		if !ok {
			return false
		}
	}
	return true
}

// bin maps a value to its bin position.
func (p *binPackProp) bin(x int64) (int, bool) {
	if p.dense != nil {
		k := x - p.binLo
		if k < 0 || k >= int64(len(p.dense)) || p.dense[k] < 0 {
			return 0, false
		}
		return int(p.dense[k]), true
	}
	j, ok := p.binOf[x]
	return j, ok
}
