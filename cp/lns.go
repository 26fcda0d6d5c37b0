package cp

import (
	"slices"
	"sort"
)

// Large-neighbourhood search (Shaw 1998; CP-SAT's LNS portfolio): keep
// most decision variables at their incumbent values, free a
// neighbourhood, and search it with a small conflict budget for a
// strictly better solution. Neighbourhoods rotate between
//
//   - critical bins: when the objective's min/max constraints are
//     linked to bin loads (a utilisation range, a min spare capacity),
//     a random sample of the items of the bins at both ends of each
//     min/max in the incumbent (those that must change for it to
//     improve, and those that can take what leaves them); otherwise the
//     items of the bins with the least remaining capacity. Either way
//     plus one to three variables that differ from their hint (under a
//     budget of changes, at most K migrations, something must be undone
//     for something new to move) and random other bins up to the size.
//     These rounds take half of the rotation when the objective is
//     linked to bins: they are the ones that improve;
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

	linked bool
	crit   []critLink
	order  []int
	cand   []int32
	moved  []int32

	// maxMin is the structure of a max-min objective, for bottleneck
	// rounds (lns_maxmin.go); nil if the objective is not one.
	maxMin     *maxMinState
	maxMinDone bool

	pos     map[int32]int // decision variable -> position (partial LNS)
	binVals []int64
	bps     []*binPackProp // objective-relevant bin-packing constraints
	rooms   [][]int64      // per bps, per bin: room left in the partial assignment
}

type binRank struct {
	p   *binPackProp
	j   int
	rem float64
}

// critLink ties the arguments of a min or max constraint to the bins
// whose loads determine them (e.g. a host's utilisation, a percentage
// of its load).
type critLink struct {
	mm    *minMaxProp
	loads [][]int64 // per argument: the bin values linked to it
}

// linkObjectiveBins finds, for every min/max constraint near the
// objective, the bins of the objective-relevant bin-packing constraints
// whose loads are linked to each argument through at most three small
// constraints (a load scaled into a percentage, a presence condition).
func (s *solver) linkObjectiveBins(st *lnsState) {
	st.linked = true
	loadOf := map[int32][]int64{}
	for _, pi := range s.props {
		p, ok := pi.p.(*binPackProp)
		if !ok || !s.h.relevant[p] {
			continue
		}
		for j, l := range p.loads {
			loadOf[l] = append(loadOf[l], p.bins[j])
		}
	}
	if len(loadOf) == 0 {
		return
	}
	varProps := make([][]int32, len(s.lo))
	for i, pi := range s.props {
		switch pi.p.(type) {
		case *binPackProp, *minMaxProp:
			continue
		}
		if len(pi.vars) > 8 {
			continue
		}
		for _, v := range pi.vars {
			varProps[v] = append(varProps[v], int32(i))
		}
	}
	if s.m.obj == nil {
		return
	}
	near := s.m.objectiveNeighbourhood(2)
	seen := map[int32]bool{}
	for _, pi := range s.props {
		mm, ok := pi.p.(*minMaxProp)
		if !ok || int(mm.target) >= len(near) || !near[mm.target] {
			continue // not the objective's (a hard min/max constraint)
		}
		cl := critLink{mm: mm, loads: make([][]int64, len(mm.args))}
		any := false
		for k, a := range mm.args {
			clear(seen)
			seen[a] = true
			frontier := []int32{a}
			for d := 0; d < 3 && len(frontier) > 0; d++ {
				var next []int32
				for _, v := range frontier {
					if bs, ok := loadOf[v]; ok {
						cl.loads[k] = append(cl.loads[k], bs...)
						continue
					}
					for _, pj := range varProps[v] {
						for _, w := range s.props[pj].vars {
							if !seen[w] {
								seen[w] = true
								next = append(next, w)
							}
						}
					}
				}
				frontier = next
			}
			for _, v := range frontier {
				cl.loads[k] = append(cl.loads[k], loadOf[v]...)
			}
			any = any || len(cl.loads[k]) > 0
		}
		if any {
			st.crit = append(st.crit, cl)
		}
	}
}

