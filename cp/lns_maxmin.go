package cp

import "sort"

// Bottleneck neighbourhoods for max-min objectives. When the objective
// maximises a minimum over arguments linked to bins (the smallest spare
// capacity over the used bins and the resources), a strictly better
// solution must raise every argument at the minimum at once; with many
// bins at the bottleneck no small neighbourhood can, and LNS stalls. A
// bottleneck round asks for less: it frees the items of one or a few
// bottleneck bins and of some others, and looks for a solution in which
// every freed argument and every argument above the minimum is above it
// (arguments at the minimum that stay fixed may stay there). Such a
// solution has the same objective and fewer arguments at the minimum:
// it becomes the incumbent (a sideways move, lexicographically better),
// and once no argument is left at the minimum the objective has risen.
// This is leximin improvement, the way a person repairs a packing:
// empty the worst bin into its neighbours and repack them. Within a
// round, each solution raises the floor of the repacked arguments to
// above its own minimum (raiseFloor), so the round returns the best
// repacking its budget finds. The repacked items stay in the freed bins:
// the other bins keep their arguments, and each accepted solution is
// better in the leximin order. After plateauAfter fruitless rounds in a
// row, one round repacks three times as many bins with four times the
// budget and accepts them at the minimum (a plateau move): it leaves a
// configuration whose last bottleneck bin no neighbourhood can repair,
// which stalled seed 20 of the family at 8 for 130,000 branches.

// maxMinState is the structure of a max-min objective: the objective
// variable and the arguments of the min constraints that define it, each
// with the bin values whose loads it reads.
type maxMinState struct {
	obj  int32 // the maximised model variable (internal objective = -obj)
	args []int32
	bins [][]int64 // per argument
	// nb is the number of bins to free, adapted: more when a
	// neighbourhood is exhausted quickly, fewer when the budget runs out.
	nb      float64
	binSet  map[int64]bool
	cand    []int
	byValue []int
	stuck   int // rounds since the last one that found a solution
	roomy   []int64
	rounds  int64
}

// initMaxMin finds a max-min structure: the objective maximises one
// variable that is the target of an unconditional min constraint whose
// arguments (through nested unconditional min constraints) are linked to
// bins by linkObjectiveBins. It leaves st.maxMin nil otherwise.
func (s *solver) initMaxMin(st *lnsState) {
	st.maxMinDone = true
	obj := s.maxMinObjective()
	if obj < 0 || len(st.crit) == 0 {
		return
	}
	mins := map[int32]*minMaxProp{}
	for _, pi := range s.props {
		if mm, ok := pi.p.(*minMaxProp); ok && !mm.isMax && len(mm.enf) == 0 {
			mins[mm.target] = mm
		}
	}
	links := map[*minMaxProp]*critLink{}
	for i := range st.crit {
		links[st.crit[i].mm] = &st.crit[i]
	}
	mm := &maxMinState{obj: obj, nb: 8, binSet: map[int64]bool{}}
	var walk func(t int32, depth int) bool
	walk = func(t int32, depth int) bool {
		p := mins[t]
		if p == nil || depth > 4 {
			return false
		}
		cl := links[p]
		for k, a := range p.args {
			if _, nested := mins[a]; nested && a != t {
				if !walk(a, depth+1) {
					return false
				}
				continue
			}
			if cl == nil || len(cl.loads[k]) == 0 {
				return false // an argument not linked to any bin
			}
			mm.args = append(mm.args, a)
			mm.bins = append(mm.bins, cl.loads[k])
		}
		return true
	}
	if walk(obj, 0) && len(mm.args) > 1 {
		st.maxMin = mm
	}
}

// maxMinObjective returns the variable a max-min objective maximises:
// the objective is that one variable, the target of an unconditional min
// constraint; -1 otherwise. It is cheap: a placement model (a sum of
// soft constraints) is told apart before any linking.
func (s *solver) maxMinObjective() int32 {
	o := s.m.obj
	if o == nil || !o.Maximize || len(o.Expr.Vars) != 1 || o.Expr.Coeffs[0] <= 0 {
		return -1
	}
	obj := o.Expr.Vars[0].idx
	for _, pi := range s.props {
		if mm, ok := pi.p.(*minMaxProp); ok && !mm.isMax && len(mm.enf) == 0 && mm.target == obj {
			return obj
		}
	}
	return -1
}

