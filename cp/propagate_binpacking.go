package cp

import "math/bits"

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
	closed bool // every item's initial domain is within bins
	total  int64
	req    []int64
	pos    []int64
	buf    []int32
}

// candidates appends to buf the bin positions j with bins[j] in v's
// domain. Bitset domains with a dense bin index are scanned word by word,
// since this loop dominates the solver's time on placement models.
func (p *binPackProp) candidates(s *solver, v int32, buf []int32) []int32 {
	buf = buf[:0]
	if b := s.bits[v]; b != nil && p.dense != nil {
		base, lo, hi := s.base[v], s.lo[v]-s.base[v], s.hi[v]-s.base[v]
		for wi := lo >> 6; wi <= hi>>6; wi++ {
			w := b[wi]
			if wi == lo>>6 {
				w &^= 1<<(lo&63) - 1
			}
			if wi == hi>>6 && hi&63 < 63 {
				w &= 1<<(hi&63+1) - 1
			}
			for w != 0 {
				k := base + wi<<6 + int64(bits.TrailingZeros64(w)) - p.binLo
				w &= w - 1
				if k >= 0 && k < int64(len(p.dense)) && p.dense[k] >= 0 {
					buf = append(buf, p.dense[k])
				}
			}
		}
		return buf
	}
	if s.size(v) <= int64(len(p.bins)) {
		for x, ok := s.lo[v], true; ok; x, ok = s.next(v, x+1) {
			if j, in := p.bin(x); in {
				buf = append(buf, int32(j))
			}
			if x >= s.hi[v] {
				break
			}
		}
		return buf
	}
	for j, b := range p.bins {
		if s.contains(v, b) {
			buf = append(buf, int32(j))
		}
	}
	return buf
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
		p.buf = p.candidates(s, v, p.buf)
		for _, j := range p.buf {
			p.pos[j] += sz
		}
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
		p.buf = p.candidates(s, v, p.buf)
		for _, j := range p.buf {
			l := p.loads[j]
			if p.req[j]+sz > s.hi[l] {
				if !s.remove(v, p.bins[j]) { // does not fit any more
					return false
				}
			} else if p.pos[j]-sz < s.lo[l] {
				if !s.fix(v, p.bins[j]) { // bin cannot reach its minimum without it
					return false
				}
				break
			}
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
