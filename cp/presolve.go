package cp

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"time"
)

// itemGroup is a set of bin-packing constraints over the same items and
// bins (one per resource).
type itemGroup struct {
	items []int32
	bins  []int64
	res   []*binPackProp
}

func (s *solver) itemGroups() []*itemGroup {
	var groups []*itemGroup
	for _, pi := range s.props {
		p, ok := pi.p.(*binPackProp)
		if !ok {
			continue
		}
		var g *itemGroup
		for _, h := range groups {
			if slices.Equal(h.items, p.items) && slices.Equal(h.bins, p.bins) {
				g = h
			}
		}
		if g == nil {
			g = &itemGroup{items: p.items, bins: p.bins}
			groups = append(groups, g)
		}
		g.res = append(g.res, p)
	}
	return groups
}

// explicitConflicts returns the pairs of variables that the model
// requires to differ unconditionally: x - y != 0 and members of small
// all_different constraints (keyed lower index first).
func (s *solver) explicitConflicts() map[[2]int32]bool {
	if s.conflictPairs != nil {
		return s.conflictPairs
	}
	pairs := map[[2]int32]bool{}
	add := func(a, b int32) {
		if a > b {
			a, b = b, a
		}
		if a != b {
			pairs[[2]int32{a, b}] = true
		}
	}
	for i := range s.m.cons {
		c := &s.m.cons[i]
		if len(c.Enforcement) > 0 {
			continue
		}
		switch c.Kind {
		case KindNotEqual:
			if len(c.Vars) == 2 && c.Lo == 0 && c.Coeffs[0] == -c.Coeffs[1] && c.Coeffs[0] != 0 {
				add(c.Vars[0].idx, c.Vars[1].idx)
			}
		case KindAllDifferent:
			if len(c.Vars) <= 64 && len(c.Values) == 0 { // members may share an exempt value
				for a := range c.Vars {
					for b := a + 1; b < len(c.Vars); b++ {
						add(c.Vars[a].idx, c.Vars[b].idx)
					}
				}
			}
		}
	}
	s.conflictPairs = pairs
	return pairs
}

// groupCliques finds, per group, a large set of items that pairwise
// cannot share a bin under the current load bounds: their sizes exceed
// the largest capacity in some resource, or the model requires them to
// differ. It uses randomised greedy restarts. Only items whose domains
// lie within the bins qualify. Cliques of fewer than three items are
// omitted.
func (s *solver) groupCliques(rng *rand.Rand) [][]int32 {
	var out [][]int32
	pairs := s.explicitConflicts()
	for _, g := range s.itemGroups() {
		binSet := DomainFromValues(g.bins...)
		caps := make([]int64, len(g.res))
		for r, p := range g.res {
			for _, l := range p.loads {
				caps[r] = max(caps[r], s.hi[l])
			}
		}
		edge := map[int32]bool{}
		for k := range pairs {
			edge[k[0]], edge[k[1]] = true, true
		}
		// Candidates: items larger than half the capacity in some
		// resource (a clique holds at most one other item), and items
		// the model separates explicitly.
		var big []int
		for i, v := range g.items {
			if s.ctl != nil && s.rootStop() {
				return nil
			}
			cand := edge[v]
			for r, p := range g.res {
				cand = cand || 2*p.sizes[i] > caps[r]
			}
			if cand && binSet.containsDomainOf(s, v) {
				big = append(big, i)
			}
		}
		if len(big) < 3 || len(big) > 4000 {
			continue
		}
		conflict := func(a, b int) bool {
			for r, p := range g.res {
				if p.sizes[a]+p.sizes[b] > caps[r] {
					return true
				}
			}
			x, y := g.items[a], g.items[b]
			if x > y {
				x, y = y, x
			}
			return pairs[[2]int32{x, y}]
		}
		weight := make([]float64, len(g.items))
		for _, i := range big {
			for r, p := range g.res {
				weight[i] += float64(p.sizes[i]) / float64(max(caps[r], 1))
			}
		}
		// Greedy restarts: by decreasing weight, each of the heaviest
		// items first, then with noise; fewer on large groups.
		tries := min(40, max(2, 4_000_000/(len(big)*len(big))))
		order := append([]int(nil), big...)
		sort.SliceStable(order, func(a, b int) bool { return weight[order[a]] > weight[order[b]] })
		var best []int
		cl := make([]int, 0, len(big))
		trial := make([]int, len(order))
		noise := make([]float64, len(g.items))
		for try := 0; try < tries; try++ {
			if s.ctl != nil && s.rootStop() {
				return nil
			}
			copy(trial, order)
			switch {
			case try < tries/2 && try < len(order):
				// Seed with the try-th heaviest item.
				trial[0], trial[try] = trial[try], trial[0]
			case try > 0:
				for _, i := range trial {
					noise[i] = weight[i] * (0.8 + 0.4*rng.Float64())
				}
				sort.SliceStable(trial, func(a, b int) bool { return noise[trial[a]] > noise[trial[b]] })
			}
			cl = cl[:0]
			for n, i := range trial {
				if n&255 == 255 && s.ctl != nil && s.rootStop() {
					return nil
				}
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
				best = append(best[:0], cl...)
			}
		}
		if len(best) < 3 {
			continue
		}
		vars := make([]int32, len(best))
		for k, i := range best {
			vars[k] = g.items[i]
		}
		out = append(out, vars)
	}
	return out
}

