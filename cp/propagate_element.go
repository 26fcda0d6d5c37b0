package cp

import (
	"slices"
	"sort"
)

// restrictToSorted keeps only the values of v that are in the ascending
// slice vals (domain-consistent for small domains, exact for large ones
// via interval intersection).
func (s *solver) restrictToSorted(v int32, vals []int64) bool {
	if len(vals) == 0 {
		return false
	}
	if s.bits[v] == nil {
		return s.intersect(v, DomainFromValues(vals...))
	}
	i := 0
	for x, ok := s.lo[v], true; ok; x, ok = s.next(v, x+1) {
		for i < len(vals) && vals[i] < x {
			i++
		}
		if (i == len(vals) || vals[i] != x) && !s.remove(v, x) {
			return false
		}
		if x >= s.hi[v] {
			break
		}
	}
	return s.lo[v] <= s.hi[v]
}

// elementProp: target == values[index], domain-consistent.
type elementProp struct {
	index, target int32
	values        []int64
	buf           []int64
}

func (p *elementProp) propagate(s *solver) bool {
	if !s.setMin(p.index, 0) || !s.setMax(p.index, int64(len(p.values)-1)) {
		return false
	}
	p.buf = p.buf[:0]
	for i, ok := s.lo[p.index], true; ok; i, ok = s.next(p.index, i+1) {
		if !s.contains(p.target, p.values[i]) {
			if !s.remove(p.index, i) {
				return false
			}
		} else {
			p.buf = append(p.buf, p.values[i])
		}
		if i >= s.hi[p.index] {
			break
		}
	}
	slices.Sort(p.buf)
	return s.restrictToSorted(p.target, p.buf)
}

// varElementProp: target == vars[index], bounds-consistent on the values.
type varElementProp struct {
	index, target int32
	vars          []int32
}

func (p *varElementProp) propagate(s *solver) bool {
	if !s.setMin(p.index, 0) || !s.setMax(p.index, int64(len(p.vars)-1)) {
		return false
	}
	lo, hi := int64(maxInt64), int64(minInt64)
	for i, ok := s.lo[p.index], true; ok; i, ok = s.next(p.index, i+1) {
		v := p.vars[i]
		if s.hi[v] < s.lo[p.target] || s.lo[v] > s.hi[p.target] ||
			(s.fixed(v) && !s.contains(p.target, s.lo[v])) ||
			(s.fixed(p.target) && !s.contains(v, s.lo[p.target])) {
			if !s.remove(p.index, i) {
				return false
			}
		} else {
			lo, hi = min(lo, s.lo[v]), max(hi, s.hi[v])
		}
		if i >= s.hi[p.index] {
			break
		}
	}
	if !s.setMin(p.target, lo) || !s.setMax(p.target, hi) {
		return false
	}
	if s.fixed(p.index) {
		v := p.vars[s.lo[p.index]]
		for range 2 {
			if !s.setMin(v, s.lo[p.target]) || !s.setMax(v, s.hi[p.target]) ||
				!s.setMin(p.target, s.lo[v]) || !s.setMax(p.target, s.hi[v]) {
				return false
			}
		}
		if s.fixed(v) {
			return s.fix(p.target, s.lo[v])
		}
		if s.fixed(p.target) {
			return s.fix(v, s.lo[p.target])
		}
	}
	return true
}

// tableProp: generalised arc consistency by scanning all tuples.
type tableProp struct {
	vars   []int32
	tuples [][]int64
	sup    [][]int64
}

func (p *tableProp) propagate(s *solver) bool {
	if p.sup == nil {
		p.sup = make([][]int64, len(p.vars))
	}
	for j := range p.sup {
		p.sup[j] = p.sup[j][:0]
	}
	any := false
tuples:
	for _, t := range p.tuples {
		for j, v := range p.vars {
			if !s.contains(v, t[j]) {
				continue tuples
			}
		}
		any = true
		for j := range p.vars {
			p.sup[j] = append(p.sup[j], t[j])
		}
	}
	if !any {
		return false
	}
	for j, v := range p.vars {
		sup := p.sup[j]
		slices.Sort(sup)
		if !s.restrictToSorted(v, sup) {
			return false
		}
	}
	return true
}

// memberProp: x ∈ set (or x ∉ set when neg), optionally enforced.
type memberProp struct {
	x    int32
	set  Domain
	neg  bool
	enf  []int32
	comp Domain // the complement of set, once needed
}

func (p *memberProp) propagate(s *solver) bool {
	st, _ := s.enfState(p.enf)
	if st == -1 {
		return true
	}
	if st == 1 && p.neg && s.bits[p.x] != nil && p.set.Size() <= 1<<12 {
		// Few excluded values: remove them one by one (O(1) each on a
		// bitset) instead of scanning the whole domain.
		for _, iv := range p.set.ivs {
			for v := max(iv.lo, s.lo[p.x]); v <= min(iv.hi, s.hi[p.x]); v++ {
				if !s.remove(p.x, v) {
					return false
				}
			}
		}
		return s.lo[p.x] <= s.hi[p.x]
	}
	if st == 1 {
		allowed := p.set
		if p.neg {
			if p.comp.IsEmpty() {
				p.comp = p.set.Complement()
			}
			allowed = p.comp
		}
		return s.intersect(p.x, allowed)
	}
	// Not yet enforced: if x cannot satisfy the constraint, the enforcement
	// must be false. This runs at every change of x while the literal is
	// open, so it walks the set's intervals against the domain and
	// allocates nothing.
	if !p.satisfiable(s) {
		return s.enfViolated(p.enf)
	}
	return true
}

// satisfiable reports whether some value of x's domain satisfies the
// membership: in O(intervals of the set) domain lookups.
func (p *memberProp) satisfiable(s *solver) bool {
	x := p.x
	lo, hi := s.lo[x], s.hi[x]
	ivs := p.set.ivs
	if !p.neg {
		// A value of the domain inside one of the set's intervals: the
		// domain's next value from an interval's start either is inside
		// it or skips the intervals below it (both walks only advance).
		i := sort.Search(len(ivs), func(i int) bool { return ivs[i].hi >= lo })
		for i < len(ivs) && ivs[i].lo <= hi {
			y, ok := s.next(x, ivs[i].lo)
			if !ok {
				return false
			}
			for i < len(ivs) && ivs[i].hi < y {
				i++
			}
			if i < len(ivs) && ivs[i].lo <= y {
				return true
			}
		}
		return false
	}
	// A value of the domain in no interval of the set: from each value
	// found inside an interval, jump past that interval.
	i := 0
	for y, ok := lo, true; ok; y, ok = s.next(x, y) {
		for i < len(ivs) && ivs[i].hi < y {
			i++
		}
		if i == len(ivs) || ivs[i].lo > y {
			return true
		}
		if ivs[i].hi >= hi {
			return false // the rest of the domain is inside this interval
		}
		y = ivs[i].hi + 1
	}
	return false
}