// maxMinRound runs one bottleneck round (see above). It reports false
// when the incumbent has no argument at the minimum to work on.
func (s *solver) maxMinRound(c *searchCtl, st *lnsState, base int) bool {
	mm := st.maxMin
	v := c.best[mm.obj]
	mm.cand = mm.cand[:0]
	for k, a := range mm.args {
		if c.best[a] <= v {
			mm.cand = append(mm.cand, k)
		}
	}
	if len(mm.cand) == 0 {
		return false
	}
	mm.rounds++
	dv := s.decisionVars
	clear(mm.binSet)
	nb := max(2, int(mm.nb))
	plateau := mm.stuck >= plateauAfter
	if plateau {
		nb = min(3*nb, len(mm.args))
	}
	addArg := func(k int) {
		for _, b := range mm.bins[k] {
			mm.binSet[b] = true
		}
	}
	// One bottleneck argument, sometimes a second one.
	first := mm.cand[c.rng.IntN(len(mm.cand))]
	addArg(first)
	if len(mm.cand) > 1 && c.rng.IntN(2) == 0 {
		addArg(mm.cand[c.rng.IntN(len(mm.cand))])
	}
	// Then, for a random half of the other slots, bins with room to take
	// what leaves the bottleneck: the most room left in the resource the
	// bottleneck bin is tightest in (or, without one, the arguments
	// farthest above the minimum); then random bins.
	roomy := (nb - len(mm.binSet) + 1) / 2
	for _, b := range s.roomyBins(c, mm, mm.bins[first]) {
		if roomy <= 0 || len(mm.binSet) >= nb {
			break
		}
		if mm.binSet[b] || c.rng.IntN(2) == 0 {
			continue
		}
		mm.binSet[b] = true
		roomy--
	}
	for _, k := range c.rng.Perm(len(mm.args)) {
		if len(mm.binSet) >= nb {
			break
		}
		addArg(k)
	}
	// Free the items in those bins, to be repacked among them.
	clear(st.free)
	cnt := 0
	for _, w := range dv {
		if mm.binSet[c.best[w]] {
			st.free[w] = true
			cnt++
		}
	}
	s.pushLevel()
	s.decisions = append(s.decisions, decision{v: -1})
	for _, w := range dv {
		if s.failed {
			break
		}
		if !st.free[w] {
			if s.contains(w, c.best[w]) && !s.fix(w, c.best[w]) {
				s.failed = true
			}
			continue
		}
		for x, ok := s.lo[w], true; ok && !s.failed; x, ok = s.next(w, x+1) {
			if !mm.binSet[x] && !s.remove(w, x) {
				s.failed = true
			}
			if x >= s.hi[w] {
				break
			}
		}
	}
	// The freed bins' arguments must rise above the minimum, and then
	// as high as the budget allows (raiseFloor); the others keep their
	// values, as their bins keep their items.
	s.subArgs = s.subArgs[:0]
	for k, a := range mm.args {
		freed := true
		for _, b := range mm.bins[k] {
			freed = freed && mm.binSet[b]
		}
		if freed {
			s.subArgs = append(s.subArgs, a)
		}
	}
	s.subFloor = v + 1
	budget := int64(100 + 4*cnt)
	if plateau {
		// Many rounds in a row found nothing: jump on the plateau
		// instead, repacking three times as many bins at the minimum or
		// above it (the bottleneck bins move, and their neighbours
		// differ next time).
		s.subFloor = v
		mm.stuck = 0
		budget *= 4
	}
	savedInc, savedFit, savedUB := c.useIncumbent, c.bestFit, s.objUB
	c.useIncumbent = false
	c.bestFit = c.rng.IntN(2) == 0
	c.sideways, s.sideways = true, true
	s.enqueue(s.objProp)
	before := c.solutions + c.sideMoves
	res := dfsExhausted
	if s.propagate() {
		res = s.dfs(c, base+1, budget)
	}
	c.sideways, s.sideways = false, false
	c.useIncumbent, c.bestFit = savedInc, savedFit
	s.objUB = min(savedUB, c.bestObj-1)
	s.backtrackTo(base)
	mm.stuck++
	switch {
	case c.solutions+c.sideMoves > before:
		c.lnsImpr++
		if !plateau {
			mm.stuck = 0
		}
	case res == dfsExhausted:
		mm.nb = min(mm.nb*1.05, float64(len(mm.args)))
	case res == dfsLimit:
		mm.nb = max(mm.nb/1.05, 3)
	}
	return true
}

// roomyBins lists bin values by decreasing room in the incumbent: the
// capacity left, normalised, in the objective-relevant resource where the
// bins of the bottleneck argument have the least, or else the value of
// the bins' arguments.
func (s *solver) roomyBins(c *searchCtl, mm *maxMinState, bottleneck []int64) []int64 {
	var tight *binPackProp
	best := 0.0
	for _, pi := range s.props {
		p, ok := pi.p.(*binPackProp)
		if !ok || !s.h.relevant[p] {
			continue
		}
		for _, b := range bottleneck {
			if j, ok := p.bin(b); ok {
				if room := float64(s.rootHi[p.loads[j]]-c.best[p.loads[j]]) / s.h.scale[p]; tight == nil || room < best {
					tight, best = p, room
				}
			}
		}
	}
	mm.roomy = mm.roomy[:0]
	if tight != nil {
		for _, b := range tight.bins {
			mm.roomy = append(mm.roomy, b)
		}
		sort.SliceStable(mm.roomy, func(x, y int) bool {
			jx, _ := tight.bin(mm.roomy[x])
			jy, _ := tight.bin(mm.roomy[y])
			lx, ly := tight.loads[jx], tight.loads[jy]
			return s.rootHi[lx]-c.best[lx] > s.rootHi[ly]-c.best[ly]
		})
		return mm.roomy
	}
	mm.byValue = mm.byValue[:0]
	for k := range mm.args {
		mm.byValue = append(mm.byValue, k)
	}
	sort.SliceStable(mm.byValue, func(x, y int) bool {
		return c.best[mm.args[mm.byValue[x]]] > c.best[mm.args[mm.byValue[y]]]
	})
	for _, k := range mm.byValue {
		mm.roomy = append(mm.roomy, mm.bins[k]...)
	}
	return mm.roomy
}

// plateauAfter is the number of fruitless bottleneck rounds after which
// one round accepts a repacking at the minimum (a plateau move).
const plateauAfter = 30

// raiseFloor, at a solution of a bottleneck round, asks the rest of the
// round for a better one: the repacked arguments above their new minimum
// (the incumbent is then lexicographically better still, the other bins
// being unchanged).
func (s *solver) raiseFloor() bool {
	m := int64(maxInt64)
	for _, a := range s.subArgs {
		m = min(m, s.lo[a])
	}
	if m == maxInt64 {
		return false
	}
	s.subFloor = m + 1
	s.enqueue(s.objProp)
	return true
}
