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
		// Every bin at the least remaining capacity must change for a
		// max-min (or min-max) objective to improve: free them all, and a
		// few of the next ones.
		s.rankBins(c, st)
		crit := 0
		for crit < len(st.binsK) && st.binsK[crit].rem <= st.binsK[0].rem {
			crit++
		}
		crit = min(len(st.binsK), crit+c.rng.IntN(3))
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
			st.binsK = append(st.binsK, binRank{p, j, float64(s.rootHi[l] - c.best[l])})
		}
	}
	sort.SliceStable(st.binsK, func(a, b int) bool { return st.binsK[a].rem < st.binsK[b].rem })
}

// notePartial records the current node's assignment of the decision
// variables if it fixes more of them than any node of this round.
func (s *solver) notePartial(c *searchCtl) {
	n := 0
	for _, v := range s.decisionVars {
		if s.lo[v] == s.hi[v] {
			n++
		}
	}
	if n <= c.roundCount {
		return
	}
	c.roundCount = n
	for k, v := range s.decisionVars {
		if s.lo[v] == s.hi[v] {
			c.roundBest[k] = s.lo[v]
		} else {
			c.roundBest[k] = partialUnset
		}
	}
}

// startPartial turns partial-assignment tracking on for a round.
func (s *solver) startPartial(c *searchCtl) {
	if c.partial == nil {
		c.partial = make([]int64, len(s.decisionVars))
		c.roundBest = make([]int64, len(s.decisionVars))
		for k := range c.partial {
			c.partial[k] = partialUnset
		}
	}
	c.roundCount = -1
}

// endPartial keeps the round's deepest partial assignment if it is at
// least as deep as the recorded one (sideways moves diversify).
func (s *solver) endPartial(c *searchCtl) {
	if c.roundCount >= c.partialCount {
		copy(c.partial, c.roundBest)
		c.partialCount = c.roundCount
	}
}

// partialRound is LNS before the first solution (for tight packings where
// no dive succeeds): keep most of the deepest partial assignment, free its
// unassigned decision variables plus the variables sharing values (bins)
// with a few random ones, and search that neighbourhood with a small
// conflict budget. A complete assignment found there is a solution.
func (s *solver) partialRound(c *searchCtl, st *lnsState, base int) dfsResult {
	c.lnsRounds++
	dv := s.decisionVars
	n := len(dv)
	if st.free == nil {
		st.free = make([]bool, len(s.lo))
	}
	clear(st.free)
	cnt := 0
	for k, v := range dv {
		if c.partial[k] == partialUnset {
			st.free[v] = true
			cnt++
		}
	}
	k := min(cnt+max(int(st.frac*float64(n-cnt))+1, 2), n)
	for _, j := range c.rng.Perm(n) {
		if cnt >= k {
			break
		}
		x := c.partial[j]
		if st.free[dv[j]] {
			continue
		}
		for kk, w := range dv {
			if !st.free[w] && c.partial[kk] == x {
				st.free[w] = true
				cnt++
			}
		}
	}
	s.pushLevel()
	s.decisions = append(s.decisions, decision{v: -1})
	for kk, v := range dv {
		if !st.free[v] && s.contains(v, c.partial[kk]) {
			if !s.fix(v, c.partial[kk]) {
				s.failed = true
				break
			}
		}
	}
	s.startPartial(c)
	savedFit := c.bestFit
	c.bestFit = c.rng.IntN(4) > 0
	res := dfsExhausted
	if s.propagate() {
		res = s.dfs(c, base+1, int64(50+2*cnt))
	}
	c.bestFit = savedFit
	s.endPartial(c)
	if c.best == nil {
		s.backtrackTo(base)
	}
	switch res {
	case dfsExhausted:
		st.frac = min(st.frac*1.1, 1)
	case dfsLimit:
		st.frac = max(st.frac/1.1, 0.02)
	}
	return res
}
