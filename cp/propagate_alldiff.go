package cp

// allDiffProp removes the values of fixed variables from the others and,
// for groups of moderate size, checks Hall intervals on bounds (a cheap
// partial form of Régin's matching-based filtering).
type allDiffProp struct {
	vars  []int32
	done  int32 // 1 + rev array id of the processed flags, 0 before the first run
	union []uint64
}

func (p *allDiffProp) propagate(s *solver) bool {
	// Remove the value of every newly fixed variable from the others; a
	// reversible flag per variable records which fixed values were
	// already removed, so a wake-up costs O(n) per newly fixed variable.
	if p.done == 0 {
		p.done = s.newRev(len(p.vars)) + 1
	}
	rev := p.done - 1
	done := s.revs[rev]
	for changed := true; changed; {
		changed = false
		for i, v := range p.vars {
			if done[i] != 0 || s.lo[v] != s.hi[v] {
				continue
			}
			s.setRev(rev, i, 1)
			x := s.lo[v]
			for k, w := range p.vars {
				if k == i || x < s.lo[w] || x > s.hi[w] {
					continue
				}
				if s.lo[w] == s.hi[w] {
					return false // two variables fixed to x
				}
				if s.contains(w, x) {
					if !s.remove(w, x) {
						return false
					}
					if s.lo[w] == s.hi[w] {
						changed = true
					}
				}
			}
		}
	}
	if !p.pigeonhole(s) {
		return false
	}
	if len(p.vars) <= 16 {
		return p.hall(s)
	}
	return true
}

// pigeonhole fails when the unfixed variables have fewer values left
// between them than there are of them (a Hall set of all the variables;
// e.g. an implied clique of items that cannot share a bin). It only
// builds the union when no single domain is large enough on its own.
func (p *allDiffProp) pigeonhole(s *solver) bool {
	n, lo, hi := int64(0), int64(maxInt64), int64(minInt64)
	for _, v := range p.vars {
		if s.lo[v] == s.hi[v] {
			continue
		}
		n++
		lo, hi = min(lo, s.lo[v]), max(hi, s.hi[v])
	}
	if n < 2 || hi-lo+1 >= n && hi-lo >= 1<<16 {
		return true
	}
	if hi-lo+1 < n {
		return false
	}
	for _, v := range p.vars {
		if s.lo[v] != s.hi[v] && s.size(v) >= n {
			return true
		}
	}
	words := int((hi-lo)/64 + 1)
	if cap(p.union) < words {
		p.union = make([]uint64, words)
	}
	u := p.union[:words]
	clear(u)
	cnt := int64(0)
	for _, v := range p.vars {
		if s.lo[v] == s.hi[v] {
			continue
		}
		for x, ok := s.lo[v], true; ok; x, ok = s.next(v, x+1) {
			k := x - lo
			if u[k>>6]&(1<<(k&63)) == 0 {
				u[k>>6] |= 1 << (k & 63)
				cnt++
				if cnt >= n {
					return true
				}
			}
			if x >= s.hi[v] {
				break
			}
		}
	}
	return false
}

// hall checks every interval [lo_i, hi_j]: more variables than values
// inside is a conflict; exactly as many means other variables must leave
// it (only bounds are adjusted). O(n^3) on small groups.
func (p *allDiffProp) hall(s *solver) bool {
	n := len(p.vars)
	for _, a := range p.vars {
		for _, b := range p.vars {
			lo, hi := s.lo[a], s.hi[b]
			if lo > hi || hi-lo+1 > int64(n) {
				continue
			}
			inside := 0
			for _, v := range p.vars {
				if s.lo[v] >= lo && s.hi[v] <= hi {
					inside++
				}
			}
			if int64(inside) > hi-lo+1 {
				return false
			}
			if int64(inside) < hi-lo+1 {
				continue
			}
			for _, v := range p.vars {
				if s.lo[v] >= lo && s.hi[v] <= hi {
					continue
				}
				if s.lo[v] >= lo && s.lo[v] <= hi && !s.setMin(v, hi+1) {
					return false
				}
				if s.hi[v] >= lo && s.hi[v] <= hi && !s.setMax(v, lo-1) {
					return false
				}
			}
		}
	}
	return true
}
