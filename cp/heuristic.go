package cp

import (
	"encoding/binary"
	"slices"
	"sort"
)

// Structure-aware search guidance computed once per solve:
//
//   - defined variables (bin-packing loads, min/max and element targets)
//     are functionally determined by the others, so branching on them
//     first only guesses; they are branched on last;
//   - bin-packing items are ordered by normalised size (largest first, as
//     in first-fit decreasing) among dom/wdeg ties, and placed in the bin
//     with the most remaining normalised capacity (worst fit), which both
//     spreads load and keeps the first solution easy to find.

type itemRef struct {
	p *binPackProp
	i int
}

type heuristics struct {
	defined []bool
	items   [][]itemRef // var -> bin-packing constraints it is an item of
	prio    []float64   // tie-break: larger first
	// scale normalises a resource (the largest initial capacity); the
	// value choice only scores the objective-relevant resources (all of
	// them if none is related to the objective).
	scale    map[*binPackProp]float64
	relevant map[*binPackProp]bool
	refBuf   []itemRef
	fit      []*fitIndex // item variable -> index of its bins, or nil
	scores   []scoreCache
}

// scoreCache is a variable's branching score for a domain size and weight
// (size 0 never matches: a domain is never empty during search).
type scoreCache struct {
	size, weight int64
	score        float64
}

func (s *solver) initHeuristics() {
	h := &s.h
	n := len(s.lo)
	h.defined = make([]bool, n)
	h.items = make([][]itemRef, n)
	h.prio = make([]float64, n)
	h.scores = make([]scoreCache, n)
	h.scale = map[*binPackProp]float64{}
	h.relevant = map[*binPackProp]bool{}
	var bps []*binPackProp
	for _, pi := range s.props {
		switch p := pi.p.(type) {
		case *binPackProp:
			bps = append(bps, p)
			var maxCap int64 = 1
			for _, l := range p.loads {
				h.defined[l] = true
				maxCap = max(maxCap, s.hi[l])
			}
			h.scale[p] = float64(maxCap)
			for i, v := range p.items {
				h.items[v] = append(h.items[v], itemRef{p, i})
				h.prio[v] += float64(p.sizes[i]) / float64(maxCap)
			}
		case *minMaxProp:
			h.defined[p.target] = true
		case *elementProp:
			h.defined[p.target] = true
		case *varElementProp:
			h.defined[p.target] = true
		}
	}
	// Objective variables are usually bounded by the rest (e.g. a min
	// spare capacity); branch-and-bound drives them, so branch on them last.
	if s.m.obj != nil && s.hasObj {
		for _, x := range s.m.obj.Expr.Vars {
			h.defined[x.idx] = true
		}
	}
	if len(bps) > 0 && s.m.obj != nil {
		near := s.m.objectiveNeighbourhood(4)
		any := false
		for _, p := range bps {
			for _, l := range p.loads {
				if near[l] {
					h.relevant[p] = true
					any = true
					break
				}
			}
		}
		if !any {
			clear(h.relevant)
		}
	}
	if len(h.relevant) == 0 {
		for _, p := range bps {
			h.relevant[p] = true
		}
	}
	s.initFitIndexes()
}

// objectiveNeighbourhood marks the variables within depth constraints of
// the objective (bin-packing constraints excluded: they connect
// everything).
func (m *Model) objectiveNeighbourhood(depth int) []bool {
	n := len(m.doms)
	// The incidence is built flat, variables per constraint then
	// constraints per variable (counted first): a slice per variable cost
	// 7 ms on a 10,000-node placement model, most of the solver's setup.
	conStart := make([]int32, len(m.cons)+1)
	var conVar []int32
	for ci := range m.cons {
		c := &m.cons[ci]
		if c.Kind != KindBinPacking {
			conVar = appendConVars(conVar, c)
		}
		conStart[ci+1] = int32(len(conVar))
	}
	varStart := make([]int32, n+1)
	for _, v := range conVar {
		varStart[v+1]++
	}
	for v := range n {
		varStart[v+1] += varStart[v]
	}
	varCon := make([]int32, len(conVar))
	fill := append([]int32(nil), varStart[:n]...)
	for ci := range m.cons {
		for _, v := range conVar[conStart[ci]:conStart[ci+1]] {
			varCon[fill[v]] = int32(ci)
			fill[v]++
		}
	}
	conVars := func(ci int32) []int32 { return conVar[conStart[ci]:conStart[ci+1]] }
	varCons := func(v int32) []int32 { return varCon[varStart[v]:varStart[v+1]] }
	mark := make([]bool, n)
	usedCon := make([]bool, len(m.cons))
	var frontier []int32
	for _, x := range m.obj.Expr.Vars {
		if !mark[x.idx] {
			mark[x.idx] = true
			frontier = append(frontier, x.idx)
		}
	}
	for d := 0; d < depth && len(frontier) > 0; d++ {
		var next []int32
		for _, v := range frontier {
			if m.origin[v] == originConstant {
				continue
			}
			for _, ci := range varCons(v) {
				if usedCon[ci] {
					continue
				}
				usedCon[ci] = true
				for _, w := range conVars(ci) {
					if !mark[w] {
						mark[w] = true
						next = append(next, w)
					}
				}
			}
		}
		frontier = next
	}
	return mark
}

