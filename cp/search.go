package cp

import (
	"context"
	"math/bits"
	"math/rand/v2"
	"time"
)

// searchCtl holds the limits and bookkeeping shared by all search phases.
type searchCtl struct {
	ctx       context.Context
	deadline  time.Time
	nodeLimit int64
	stopped   bool
	tick      int

	rng *rand.Rand

	branches, conflicts, solutions int64
	restarts, lnsRounds, lnsImpr   int64
	sideMoves                      int64 // bottleneck rounds' solutions at the incumbent's objective
	conflictsByCon                 map[int]int64

	best    []int64 // incumbent assignment (engine variables)
	bestObj int64   // internal (minimised) objective of best
	hint    []int64
	hasHint []bool

	stopFirst bool          // Params.StopAfterFirstSolution
	stall     time.Duration // Params.ImprovementTimeout
	wideStall time.Duration // Params.WideGapImprovementTimeout
	wideGap   int64         // Params.WideGap
	gap       int64         // Params.AbsoluteGapLimit
	// rootLo is the base-level lower bound of the minimised objective
	// last seen (gap checks run deeper in the tree, where s.lo is not
	// the proven bound); probePending: the objective-bound probe waits
	// for the first solution, so the dive that finds it returns.
	rootLo       int64
	probePending bool
	lastImprove  time.Time // when the incumbent last improved
	useIncumbent bool      // solution-guided value choice
	// sideways: a bottleneck round (lns_maxmin.go) is under way, whose
	// constraints make any solution lexicographically better than the
	// incumbent even at the same objective; the search returns at it.
	sideways bool
	bestFit  bool // bin-packing value choice: best fit instead of worst fit
	objDir   []int8

	start         time.Time
	firstSolution time.Duration

	// Before the first solution: the deepest partial assignment of the
	// decision variables seen (value or partialUnset), for partial LNS.
	partial      []int64
	lastConf     int32 // last-conflict variable, -1 if none
	partialCount int
	roundBest    []int64
	roundCount   int
	roundNext    []int64 // notePartial scratch, swapped with roundBest
	// partialPending: the current node (or the one a conflict returns
	// to) is still to be offered to notePartial (see flushPartial).
	partialPending bool

	// strat diversifies the workers of a portfolio (defaultStrategy for
	// a single worker).
	strat strategy
	// shared, with several workers, is the incumbent they exchange (nil
	// for a single worker); seen is the version of it last imported.
	shared  *sharedBest
	seen    uint64
	imports int64 // incumbents adopted from other workers (tests)
}

const partialUnset = minInt64

// shouldStop checks the time limit and context every 16 calls (a call
// costs at least one propagation, so the clock is cheap in comparison).
func (s *solver) shouldStop(c *searchCtl) bool {
	if c.stopped {
		return true
	}
	if c.nodeLimit > 0 && c.branches >= c.nodeLimit {
		c.stopped = true
		return true
	}
	c.tick++
	if c.tick&15 != 0 {
		return false
	}
	return s.checkStop(c)
}

// checkStop checks the time limit, the improvement timeout and the context
// now. Between LNS rounds it is called after every round: a round costs a
// root propagation of the whole model (a millisecond on a 500-node
// placement) and only a few search nodes, so the node count of
// shouldStop let a solve run 20 ms past its 5 ms improvement timeout.
func (s *solver) checkStop(c *searchCtl) bool {
	if c.stopped {
		return true
	}
	if !c.deadline.IsZero() && time.Now().After(c.deadline) {
		c.stopped = true
	}
	if stall := c.stallNow(); stall > 0 && c.best != nil && time.Since(c.lastImprove) > stall {
		// With several workers the clock is the last improvement by any
		// of them (one not imported yet included).
		if c.shared == nil || c.shared.stalled(stall) {
			c.stopped = true
		}
	}
	if c.ctx.Err() != nil {
		c.stopped = true
	}
	if c.withinGap() {
		c.stopped = true
	}
	return c.stopped
}

// stallNow is the improvement timeout that applies now: the wide-gap one
// while the incumbent is not proven within Params.WideGap of the optimum.
func (c *searchCtl) stallNow() time.Duration {
	if c.stall > 0 && c.wideStall > c.stall && c.best != nil && c.bestObj-c.rootLo > c.wideGap {
		return c.wideStall
	}
	return c.stall
}

// withinGap reports whether the incumbent is proven within
// Params.AbsoluteGapLimit of the optimum.
func (c *searchCtl) withinGap() bool {
	return c.gap > 0 && c.best != nil && c.bestObj-c.rootLo <= c.gap
}

type dfsResult int

const (
	dfsExhausted dfsResult = iota // no (better) solution below base
	dfsLimit                      // conflict limit reached
	dfsStopped                    // time, context or node limit
	dfsSolved                     // solution found and no objective
	dfsFirst                      // first solution found and StopAfterFirstSolution
)

