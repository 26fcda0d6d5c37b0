package cp

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
	capOf   map[*binPackProp][]int64
}

func (s *solver) initHeuristics() {
	h := &s.h
	n := len(s.lo)
	h.defined = make([]bool, n)
	h.items = make([][]itemRef, n)
	h.prio = make([]float64, n)
	h.capOf = map[*binPackProp][]int64{}
	for _, pi := range s.props {
		switch p := pi.p.(type) {
		case *binPackProp:
			caps := make([]int64, len(p.loads))
			var maxCap int64 = 1
			for j, l := range p.loads {
				caps[j] = s.hi[l]
				h.defined[l] = true
				maxCap = max(maxCap, caps[j])
			}
			h.capOf[p] = caps
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
}

// worstFit returns the value of item variable v whose bin keeps the most
// remaining capacity, normalised per resource, after placing v.
//
// Before the first solution it uses best fit instead (least remaining
// capacity), which packs large items together and finds a feasible
// packing far more often on tight instances.
func (s *solver) worstFit(v int32, best bool) (int64, bool) {
	refs := s.h.items[v]
	bestVal, found := int64(0), false
	bestScore := -1e300
	for x, ok := s.lo[v], true; ok; x, ok = s.next(v, x+1) {
		score := 1e300
		for _, r := range refs {
			j, in := r.p.bin(x)
			if !in {
				continue
			}
			c := s.h.capOf[r.p][j]
			rem := float64(c-s.lo[r.p.loads[j]]-r.p.sizes[r.i]) / float64(max(c, 1))
			score = min(score, rem)
		}
		if best {
			score = -score
		}
		if score > bestScore {
			bestVal, bestScore, found = x, score, true
		}
		if x >= s.hi[v] {
			break
		}
	}
	return bestVal, found
}