// appendConVars appends the variables c mentions (literals as their
// variables), as objectiveNeighbourhood links them.
func appendConVars(vs []int32, c *ConstraintInfo) []int32 {
	for _, x := range c.Vars {
		vs = append(vs, x.idx)
	}
	for _, l := range c.Lits {
		vs = append(vs, l.idx>>1)
	}
	for _, l := range c.Enforcement {
		vs = append(vs, l.idx>>1)
	}
	for _, x := range c.Loads {
		vs = append(vs, x.idx)
	}
	for _, e := range c.Exprs {
		for _, x := range e.Vars {
			vs = append(vs, x.idx)
		}
	}
	switch c.Kind {
	case KindElement, KindVarElement, KindMinEquality, KindMaxEquality:
		vs = append(vs, c.Target.idx)
		if c.Kind == KindElement || c.Kind == KindVarElement {
			vs = append(vs, c.Index.idx)
		}
	}
	return vs
}

// worstFit returns the value of item variable v whose bin keeps the most
// remaining capacity (current upper bound of the load minus its lower
// bound and the item), normalised per resource, over the
// objective-relevant resources; with bestFit, the least remaining
// capacity instead, which packs tight instances far more often. Items of
// a fitIndex are served by it (the best score without scanning every
// bin; ties may go to another bin than the scan's smallest value), except
// best fit while some bin needs more load than its fixed items bring.
func (s *solver) worstFit(v int32, bestFit bool) (int64, bool) {
	refs := s.h.refBuf[:0]
	var inv [8]float64
	var sizes [8]int64
	for _, r := range s.h.items[v] {
		if s.h.relevant[r.p] && len(refs) < len(inv) {
			inv[len(refs)] = 1 / s.h.scale[r.p]
			sizes[len(refs)] = r.p.sizes[r.i]
			refs = append(refs, r)
		}
	}
	s.h.refBuf = refs
	if ix := s.h.fit[v]; ix != nil {
		if prune := ix.fitPrunable(s); prune || !bestFit {
			x, ok := ix.query(s, v, sizes[:len(refs)], bestFit, prune)
			if fitIndexCheck != nil {
				y, ok2 := s.worstFitScan(v, refs, inv[:len(refs)], bestFit)
				got, _ := s.fitScore(x, refs, inv[:len(refs)], bestFit)
				want, _ := s.fitScore(y, refs, inv[:len(refs)], bestFit)
				fitIndexCheck(got, want, ok && s.contains(v, x), ok2)
			}
			return x, ok
		}
	}
	return s.worstFitScan(v, refs, inv[:len(refs)], bestFit)
}

// fitIndexCheck, when set (by tests), receives the score of the index's
// answer and the scan's best score for every query the index serves, and
// whether each found a bin in the domain.
var fitIndexCheck func(got, want float64, ok, ok2 bool)

// fitScore is the score worstFit maximises for value x; in is false if x
// is in no bin.
func (s *solver) fitScore(x int64, refs []itemRef, inv []float64, bestFit bool) (score float64, in bool) {
	score, sum := 1e300, 0.0
	for k, r := range refs {
		j, ok := r.p.bin(x)
		if !ok {
			continue
		}
		in = true
		l := r.p.loads[j]
		rem := float64(s.hi[l]-s.lo[l]-r.p.sizes[r.i]) * inv[k]
		score = min(score, rem)
		sum += rem
	}
	if bestFit {
		score = -sum // least total remaining capacity
	}
	return score, in
}

