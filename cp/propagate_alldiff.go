package cp

import "sort"

// allDiffProp removes the values of fixed variables from the others and,
// for groups of moderate size, checks Hall intervals on bounds (a cheap
// partial form of Régin's matching-based filtering).
type allDiffProp struct {
	vars []int32
	buf  []int64
}

func (p *allDiffProp) propagate(s *solver) bool {
	for changed := true; changed; {
		changed = false
		p.buf = p.buf[:0]
		for _, v := range p.vars {
			if s.fixed(v) {
				p.buf = append(p.buf, s.lo[v])
			}
		}
		if len(p.buf) == 0 {
			break
		}
		sort.Slice(p.buf, func(i, j int) bool { return p.buf[i] < p.buf[j] })
		for i := 1; i < len(p.buf); i++ {
			if p.buf[i] == p.buf[i-1] {
				return false
			}
		}
		for _, v := range p.vars {
			if s.fixed(v) {
				continue
			}
			for _, x := range p.buf {
				if x > s.hi[v] {
					break
				}
				if s.contains(v, x) {
					if !s.remove(v, x) {
						return false
					}
					if s.fixed(v) {
						changed = true
						break
					}
				}
			}
		}
	}
	if len(p.vars) <= 16 {
		return p.hall(s)
	}
	return true
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
