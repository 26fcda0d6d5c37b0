package cp

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
)

// addImpliedCliques posts implied all_different constraints over items
// that pairwise cannot share a bin: for bin-packing constraints over the
// same items and bins (one per resource), two items conflict if their
// sizes in some resource exceed the largest capacity. A clique of such
// items needs distinct bins, which the all_different propagator (value
// removal, pigeonhole) exploits: e.g. 51 pairwise-conflicting items
// cannot go into 50 bins. Only items whose domains lie within the bins
// qualify. It returns false if the model is found infeasible.
func (s *solver) addImpliedCliques(rng *rand.Rand) bool {
	type group struct {
		items []int32
		bins  []int64
		res   []*binPackProp
	}
	var groups []*group
	for _, pi := range s.props {
		p, ok := pi.p.(*binPackProp)
		if !ok {
			continue
		}
		var g *group
		for _, h := range groups {
			if slices.Equal(h.items, p.items) && slices.Equal(h.bins, p.bins) {
				g = h
			}
		}
		if g == nil {
			g = &group{items: p.items, bins: p.bins}
			groups = append(groups, g)
		}
		g.res = append(g.res, p)
	}
	for _, g := range groups {
		binSet := DomainFromValues(g.bins...)
		caps := make([]int64, len(g.res))
		for r, p := range g.res {
			for _, l := range p.loads {
				caps[r] = max(caps[r], s.hi[l])
			}
		}
		// Candidates: items larger than half the capacity in some
		// resource (a clique holds at most one other item).
		var big []int
		for i, v := range g.items {
			for r, p := range g.res {
				if 2*p.sizes[i] > caps[r] {
					if binSet.containsDomainOf(s, v) {
						big = append(big, i)
					}
					break
				}
			}
		}
		if len(big) < 2 || len(big) > 4000 {
			continue
		}
		conflict := func(a, b int) bool {
			for r, p := range g.res {
				if p.sizes[a]+p.sizes[b] > caps[r] {
					return true
				}
			}
			return false
		}
		weight := make([]float64, len(g.items))
		for _, i := range big {
			for r, p := range g.res {
				weight[i] += float64(p.sizes[i]) / float64(max(caps[r], 1))
			}
		}
		var best []int
		for try := 0; try < 20; try++ {
			order := append([]int(nil), big...)
			noise := make([]float64, len(g.items))
			for _, i := range order {
				noise[i] = weight[i]
				if try > 0 {
					noise[i] *= 0.8 + 0.4*rng.Float64()
				}
			}
			sort.SliceStable(order, func(a, b int) bool { return noise[order[a]] > noise[order[b]] })
			var cl []int
			for _, i := range order {
				ok := true
				for _, j := range cl {
					if !conflict(i, j) {
						ok = false
						break
					}
				}
				if ok {
					cl = append(cl, i)
				}
			}
			if len(cl) > len(best) {
				best = cl
			}
		}
		if len(best) < 3 {
			continue
		}
		vars := make([]int32, len(best))
		for k, i := range best {
			vars[k] = g.items[i]
		}
		sorted := slices.Clone(vars)
		slices.Sort(sorted)
		key := fmt.Sprint(sorted)
		if s.cliques == nil {
			s.cliques = map[string]bool{}
		}
		if s.cliques[key] {
			continue // already posted (e.g. under an earlier bound)
		}
		s.cliques[key] = true
		s.addProp(&allDiffProp{vars: vars}, vars, 0, true, -1)
		s.implied++
	}
	return true
}

// containsDomainOf reports whether every value of v's current domain is
// in d.
func (d Domain) containsDomainOf(s *solver, v int32) bool {
	for x, ok := s.lo[v], true; ok; x, ok = s.next(v, x+1) {
		if !d.Contains(x) {
			return false
		}
		if x >= s.hi[v] {
			break
		}
	}
	return true
}