// worstFitScan is worstFit over every value of v's domain; ties go to the
// smallest value.
func (s *solver) worstFitScan(v int32, refs []itemRef, inv []float64, bestFit bool) (int64, bool) {
	bestVal, found := int64(0), false
	bestScore := -1e300
	for x, ok := s.lo[v], true; ok; x, ok = s.next(v, x+1) {
		// A value outside every bin (an item left unpacked: a pod with
		// no node) is no fit at all: it is tried after every bin, not
		// preferred as if its room were unbounded.
		if score, in := s.fitScore(x, refs, inv, bestFit); in && score > bestScore {
			bestVal, bestScore, found = x, score, true
		}
		if x >= s.hi[v] {
			break
		}
	}
	return bestVal, found
}

// initFitIndexes gives every item whose relevant resources share their
// bin values, with enough bins, the fitIndex of that group of resources.
func (s *solver) initFitIndexes() {
	h := &s.h
	h.fit = make([]*fitIndex, len(s.lo))
	groups := map[string]*fitIndex{}
	var key []byte
	var props []*binPackProp
	id := map[*binPackProp]int{}
	for v, refs := range h.items {
		if len(refs) == 0 {
			continue
		}
		key, props = key[:0], props[:0]
		for _, r := range refs {
			if h.relevant[r.p] && len(props) < 8 {
				if _, ok := id[r.p]; !ok {
					id[r.p] = len(id)
				}
				key = binary.AppendUvarint(key, uint64(id[r.p])) // fmt per item: 2 ms on 10,000 nodes
				props = append(props, r.p)
			}
		}
		if len(props) == 0 {
			continue
		}
		ix, seen := groups[string(key)]
		if !seen {
			if sameBins(props) && len(props[0].bins) >= fitIndexMinBins {
				ix = s.newFitIndex(append([]*binPackProp(nil), props...))
			}
			groups[string(key)] = ix
		}
		h.fit[v] = ix
	}
}

// sameBins reports whether the constraints have the same bin values, each
// listed once.
func sameBins(props []*binPackProp) bool {
	a := slices.Sorted(slices.Values(props[0].bins))
	for i := 1; i < len(a); i++ {
		if a[i] == a[i-1] {
			return false
		}
	}
	for _, p := range props[1:] {
		if !slices.Equal(a, slices.Sorted(slices.Values(p.bins))) {
			return false
		}
	}
	return true
}

// initTiers orders the branching variables in tiers: the decision
// strategy (or the inferred decision variables: bin-packing items,
// all_different members, element indices), then the other user
// variables, then the defined ones. choose() only looks at a tier once
// every variable of the earlier tiers is fixed.
func (s *solver) initTiers() {
	m := s.m
	n := len(m.doms)
	tier := make([]int8, n)
	for v := range tier {
		switch {
		case m.origin[v] != originUser:
			tier[v] = -1
		case s.h.defined[v]:
			tier[v] = 2
		default:
			tier[v] = 1
		}
	}
	var first []int32
	seen := make([]bool, n)
	add := func(v int32) {
		if !seen[v] && m.origin[v] != originConstant {
			seen[v] = true
			first = append(first, v)
		}
	}
	if len(m.strategy) > 0 {
		for _, v := range m.strategy {
			add(v)
		}
	} else {
		for ci := range m.cons {
			c := &m.cons[ci]
			switch c.Kind {
			case KindBinPacking, KindAllDifferent:
				for _, x := range c.Vars {
					if m.origin[x.idx] == originUser && !s.h.defined[x.idx] {
						add(x.idx)
					}
				}
			case KindElement, KindVarElement:
				if m.origin[c.Index.idx] == originUser && !s.h.defined[c.Index.idx] {
					add(c.Index.idx)
				}
			}
		}
		sort.Slice(first, func(a, b int) bool { return first[a] < first[b] })
	}
	s.branchOn = s.branchOn[:0]
	s.tierEnd = s.tierEnd[:0]
	s.branchOn = append(s.branchOn, first...)
	s.decisionVars = first
	if len(first) > 0 {
		s.tierEnd = append(s.tierEnd, len(s.branchOn))
	}
	for t := int8(1); t <= 2; t++ {
		for v := range tier {
			if tier[v] == t && !seen[v] {
				s.branchOn = append(s.branchOn, int32(v))
			}
		}
		if len(s.branchOn) > 0 && (len(s.tierEnd) == 0 || s.tierEnd[len(s.tierEnd)-1] < len(s.branchOn)) {
			s.tierEnd = append(s.tierEnd, len(s.branchOn))
		}
	}
	if len(s.decisionVars) == 0 {
		s.decisionVars = s.branchOn
	}
	s.rLive = s.newRev((len(s.branchOn) + 63) / 64)
	live := s.revs[s.rLive]
	for k := range s.branchOn {
		live[k>>6] |= int64(1) << (k & 63)
	}
}