// critBins calls visit with the bins linked to the arguments at the
// extreme of each min/max constraint in the incumbent (they must change
// for the objective to improve) and those of one or two arguments at the
// other end (where what leaves the extreme bins can go).
func (s *solver) critBins(c *searchCtl, st *lnsState, visit func(int64)) {
	for _, cl := range st.crit {
		args := cl.mm.args
		t := c.best[cl.mm.target]
		st.order = st.order[:0]
		for k, a := range args {
			if c.best[a] == t {
				for _, b := range cl.loads[k] {
					visit(b)
				}
			}
			st.order = append(st.order, k)
		}
		// The other end: farthest from the target first.
		sort.SliceStable(st.order, func(x, y int) bool {
			dx, dy := c.best[args[st.order[x]]]-t, c.best[args[st.order[y]]]-t
			return max(dx, -dx) > max(dy, -dy)
		})
		for _, k := range st.order[:min(len(st.order), 1+c.rng.IntN(2))] {
			for _, b := range cl.loads[k] {
				visit(b)
			}
		}
	}
}

// freeMoved frees one to three random decision variables whose incumbent
// value differs from their hint. When a budget limits how many may
// differ (at most K migrations), the incumbent usually spends all of it:
// a neighbourhood can only move something new if it may also undo an
// earlier change. Only a few are freed: with the whole budget free, the
// search must choose which of many variables change, and rarely
// finishes.
func (s *solver) freeMoved(c *searchCtl, st *lnsState, cnt *int) {
	st.moved = st.moved[:0]
	for _, v := range s.decisionVars {
		if !st.free[v] && c.hasHint[v] && c.best[v] != c.hint[v] {
			st.moved = append(st.moved, v)
		}
	}
	if len(st.moved) == 0 {
		return
	}
	for range 1 + c.rng.IntN(3) {
		v := st.moved[c.rng.IntN(len(st.moved))]
		if !st.free[v] {
			st.free[v] = true
			*cnt++
		}
	}
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
	kind := st.round % 3
	if hasBins && !st.linked {
		s.linkObjectiveBins(st)
	}
	if hasBins && !st.maxMinDone {
		s.initMaxMin(st)
	}
	if st.maxMin != nil && st.round%4 != 3 && !maxMinOff && s.maxMinRound(c, st, base) {
		return false
	}
	if len(st.crit) > 0 && st.round%4 == 3 {
		// Bins linked to a min/max objective: half of the rounds are
		// critical ones (they improve most often).
		kind = 0
	}
	switch {
	case kind == 0 && hasBins:
		if len(st.crit) > 0 {
			// A random sample of the items of the bins at both ends of
			// the objective's min/max constraints, plus a few of the
			// variables that differ from their hint.
			st.cand = st.cand[:0]
			s.critBins(c, st, func(x int64) {
				for _, w := range dv {
					if !st.free[w] && c.best[w] == x {
						st.free[w] = true // dedup; cleared below
						st.cand = append(st.cand, w)
					}
				}
			})
			for _, w := range st.cand {
				st.free[w] = false
			}
			s.freeMoved(c, st, &cnt)
			c.rng.Shuffle(len(st.cand), func(i, j int) { st.cand[i], st.cand[j] = st.cand[j], st.cand[i] })
			for _, v := range st.cand {
				if cnt >= k {
					break
				}
				if !st.free[v] {
					st.free[v] = true
					cnt++
				}
			}
		} else {
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
			s.freeMoved(c, st, &cnt)
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
	// Count this round's own solutions, not an incumbent another worker
	// shared meanwhile (portfolio).
	before := c.solutions
	res := dfsExhausted
	if s.propagate() {
		res = s.dfs(c, base+1, int64(50+2*cnt))
	}
	c.useIncumbent, c.bestFit = savedInc, savedFit
	s.backtrackTo(base)
	if c.solutions > before {
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
	// One pass into a scratch buffer, kept if deeper: during a plunge
	// every node is deeper, and counting then copying read every
	// decision variable twice per node (5,000 items: a tenth of the
	// search to a first solution).
	buf := c.roundNext
	n := 0
	for k, v := range s.decisionVars {
		x := int64(partialUnset)
		if s.lo[v] == s.hi[v] {
			x = s.lo[v]
			n++
		}
		buf[k] = x
	}
	if n > c.roundCount {
		c.roundCount = n
		c.roundBest, c.roundNext = buf, c.roundBest
	}
}

// startPartial turns partial-assignment tracking on for a round.
func (s *solver) startPartial(c *searchCtl) {
	if c.partial == nil {
		c.partial = make([]int64, len(s.decisionVars))
		c.roundBest = make([]int64, len(s.decisionVars))
		c.roundNext = make([]int64, len(s.decisionVars))
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
	st.round++
	if len(s.h.scale) > 0 && cnt > 0 && st.round%2 == 0 && !lnsWasteOff {
		// Half of the rounds free bins that waste much room in the
		// partial assignment: the unplaced items need room that a
		// tighter packing of those bins leaves. The ranking is a bias,
		// not an order: each bin is taken with probability 1/3 (taking
		// the most wasteful ones first, or with probability 2/3, solved
		// far fewer tight packings: at 98.5% load, 2 and 10 of 20 within
		// 100,000 branches against 17).
		for _, b := range s.wastefulBins(c, st) {
			if cnt >= k {
				break
			}
			if c.rng.IntN(3) != 0 {
				continue
			}
			for kk, w := range dv {
				if !st.free[w] && c.partial[kk] == b {
					st.free[w] = true
					cnt++
				}
			}
		}
	}
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

// maxMinOff disables the bottleneck rounds (tests, measurements).
var maxMinOff = false

// lnsWasteOff disables the waste-guided partial neighbourhoods (tests).
var lnsWasteOff = false

// partialRooms computes, for every objective-relevant bin-packing
// constraint, the room each bin has left in the partial assignment
// (capacity after root propagation minus the load of the placed items),
// and lists the bin values holding a placed item in st.binVals.
func (s *solver) partialRooms(c *searchCtl, st *lnsState) {
	if st.pos == nil {
		st.pos = make(map[int32]int, len(s.decisionVars))
		for k, v := range s.decisionVars {
			st.pos[v] = k
		}
		for _, pi := range s.props {
			if p, ok := pi.p.(*binPackProp); ok && s.h.relevant[p] {
				st.bps = append(st.bps, p)
				st.rooms = append(st.rooms, make([]int64, len(p.bins)))
			}
		}
	}
	used := map[int64]bool{}
	for r, p := range st.bps {
		room := st.rooms[r]
		for j, l := range p.loads {
			room[j] = s.rootHi[l]
		}
		for i, v := range p.items {
			k, ok := st.pos[v]
			if !ok || c.partial[k] == partialUnset {
				continue
			}
			if j, ok := p.bin(c.partial[k]); ok {
				room[j] -= p.sizes[i]
				used[p.bins[j]] = true
			}
		}
	}
	st.binVals = st.binVals[:0]
	for b := range used {
		st.binVals = append(st.binVals, b)
	}
	slices.Sort(st.binVals)
}

// wastefulBins returns the bin values of the objective-relevant
// bin-packing constraints that hold an item in the partial assignment,
// by decreasing room left (normalised and summed over the resources).
func (s *solver) wastefulBins(c *searchCtl, st *lnsState) []int64 {
	s.partialRooms(c, st)
	score := map[int64]float64{}
	for r, p := range st.bps {
		inv := 1 / s.h.scale[p]
		for j, x := range st.rooms[r] {
			score[p.bins[j]] += float64(x) * inv
		}
	}
	sort.SliceStable(st.binVals, func(a, b int) bool { return score[st.binVals[a]] > score[st.binVals[b]] })
	return st.binVals
}
