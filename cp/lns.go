package cp

// Large-neighbourhood search (Shaw 1998; CP-SAT's LNS portfolio): keep
// most user variables at their incumbent values, free a neighbourhood, and
// search it with a small conflict budget for a strictly better solution.
// Neighbourhood size adapts: it grows when a neighbourhood is exhausted
// quickly and shrinks when the budget runs out.

type lnsState struct {
	frac  float64
	round int64
	free  []bool
}

// lnsRound runs one neighbourhood. It returns true only if the
// neighbourhood was the whole problem and was exhausted, i.e. the
// incumbent is proven optimal.
func (s *solver) lnsRound(c *searchCtl, st *lnsState, base int) bool {
	c.lnsRounds++
	st.round++
	n := len(s.branchOn)
	if n == 0 {
		return false
	}
	if st.free == nil {
		st.free = make([]bool, len(s.lo))
	}
	clear(st.free)
	k := int(st.frac*float64(n)) + 1
	k = min(max(k, 2), n)
	if st.round%2 == 0 {
		// Random variables.
		for _, j := range c.rng.Perm(n)[:k] {
			st.free[s.branchOn[j]] = true
		}
	} else {
		// Value-related: free every variable sharing an incumbent value with
		// a random seed variable (e.g. all pods on a few nodes), until k.
		vals := map[int64]bool{}
		perm := c.rng.Perm(n)
		cnt := 0
		for _, j := range perm {
			if cnt >= k {
				break
			}
			v := s.branchOn[j]
			if s.isBool[v] {
				continue
			}
			vals[c.best[v]] = true
			for _, w := range s.branchOn {
				if !st.free[w] && !s.isBool[w] && vals[c.best[w]] {
					st.free[w] = true
					cnt++
				}
			}
			clear(vals)
		}
		for _, j := range perm {
			if cnt >= k {
				break
			}
			if v := s.branchOn[j]; !st.free[v] {
				st.free[v] = true
				cnt++
			}
		}
	}
	s.pushLevel()
	s.decisions = append(s.decisions, decision{v: -1})
	fixedAny := false
	for _, v := range s.branchOn {
		if !st.free[v] && s.contains(v, c.best[v]) {
			fixedAny = true
			if !s.fix(v, c.best[v]) {
				s.failed = true
				break
			}
		}
	}
	saved := c.useIncumbent
	c.useIncumbent = false
	before := c.bestObj
	res := dfsExhausted
	if s.propagate() {
		res = s.dfs(c, base+1, 200)
	}
	c.useIncumbent = saved
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