// addImpliedCliques posts implied all_different constraints over items
// that pairwise cannot share a bin (see groupCliques). A clique of such
// items needs distinct bins, which the all_different propagator (value
// removal, pigeonhole) exploits: e.g. 51 pairwise-conflicting items
// cannot go into 50 bins. It returns false if the model is found
// infeasible.
func (s *solver) addImpliedCliques(rng *rand.Rand) bool {
	for _, vars := range s.groupCliques(rng) {
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

// refutesObjective reports whether the minimised objective cannot be
// at most v at the current level: propagation under objective <= v
// fails, or items that pairwise cannot share a bin under the capacities
// that bound leaves are more than the bins they may use. The state is
// restored before returning. If the probe was interrupted (s.aborted),
// the answer means nothing.
func (s *solver) refutesObjective(rng *rand.Rand, v int64) bool {
	lvl := s.level()
	defer s.backtrackTo(lvl)
	s.pushLevel()
	s.decisions = append(s.decisions, decision{v: -1})
	if !s.setMax(s.objVar, v) || !s.propagate() {
		return true
	}
	cliques := s.groupCliques(rng)
	if s.aborted {
		return false
	}
	for _, vars := range cliques {
		if !(&allDiffProp{vars: vars}).propagate(s) || !s.propagate() {
			return true
		}
	}
	return false
}

// probeObjectiveBound raises the objective's lower bound (minimised
// internally) at the current level by bisection on refutesObjective: the
// smallest value not refuted is a valid bound, and Response.Bound
// reports it. Bin-packing models only (the refutation is built on their
// cliques); at most maxProbes probes, and at most budget of time (0: no
// limit but the solve's). It returns false if the model is infeasible;
// an interrupted probe keeps the bound of the probes it completed (if
// the solve must stop, ctl.stopped is set).
//
// The probe is useless to a caller that stops at the first solution
// (Params.StopAfterFirstSolution): Solve skips it then.
func (s *solver) probeObjectiveBound(c *searchCtl, maxProbes int, budget time.Duration) bool {
	if !s.hasObj || len(s.h.scale) == 0 {
		return true
	}
	// A probe may remove most (item, bin) pairs: skip very large packings.
	var pairs int
	for p := range s.h.scale {
		pairs += len(p.items) * len(p.bins)
	}
	if pairs > probePairLimit {
		return true
	}
	lo, hi := s.lo[s.objVar], s.hi[s.objVar]
	if lo >= hi {
		return true
	}
	prevCtl, prevSoft := s.ctl, s.softDeadline
	s.ctl = c
	if budget > 0 {
		s.softDeadline = time.Now().Add(budget)
	}
	// Invariant: objective <= lo-1 is refuted (by the domain).
	for probes := 0; lo < hi && probes < maxProbes && !s.shouldStop(c); probes++ {
		mid := lo + (hi-lo)/2
		refuted := s.refutesObjective(c.rng, mid)
		if s.aborted {
			break // this probe's answer is void
		}
		if refuted {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	s.ctl, s.softDeadline = prevCtl, prevSoft
	if s.aborted {
		if c.stopped {
			return true // the caller sees ctl.stopped
		}
		s.aborted = false // only the probe's own budget ran out
	}
	if lo == s.lo[s.objVar] {
		return true
	}
	return s.setMin(s.objVar, lo) && s.propagate()
}

// probePairLimit bounds Σ items x bins over the bin-packing constraints
// for probeObjectiveBound.
const probePairLimit = 4_000_000

// containsDomainOf reports whether every value of v's current domain is
// in d.
// It looks at d's gaps, not at v's values (an item over 10,000 bins
// cost 10,000 lookups, 0.12 s per call at 5,000 items).
func (d Domain) containsDomainOf(s *solver, v int32) bool {
	lo, hi := s.lo[v], s.hi[v]
	if d.IsEmpty() || lo < d.Min() || hi > d.Max() {
		return false
	}
	for k := 0; k+1 < len(d.ivs); k++ {
		gl, gh := d.ivs[k].hi+1, d.ivs[k+1].lo-1 // a gap of d
		if gh < lo || gl > hi {
			continue
		}
		if x, ok := s.next(v, gl); ok && x <= gh {
			return false
		}
	}
	return true
}
