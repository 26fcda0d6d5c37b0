package cp

import "slices"

// varMemberProp: x == vars[i] for some i, optionally enforced.
//
// A candidate is a vars[i] that may still equal x. With none, the
// constraint fails (or its enforcement must be false); with one, x and it
// are equal and their domains are intersected; with several, x keeps only
// the values some candidate can take. That union is exact once the
// candidates are fixed, the usual end of a placement search ("the web pod
// goes where a cache pod went"); before, it is computed over bitset
// domains only, whose membership test is O(1), and only while at most
// maxUnionScan candidates are open: two open candidates over the sampled
// nodes cover x's domain anyway, and scanning it at every change of 40
// cache pods was 43% of the solve of an nginx+redis batch.
type varMemberProp struct {
	x    int32
	vars []int32
	enf  []int32
	cand []int32 // scratch: the candidates of this call
	vals []int64 // scratch: the fixed candidates' values
}

func (p *varMemberProp) propagate(s *solver) bool {
	st, _ := s.enfState(p.enf)
	if st == -1 {
		return true
	}
	x := p.x
	p.cand = p.cand[:0]
	open := 0 // unfixed candidates
	for _, y := range p.vars {
		if y == x {
			return true // x == x: entailed
		}
		if s.mayEqual(x, y) {
			p.cand = append(p.cand, y)
			if !s.fixed(y) {
				open++
			}
		}
	}
	switch {
	case len(p.cand) == 0:
		if st == 1 {
			return false
		}
		return s.enfViolated(p.enf)
	case st != 1:
		return true
	case len(p.cand) == 1:
		return s.equalDomains(x, p.cand[0])
	case open == 0:
		p.vals = p.vals[:0]
		for _, y := range p.cand {
			p.vals = append(p.vals, s.lo[y])
		}
		slices.Sort(p.vals)
		return s.restrictToSorted(x, slices.Compact(p.vals))
	}
	if open > maxUnionScan || s.bits[x] == nil {
		// Bounds: x lies within the candidates' hull.
		lo, hi := int64(maxInt64), int64(minInt64)
		for _, y := range p.cand {
			lo, hi = min(lo, s.lo[y]), max(hi, s.hi[y])
		}
		return s.setMin(x, lo) && s.setMax(x, hi)
	}
	// Unfixed candidates first: one usually holds most values, so the
	// scan of each value stops at its first try.
	slices.SortFunc(p.cand, func(a, b int32) int {
		fa, fb := s.fixed(a), s.fixed(b)
		switch {
		case fa == fb:
			return 0
		case fb:
			return -1
		}
		return 1
	})
	for v, ok := s.lo[x], true; ok; v, ok = s.next(x, v+1) {
		supported := false
		for _, y := range p.cand {
			if s.contains(y, v) {
				supported = true
				break
			}
		}
		if !supported && !s.remove(x, v) {
			return false
		}
		if v >= s.hi[x] {
			break
		}
	}
	return true
}

// maxUnionScan is the number of open candidates up to which x's domain
// is filtered by their union.
const maxUnionScan = 2

// mayEqual reports whether x and y may still take the same value: exact
// when either is fixed, their bounds overlapping otherwise.
func (s *solver) mayEqual(x, y int32) bool {
	switch {
	case s.fixed(y):
		return s.contains(x, s.lo[y])
	case s.fixed(x):
		return s.contains(y, s.lo[x])
	}
	return s.lo[y] <= s.hi[x] && s.lo[x] <= s.hi[y]
}

// equalDomains makes x and y keep only their common values (x == y):
// exact on bitset domains, bounds on interval ones.
func (s *solver) equalDomains(x, y int32) bool {
	for range 2 {
		if !s.setMin(x, s.lo[y]) || !s.setMax(x, s.hi[y]) || !s.setMin(y, s.lo[x]) || !s.setMax(y, s.hi[x]) {
			return false
		}
		if s.bits[x] == nil || s.bits[y] == nil {
			return true
		}
		for v, ok := s.lo[x], true; ok; v, ok = s.next(x, v+1) {
			if !s.contains(y, v) && !s.remove(x, v) {
				return false
			}
			if v >= s.hi[x] {
				break
			}
		}
		x, y = y, x
	}
	return true
}
