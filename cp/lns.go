package cp

import "sort"

// Large-neighbourhood search (Shaw 1998; CP-SAT's LNS portfolio): keep
// most decision variables at their incumbent values, free a
// neighbourhood, and search it with a small conflict budget for a
// strictly better solution. Neighbourhoods rotate between
//
//   - critical bins: the items of the bins with the least remaining
//     capacity in the incumbent (those that determine a max-min or
//     min-max objective), plus the items of random other bins;
//   - random bins: the items sharing the incumbent value of random
//     decision variables (e.g. all pods on a few nodes);
//   - random decision variables.
//
// The neighbourhood size adapts: it grows when a neighbourhood is
// exhausted quickly and shrinks when the budget runs out.

type lnsState struct {
	frac  float64
	round int64
	free  []bool
	vals  map[int64]bool
	binsK []binRank
}

type binRank struct {
	p   *binPackProp
	j   int
	rem float64
}

// lnsRound runs one neighbourhood. It returns true only if the
// neighbourhood was the whole problem and was exhausted, i.e. the
// incumbent is proven optimal.
func (s *solver) lnsRound(c *searchCtl, st *lnsState, base int) bool {
	c.lnsRounds++
	st.round++
	dv := s.decisionVars
	n := len(dv)
	if n == 0 {
		return false
	}
	if st.free == nil {
		st.free = make([]bool, len(s.lo))
		st.vals = map[int64]bool{}
	}
	clear(st.free)
	k := int(st.frac*float64(n)) + 1
	k = min(max(k, 2), n)
	cnt := 0
	freeVal := func(x int64) {
		for _, w := range dv {
			if !st.free[w] && c.best[w] == x {
				st.free[w] = true
				cnt++
			}
		}
	}
	hasBins := len(s.h.scale) > 0
	switch kind := st.round % 3; {
	case kind == 0 && hasBins:
		// Critical bins first, then random ones.
		s.rankBins(c, st)
		crit := min(len(st.binsK), 1+c.rng.IntN(3))
		for _, b := range st.binsK[:crit] {
			freeVal(b.p.bins[b.j])
		}
		for _, j := range c.rng.Perm(n) {
			if cnt >= k {
				break
			}
			if v := dv[j]; !st.free[v] {
				freeVal(c.best[v])
			}
		}
	case kind == 1 || (kind == 0 && !hasBins):
		// Value-related: free every variable sharing an incumbent value
		// with a random seed variable, until k.
		for _, j := range c.rng.Perm(n) {
			if cnt >= k {
				break
			}
			if v := dv[j]; !st.free[v] && !s.isBool[v] {
				freeVal(c.best[v])
			}
		}
	default:
		for _, j := range c.rng.Perm(n)[:k] {
			if !st.free[dv[j]] {
				st.free[dv[j]] = true
				cnt++
			}
		}
	}
	s.pushLevel()
	s.decisions = append(s.decisions, decision{v: -1})
	fixedAny := false
	for _, v := range dv {
		if !st.free[v] && s.contains(v, c.best[v]) {
			fixedAny = true
			if !s.fix(v, c.best[v]) {
				s.failed = true
				break
			}
		}
	}
	savedInc, savedFit := c.useIncumbent, c.bestFit
	c.useIncumbent = false
	c.bestFit = c.rng.IntN(2) == 0
	before := c.bestObj
	res := dfsExhausted
	if s.propagate() {
		res = s.dfs(c, base+1, int64(50+2*cnt))
	}
	c.useIncumbent, c.bestFit = savedInc, savedFit
	s.backtrackTo(base)
	if c.bestObj < before {
		c.lnsImpr++
	}
	switch res {
	case dfsExhausted:
		st.frac = min(st.frac*1.1, 1)
		return !fixedAny
	case dfsLimit:
		st.frac = max(st.frac/1.1, 0.01)
	}
	return false
}

// rankBins sorts the bins of the objective-relevant bin-packing
// constraints by the capacity left in the incumbent (least first).
func (s *solver) rankBins(c *searchCtl, st *lnsState) {
	st.binsK = st.binsK[:0]
	for _, pi := range s.props {
		p, ok := pi.p.(*binPackProp)
		if !ok || !s.h.relevant[p] {
			continue
		}
		sc := s.h.scale[p]
		for j, l := range p.loads {
			used := false
			for _, v := range p.items {
				if c.best[v] == p.bins[j] {
					used = true
					break
				}
			}
			if !used {
				continue
			}
			st.binsK = append(st.binsK, binRank{p, j, float64(s.m.doms[l].Max()-c.best[l]) / sc})
		}
	}
	sort.SliceStable(st.binsK, func(a, b int) bool { return st.binsK[a].rem < st.binsK[b].rem })
}