// dfs explores below level base with binary branching (x op v, then its
// refutation) and branch-and-bound: every solution tightens objUB.
func (s *solver) dfs(c *searchCtl, base int, conflictLimit int64) dfsResult {
	startConf := c.conflicts
	c.partialPending = false
	for {
		if s.propagate() {
			if s.shouldStop(c) {
				s.flushPartial(c)
				return dfsStopped
			}
			if c.shared != nil && c.shared.version.Load() != c.seen {
				// Another worker's better incumbent: adopt it and its
				// bound (recordSolution ignores a leaf reached before the
				// bound propagates).
				s.importShared(c)
			}
			if c.partial != nil && c.best == nil {
				c.partialPending = true
			}
			d, ok := s.choose(c)
			if !ok {
				s.recordSolution(c)
				if !s.hasObj {
					return dfsSolved
				}
				if c.stopFirst {
					return dfsFirst
				}
				if c.probePending {
					return dfsLimit // run the bound probe now
				}
				if c.sideways {
					if s.raiseFloor() {
						continue
					}
					return dfsLimit
				}
				s.objUB = c.bestObj - 1
				s.enqueue(s.objProp)
				continue
			}
			c.branches++
			s.pushLevel()
			s.decisions = append(s.decisions, d)
			s.apply(d, false)
			continue
		}
		c.conflicts++
		if fp := s.failedProp; fp >= 0 {
			s.props[fp].weight++
			for _, v := range s.props[fp].vars {
				s.varWeight[v]++
			}
			if con := s.props[fp].con; con >= 0 {
				c.conflictsByCon[con]++
			}
		}
		if s.level() <= base {
			return dfsExhausted
		}
		d := s.decisions[s.level()-1]
		if c.lastConf < 0 && d.v >= 0 {
			c.lastConf = d.v // last-conflict reasoning (Lecoutre et al. 2009)
		}
		s.backtrackTo(s.level() - 1)
		s.flushPartial(c)
		s.apply(d, true)
		if !s.failed && !s.refuteSymmetric(d) {
			s.failed = true
		}
		if conflictLimit > 0 && c.conflicts-startConf >= conflictLimit {
			if s.propagate() || s.level() > base {
				return dfsLimit
			}
			return dfsExhausted
		}
		if s.shouldStop(c) {
			return dfsStopped
		}
	}
}

// dfsBelow is dfs from base, or, when the base level holds only the weak
// objective bound (solver.weakRoot), from a level above it where the
// strict bound holds: a refutation is then never applied at the base
// level, where it would exclude solutions only as good as the incumbent.
func (s *solver) dfsBelow(c *searchCtl, base int, conflictLimit int64) dfsResult {
	if !s.weakRoot {
		return s.dfs(c, base, conflictLimit)
	}
	s.pushLevel()
	s.decisions = append(s.decisions, decision{v: -1})
	return s.dfs(c, base+1, conflictLimit)
}

// flushPartial offers the pending node to notePartial. Domains only
// shrink below a node, so of the nodes of a dive the deepest fixes the
// most decision variables (a superset, with the same values): offering
// only the last successful node before the search leaves it (a conflict
// below returns to exactly that state; a stop keeps the current,
// deeper, one) keeps the same deepest assignment as offering every node,
// without a pass over the decision variables at each of them.
func (s *solver) flushPartial(c *searchCtl) {
	if c.partialPending {
		c.partialPending = false
		if c.partial != nil && c.best == nil {
			s.notePartial(c)
		}
	}
}

func (s *solver) recordSolution(c *searchCtl) {
	same := c.best != nil && s.hasObj && s.lo[s.objVar] == c.bestObj
	if c.best != nil && s.hasObj && (s.lo[s.objVar] > c.bestObj || same && !c.sideways) {
		// Not an improvement: a leaf reached under an older bound than an
		// incumbent imported from another worker (never with one worker,
		// whose bound propagates before the next leaf).
		return
	}
	if same {
		// A bottleneck round's solution (lns_maxmin.go): better, at the
		// same objective; it is neither shared with other workers nor
		// counted as an improvement (ImprovementTimeout).
		c.sideMoves++
		copy(c.best, s.lo)
		s.deriveLits(c.best)
		return
	}
	c.solutions++
	if c.stall > 0 {
		c.lastImprove = time.Now()
	}
	if c.solutions == 1 {
		c.firstSolution = time.Since(c.start)
	}
	if c.best == nil {
		c.best = make([]int64, len(s.lo))
	}
	copy(c.best, s.lo)
	s.deriveLits(c.best)
	if s.hasObj {
		c.bestObj = s.lo[s.objVar]
	}
	if c.shared != nil {
		c.shared.publish(c, s.hasObj)
	}
}

