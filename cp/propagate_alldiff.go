package cp

import "sort"

// allDiffProp removes the values of fixed variables from the others and,
// for groups of moderate size, checks Hall intervals on bounds (a cheap
// partial form of Régin's matching-based filtering).
type allDiffProp struct {
	vars  []int32
	buf   []int64
	union []uint64
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
