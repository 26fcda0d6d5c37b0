package cp

import (
	"math/bits"
	"slices"
)

// allDiffProp removes the values of fixed variables from the others and,
// for groups of moderate size, checks Hall intervals on bounds (a cheap
// partial form of Régin's matching-based filtering).
//
// With enforcement literals (OnlyEnforceIf) it filters only once all of
// them are true. Before that it never fails; when the constraint can no
// longer hold (two members fixed to one value, a pigeonhole, a Hall
// interval) and exactly one enforcement literal is unfixed, the others
// true, it sets that literal false (half-reification). An assumption
// literal enforcing an all_different over members with too few values
// between them is thus refuted by propagation alone.
//
// Values in except (all_different_except) may be shared: a member fixed to
// one removes nothing, and the counting arguments (pigeonhole, Hall) only
// count members that cannot take one of them.
type allDiffProp struct {
	vars     []int32
	except   []int64 // sorted; values any number of members may take
	enf      []int32 // enforcement literals
	done     int32   // 1 + rev array id of the processed flags, 0 before the first run
	union    []uint64
	fixedVal []int64 // scratch for cannotHold
	cand     []int32 // scratch for filter: members that may hold a fixed value
}

// exempt reports whether x is one of the shared values.
func (p *allDiffProp) exempt(x int64) bool {
	for _, e := range p.except {
		if e == x {
			return true
		}
	}
	return false
}

// escapes reports whether member v may still take a shared value (then it
// is never counted towards a pigeonhole or a Hall interval).
func (p *allDiffProp) escapes(s *solver, v int32) bool {
	for _, e := range p.except {
		if s.contains(v, e) {
			return true
		}
	}
	return false
}

func (p *allDiffProp) propagate(s *solver) bool {
	if len(p.enf) > 0 {
		st, last := s.enfState(p.enf)
		switch {
		case st < 0:
			return true // not enforced: nothing to do
		case st == 0:
			if last >= 0 && p.cannotHold(s) {
				return s.setLit(last, false)
			}
			return true
		}
	}
	return p.filter(s)
}

// cannotHold reports, without changing any domain, whether the members
// cannot take distinct values: two are fixed to one value, the unfixed
// ones have fewer values left between them (the fixed values excluded)
// than there are of them, or, in small groups, an interval of values
// holds more members' domains than it has values.
func (p *allDiffProp) cannotHold(s *solver) bool {
	fv := p.fixedVal[:0]
	n, lo, hi := int64(0), int64(maxInt64), int64(minInt64)
	for _, v := range p.vars {
		if s.lo[v] == s.hi[v] {
			if !p.exempt(s.lo[v]) {
				fv = append(fv, s.lo[v])
			}
			continue
		}
		if p.except != nil && p.escapes(s, v) {
			continue
		}
		n++
		lo, hi = min(lo, s.lo[v]), max(hi, s.hi[v])
	}
	p.fixedVal = fv
	slices.Sort(fv)
	for i := 1; i < len(fv); i++ {
		if fv[i] == fv[i-1] {
			return true
		}
	}
	if p.except == nil && len(p.vars) <= 16 && p.hallFails(s) {
		return true
	}
	if n == 0 || hi-lo >= 1<<16 {
		return false
	}
	need := n + int64(len(fv)) // values the union must exceed before fixed ones are excluded
	for _, v := range p.vars {
		if s.lo[v] != s.hi[v] && s.size(v) >= need && (p.except == nil || !p.escapes(s, v)) {
			return false
		}
	}
	words := int((hi-lo)/64 + 1)
	if cap(p.union) < words {
		p.union = make([]uint64, words)
	}
	u := p.union[:words]
	clear(u)
	for _, v := range p.vars {
		if s.lo[v] == s.hi[v] || p.except != nil && p.escapes(s, v) {
			continue
		}
		for x, ok := s.lo[v], true; ok && x <= s.hi[v]; x, ok = s.next(v, x+1) {
			k := x - lo
			u[k>>6] |= 1 << (k & 63)
		}
	}
	for _, x := range fv {
		if x >= lo && x <= hi {
			k := x - lo
			u[k>>6] &^= 1 << (k & 63)
		}
	}
	cnt := int64(0)
	for _, w := range u {
		cnt += int64(bits.OnesCount64(w))
	}
	return cnt < n
}

// hallFails reports whether some interval [lo_a, hi_b] contains the
// domains of more members than it has values.
func (p *allDiffProp) hallFails(s *solver) bool {
	for _, a := range p.vars {
		for _, b := range p.vars {
			lo, hi := s.lo[a], s.hi[b]
			if lo > hi || hi-lo+1 > int64(len(p.vars)) {
				continue
			}
			inside := int64(0)
			for _, v := range p.vars {
				if s.lo[v] >= lo && s.hi[v] <= hi {
					inside++
				}
			}
			if inside > hi-lo+1 {
				return true
			}
		}
	}
	return false
}

// filter is the propagation proper, once the constraint is enforced.
func (p *allDiffProp) filter(s *solver) bool {

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
			if p.except != nil && p.exempt(x) {
				continue // a shared value: removed from nobody
			}
			cand := p.cand[:0]
			for k, w := range p.vars {
				if k == i || x < s.lo[w] || x > s.hi[w] {
					continue
				}
				if s.lo[w] == s.hi[w] {
					return false // two variables fixed to x
				}
				cand = append(cand, w)
			}
			// Membership first, then removals (see keepHolding): removing
			// x from one member changes no other member's domain.
			cand = s.keepHolding(cand, x)
			p.cand = cand
			for _, w := range cand {
				if !s.remove(w, x) {
					return false
				}
				if s.lo[w] == s.hi[w] {
					changed = true
				}
			}
		}
	}
	if !p.pigeonhole(s) {
		return false
	}
	if p.except == nil && len(p.vars) <= 16 {
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
		if s.lo[v] == s.hi[v] || p.except != nil && p.escapes(s, v) {
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
		if s.lo[v] != s.hi[v] && s.size(v) >= n && (p.except == nil || !p.escapes(s, v)) {
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
		if s.lo[v] == s.hi[v] || p.except != nil && p.escapes(s, v) {
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