// deriveLits sets the encoding literals presolve left out (solver.derived)
// in an assignment from their variables.
func (s *solver) deriveLits(vals []int64) {
	for _, d := range s.derived {
		x := vals[d.x]
		b := int64(0)
		if (d.eq && x == d.val) || (!d.eq && x <= d.val) {
			b = 1
		}
		vals[d.b] = b
	}
}

// choose picks the next decision: dom/wdeg variable choice among unfixed
// user variables (any unfixed variable as a fallback), then a value.
func (s *solver) choose(c *searchCtl) (decision, bool) {
	// Last-conflict reasoning: keep branching on the variable whose
	// assignment failed last until it can be assigned, which backjumps to
	// the decision really responsible for the conflict.
	if lc := c.lastConf; lc >= 0 {
		if s.lo[lc] != s.hi[lc] {
			return s.chooseValue(c, lc), true
		}
		c.lastConf = -1
	}
	best := int32(-1)
	var bestScore float64
	live := s.revs[s.rLive]
	lo, hi, sz, szOK, wt, sc := s.lo, s.hi, s.sz, s.szOK, s.varWeight, s.h.scores
	start := 0
	for _, end := range s.tierEnd {
		for wi := start >> 6; wi<<6 < end; wi++ {
			w := uint64(live[wi])
			if lo := start - wi<<6; lo > 0 {
				w &^= 1<<lo - 1
			}
			if hi := end - wi<<6; hi < 64 {
				w &= 1<<hi - 1
			}
			fixed := uint64(0)
			for ; w != 0; w &= w - 1 {
				b := bits.TrailingZeros64(w)
				v := s.branchOn[wi<<6+b]
				if lo[v] == hi[v] {
					fixed |= 1 << b
					continue
				}
				// branchScore, with its common case (cached size and
				// score) inline: this runs for every unfixed decision
				// variable at every node.
				var score float64
				if c := &sc[v]; szOK[v] && c.size == sz[v] && c.weight == wt[v] {
					score = c.score
				} else {
					score = s.branchScore(v)
				}
				if best < 0 || score < bestScore || (score == bestScore && s.h.prio[v] > s.h.prio[best]) {
					best, bestScore = v, score
				}
			}
			if fixed != 0 {
				s.setRev(s.rLive, wi, int64(uint64(live[wi])&^fixed))
			}
		}
		if best >= 0 {
			break
		}
		start = end
	}
	if best < 0 {
		for v := range s.lo {
			if s.lo[v] != s.hi[v] && (v >= len(s.isDerived) || !s.isDerived[v]) {
				best = int32(v)
				break
			}
		}
		if best < 0 {
			return decision{}, false
		}
	}
	return s.chooseValue(c, best), true
}

// branchScore is the dom/wdeg score of v (smaller first), cached per
// variable while its domain size and weight stay the same: choose scores
// every unfixed decision variable at every node (5,000 items: two float
// divisions each were a tenth of the search).
func (s *solver) branchScore(v int32) float64 {
	sz, w := s.size(v), s.varWeight[v]
	c := &s.h.scores[v]
	if c.size != sz || c.weight != w {
		*c = scoreCache{sz, w, float64(sz) / float64(w+1) / (1 + 10*s.h.prio[v])}
	}
	return c.score
}

// chooseValue prefers the incumbent (solution-guided search), then the
// hint, then the objective's direction, then the smallest value; large
// domains are split in half instead.
func (s *solver) chooseValue(c *searchCtl, v int32) decision {
	if c.useIncumbent && c.best != nil && s.contains(v, c.best[v]) {
		return decision{v: v, op: opEq, val: c.best[v]}
	}
	if int(v) < len(c.hasHint) && c.hasHint[v] && s.contains(v, c.hint[v]) {
		return decision{v: v, op: opEq, val: c.hint[v]}
	}
	if len(s.h.items[v]) > 0 {
		if x, ok := s.worstFit(v, c.bestFit); ok {
			return decision{v: v, op: opEq, val: x}
		}
	}
	lo, hi := s.lo[v], s.hi[v]
	up := int(v) < len(c.objDir) && c.objDir[v] < 0 // larger values improve the objective
	if hi-lo >= 64 {
		mid := lo + (hi-lo)/2
		if up {
			return decision{v: v, op: opGe, val: mid + 1}
		}
		return decision{v: v, op: opLe, val: mid}
	}
	if up {
		return decision{v: v, op: opEq, val: hi}
	}
	return decision{v: v, op: opEq, val: lo}
}

// luby returns the i-th term (1-based) of the Luby sequence 1,1,2,1,1,2,4,...
func luby(i int64) int64 {
	for k := int64(1); ; k++ {
		if i == (int64(1)<<k)-1 {
			return int64(1) << (k - 1)
		}
		if i < (int64(1)<<k)-1 {
			return luby(i - (int64(1) << (k - 1)) + 1)
		}
	}
}
