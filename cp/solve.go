package cp

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Solve searches for a solution (an optimal one if there is an
// objective). The Response is never nil; the error is non-nil only for an
// invalid model (status ModelInvalid, wrapping ErrInvalidModel).
func (m *Model) Solve(ctx context.Context, p Params) (*Response, error) {
	start := time.Now()
	r := &Response{}
	r.Stats.Variables = len(m.doms)
	r.Stats.Constraints = len(m.cons)
	r.Stats.ConstraintsByKind = map[string]int{}
	for i := range m.cons {
		r.Stats.ConstraintsByKind[string(m.cons[i].Kind)]++
	}
	if m.err != nil {
		r.Status = ModelInvalid
		return r, m.err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if w := p.workers(); w > 1 {
		return m.solvePortfolio(ctx, p, w, start, r), nil
	}
	c := m.newSearchCtl(ctx, p, defaultStrategy, start)
	s, ok := newSolver(m, true)
	c.initFor(s)
	st, core := s.run(c, ok, p, &r.Stats, start)
	r.Status = st
	if st == Feasible || st == Unknown {
		// Read the bound at the base level, not at the leaf where the
		// search stopped (e.g. StopAfterFirstSolution).
		s.backtrackTo(len(m.assumptions))
	}
	r.Stats.Branches, r.Stats.Conflicts, r.Stats.Solutions = c.branches, c.conflicts, c.solutions
	r.Stats.FirstSolution = c.firstSolution
	r.Stats.Workers = 1
	r.Stats.Restarts, r.Stats.LNSRounds, r.Stats.LNSImprovements = c.restarts, c.lnsRounds, c.lnsImpr
	r.Stats.ConflictsByName = map[string]int64{}
	for con, n := range c.conflictsByCon {
		name := m.cons[con].Name
		if name == "" {
			name = string(m.cons[con].Kind)
		}
		r.Stats.ConflictsByName[name] += n
	}
	if c.best != nil && (st == Optimal || st == Feasible) {
		r.values = append([]int64(nil), c.best[:len(m.doms)]...)
		if m.obj != nil {
			r.Objective = evalExpr(m.obj.Expr, r.values)
		}
	}
	if m.obj != nil {
		b := s.lo[s.objVar] // level-base lower bound of the minimised objective
		if st == Optimal {
			b = c.bestObj
		}
		if m.obj.Maximize {
			b = -b
		}
		r.Bound = b
	}
	if st == Infeasible && len(m.assumptions) > 0 {
		r.Core = m.minimizeCore(ctx, core, c.deadline)
	}
	r.Stats.Search = time.Since(start) - r.Stats.Presolve
	return r, nil
}

// afterProbeHook, if set (by tests), runs after the bound probe that
// follows the first solution: a test can make the probe outlast the
// improvement wait.
var afterProbeHook func()

// newSearchCtl sets up the limits and bookkeeping of one search (one
// worker's) under strategy st.
func (m *Model) newSearchCtl(ctx context.Context, p Params, st strategy, start time.Time) *searchCtl {
	c := &searchCtl{ctx: ctx, start: start, lastConf: -1, nodeLimit: p.NodeLimit, stopFirst: p.StopAfterFirstSolution, stall: p.ImprovementTimeout, wideStall: p.WideGapImprovementTimeout, wideGap: p.WideGap, gap: p.AbsoluteGapLimit, conflictsByCon: map[int]int64{},
		rng: rand.New(rand.NewPCG(uint64(p.Seed+st.seed), 0x9e3779b97f4a7c15)), strat: st}
	if p.TimeLimit > 0 {
		c.deadline = start.Add(p.TimeLimit)
	}
	if d, ok := ctx.Deadline(); ok && (c.deadline.IsZero() || d.Before(c.deadline)) {
		c.deadline = d
	}
	return c
}

// initFor sizes the per-variable guidance (hints, objective direction)
// for s's engine variables.
func (c *searchCtl) initFor(s *solver) {
	m := s.m
	c.hint = make([]int64, len(s.lo))
	c.hasHint = make([]bool, len(s.lo))
	for _, h := range m.hints {
		c.hint[h.v], c.hasHint[h.v] = h.val, true
	}
	c.objDir = make([]int8, len(s.lo))
	if m.obj != nil {
		for i, x := range m.obj.Expr.Vars {
			k := m.obj.Expr.Coeffs[i]
			if m.obj.Maximize {
				k = -k
			}
			if k > 0 {
				c.objDir[x.idx] = 1
			} else {
				c.objDir[x.idx] = -1
			}
		}
	}
}

// run performs root propagation, the assumptions, then the search
// portfolio. It returns the status and, if infeasible under assumptions,
// a candidate core.
func (s *solver) run(c *searchCtl, ok bool, p Params, st *Stats, start time.Time) (Status, []Lit) {
	m := s.m
	if !ok {
		st.Presolve = time.Since(start)
		return Infeasible, nil
	}
	// Everything up to the search polls the deadline and the context
	// (solver.ctl): an interrupted phase ends the solve with no solution.
	s.ctl = c
	if !s.propagate() || !s.addImpliedCliques(c.rng) || !s.propagate() {
		st.Presolve = time.Since(start)
		if s.aborted {
			return Unknown, nil
		}
		return Infeasible, nil
	}
	s.presolveStats(st)
	s.rootHi = append([]int64(nil), s.hi...)
	st.Presolve = time.Since(start)
	for i, a := range m.assumptions {
		s.pushLevel()
		s.decisions = append(s.decisions, decision{v: -1})
		if !s.setLit(a.idx, true) || !s.propagate() {
			if s.aborted {
				return Unknown, nil
			}
			return Infeasible, append([]Lit(nil), m.assumptions[:i+1]...)
		}
	}
	base := len(m.assumptions)
	// The bound probe serves a search that runs on: bound its time (it
	// costs tens of ms on Weave's placement models) by a tenth of the
	// limit, and by the improvement timeout, which a search whose
	// incumbent is already optimal would otherwise wait out. With an
	// improvement timeout the caller wants a solution soon: the probe
	// runs after the first one, inside the wait for an improvement, and
	// ends the search when it meets the incumbent.
	probeLater := p.ImprovementTimeout > 0 && !p.StopAfterFirstSolution
	var probeBudget time.Duration
	if !c.deadline.IsZero() {
		probeBudget = time.Until(c.deadline) / 10
	}
	if p.ImprovementTimeout > 0 && (probeBudget == 0 || p.ImprovementTimeout < probeBudget) {
		probeBudget = p.ImprovementTimeout
	}
	if !p.StopAfterFirstSolution && !probeLater && !c.strat.noProbe {
		if !s.probeObjectiveBound(c, 24, probeBudget) {
			if s.aborted {
				return Unknown, nil
			}
			return Infeasible, append([]Lit(nil), m.assumptions...)
		}
		if c.stopped {
			return Unknown, nil
		}
	}
	probeLater = probeLater && !c.strat.noProbe
	c.probePending = probeLater && c.gap > 0
	if s.hasObj {
		c.rootLo = s.lo[s.objVar]
	}
	s.ctl = nil // the search polls shouldStop itself
	lns := &lnsState{frac: 0.2}
	if !p.DisableLNS && !maxMinOff && len(s.h.scale) > 0 && s.hasObj {
		// A max-min objective over bins: bottleneck rounds accept
		// solutions as good as the incumbent (lns_maxmin.go), so the
		// base level holds only "no worse" and every search below it
		// adds "better" (solver.weakRoot).
		if s.maxMinObjective() >= 0 {
			s.linkObjectiveBins(lns)
			s.initMaxMin(lns)
		}
		if lns.maxMin != nil {
			s.weakRoot, s.objBase = true, base
		}
	}
	var i int64
	plns := &lnsState{frac: 0.1}
	cliqueObj := int64(maxInt64)
	small := s.smallSearch()
	for {
		i++
		if c.best == nil && !p.DisableLNS && len(s.decisionVars) > 0 {
			s.startPartial(c)
		}
		res := s.dfsBelow(c, base, restartLimit(i, small, c.strat.restartUnit))
		if c.partial != nil && c.best == nil {
			s.endPartial(c)
		}
		switch res {
		case dfsSolved:
			return Optimal, nil
		case dfsFirst:
			return Feasible, nil
		case dfsExhausted:
			if c.best != nil {
				return Optimal, nil
			}
			return Infeasible, append([]Lit(nil), m.assumptions...)
		}
		s.backtrackTo(base)
		if res == dfsStopped {
			break
		}
		if probeLater && c.best != nil && s.hasObj {
			probeLater, c.probePending = false, false
			feasible := s.probeObjectiveBound(c, 24, probeBudget)
			if afterProbeHook != nil {
				afterProbeHook()
			}
			if !feasible {
				if s.aborted {
					break
				}
				return Optimal, nil // nothing better than the incumbent
			}
			if c.stopped {
				break
			}
			if s.lo[s.objVar] >= c.bestObj {
				return Optimal, nil // the bound meets the incumbent
			}
		}
		if s.hasObj {
			c.rootLo = s.lo[s.objVar]
			if c.withinGap() {
				return Feasible, nil
			}
		}
		// The dive and the probe may have used up the improvement wait (or
		// the time): stop before the restart's work (the implied cliques
		// under the bound, an LNS round: a root propagation each), which
		// checkStop would only see the end of. A TopologySpreading batch
		// ran 4 ms past its wait here, twice its first solution's time.
		if s.checkStop(c) {
			break
		}
		c.restarts++
		if s.impliedUnderBound(c, &cliqueObj) {
			return Optimal, nil
		}
		if c.best == nil && c.partial != nil && c.partialCount > 0 {
			// No solution yet: repair the deepest partial assignment.
			budget := c.branches
			spent := int64(0)
			for spent < budget && !c.stopped && c.best == nil {
				b0 := c.branches
				res := s.partialRound(c, plns, base)
				spent += c.branches - b0 + 1
				if c.best != nil {
					switch {
					case res == dfsSolved:
						return Optimal, nil
					case res == dfsFirst:
						return Feasible, nil
					}
					s.backtrackTo(base)
				}
				s.checkStop(c)
			}
			if c.stopped {
				break
			}
		}
		if c.best != nil && s.hasObj && !p.DisableLNS && !small {
			// Give LNS about three times the effort of the complete search
			// (strategy.lnsEffort).
			budget := c.branches * c.strat.lnsEffort
			spent := int64(0)
			for spent < budget && !c.stopped {
				b0 := c.branches
				if s.lnsRound(c, lns, base) {
					// The neighbourhood proved the incumbent optimal only if
					// it fixed nothing; lnsRound reports that case.
					return Optimal, nil
				}
				spent += c.branches - b0 + 1
				if s.impliedUnderBound(c, &cliqueObj) {
					return Optimal, nil
				}
				s.checkStop(c)
			}
			if c.stopped {
				break
			}
		}
		// Solution-guided restarts: alternate following the incumbent, and
		// worst fit (spreads load) with best fit (packs tight instances).
		c.useIncumbent = c.best != nil && i%2 == 0
		c.bestFit = c.best == nil || (i%2 == 1) != c.strat.flipFit
	}
	if c.best != nil {
		return Feasible, nil
	}
	return Unknown, nil
}

// impliedUnderBound re-derives the implied cliques at the base level
// once the incumbent improved: the objective bound lowers the capacities
// (e.g. a min spare capacity caps every load), so items that could share
// a bin before may not any more. It reports true if no better solution
// exists (the incumbent is optimal).
func (s *solver) impliedUnderBound(c *searchCtl, last *int64) bool {
	if c.best == nil || !s.hasObj || c.bestObj >= *last || len(s.h.scale) == 0 {
		return false
	}
	*last = c.bestObj
	s.objUB = c.bestObj - 1
	s.enqueue(s.objProp)
	// Interruptible: on a large model this costs a root propagation.
	s.ctl = c
	defer func() { s.ctl = nil }()
	if !s.propagate() {
		return !s.aborted // aborted: c.stopped is set, the caller stops
	}
	return (!s.addImpliedCliques(c.rng) || !s.propagate()) && !s.aborted
}

func (s *solver) presolveStats(st *Stats) {
	m := s.m
	for v := range m.doms {
		if !s.fixed(int32(v)) {
			st.PresolvedVariables++
		}
	}
	st.PresolvedByKind = map[string]int{}
	st.PresolvedByName = map[string]map[string]int{}
	for i := range m.cons {
		c := &m.cons[i]
		open := false
		for _, x := range c.Vars {
			open = open || !s.fixed(x.idx)
		}
		for _, l := range c.Lits {
			open = open || !s.fixed(l.idx>>1)
		}
		for _, l := range c.Enforcement {
			open = open || !s.fixed(l.idx>>1)
		}
		for _, x := range c.Loads {
			open = open || !s.fixed(x.idx)
		}
		for _, e := range c.Exprs {
			for _, x := range e.Vars {
				open = open || !s.fixed(x.idx)
			}
		}
		switch {
		case s.dropped[i]:
			open = false
		case len(c.Enforcement) > 0:
		case c.Kind == KindMembership || c.Kind == KindNonMembership:
			open = false // a root domain cut
		case c.Kind == KindLinear:
			var mn, mx int64
			for k, x := range c.Vars {
				a, b := c.Coeffs[k]*s.lo[x.idx], c.Coeffs[k]*s.hi[x.idx]
				mn, mx = mn+min(a, b), mx+max(a, b)
			}
			if mn >= c.Lo && mx <= c.Hi {
				open = false // entailed (unary ones are folded into domains)
			}
		}
		if c.Kind == KindElement || c.Kind == KindVarElement || c.Kind == KindMinEquality || c.Kind == KindMaxEquality {
			open = open || !s.fixed(c.Target.idx)
			if c.Kind != KindMinEquality && c.Kind != KindMaxEquality {
				open = open || !s.fixed(c.Index.idx)
			}
		}
		if open {
			st.PresolvedConstraints++
			st.PresolvedByKind[string(c.Kind)]++
			if st.PresolvedByName[c.Name] == nil {
				st.PresolvedByName[c.Name] = map[string]int{}
			}
			st.PresolvedByName[c.Name][string(c.Kind)]++
		}
	}
}

// feasibleUnder decides whether the model (objective ignored) is feasible
// under the given assumptions, within a conflict budget. It returns
// Infeasible, Optimal (feasible) or Unknown.
func (m *Model) feasibleUnder(ctx context.Context, assumptions []Lit, deadline time.Time, conflicts int64) Status {
	s, ok := newSolver(m, false)
	if !ok || !s.propagate() {
		return Infeasible
	}
	c := &searchCtl{ctx: ctx, deadline: deadline, lastConf: -1, conflictsByCon: map[int]int64{}, rng: rand.New(rand.NewPCG(1, 2))}
	for _, a := range assumptions {
		s.pushLevel()
		s.decisions = append(s.decisions, decision{v: -1})
		if !s.setLit(a.idx, true) || !s.propagate() {
			return Infeasible
		}
	}
	switch s.dfs(c, len(assumptions), conflicts) {
	case dfsExhausted:
		return Infeasible
	case dfsSolved:
		return Optimal
	}
	return Unknown
}

// minimizeCore shrinks an infeasible set of assumptions by deletion:
// drop an assumption whenever the rest is still provably infeasible
// within a small budget. The result is infeasible on its own.
func (m *Model) minimizeCore(ctx context.Context, core []Lit, deadline time.Time) []Lit {
	core = append([]Lit(nil), core...)
	if len(core) > 64 {
		return core
	}
	for i := len(core) - 1; i >= 0; i-- {
		if ctx.Err() != nil || (!deadline.IsZero() && time.Now().After(deadline)) {
			break
		}
		trial := append(append([]Lit(nil), core[:i]...), core[i+1:]...)
		if m.feasibleUnder(ctx, trial, deadline, 2000) == Infeasible {
			core = trial
		}
	}
	return core
}

// String summarises a response for logs.
func (r *Response) String() string {
	return fmt.Sprintf("%v objective=%d bound=%d branches=%d conflicts=%d", r.Status, r.Objective, r.Bound, r.Stats.Branches, r.Stats.Conflicts)
}

// smallSearchBits bounds the search space, in bits (Σ log2 of the
// decision variables' domain sizes at the root), of a model searched
// completely: no LNS between the restarts, which follow a geometric
// schedule rather than Luby's. Without nogoods a proof needs one run as
// long as the proof, and LNS (three times everything spent so far, after
// every restart) left the complete search a vanishing share: 3 of 400 bin
// packings of 3 to 8 items into 2 to 5 bins (genSymModel, at most 19
// bits) were not proven optimal in 3 s and 1.7-3.2 million conflicts,
// where the complete search alone proves them in 18,000-48,000. A
// neighbourhood of a model this small is most of the model anyway. A
// scheduler batch of 10 pods on 500 nodes has 90 bits.
const smallSearchBits = 32

// smallSearch reports whether the decision variables span at most
// 2^smallSearchBits combinations (none: the model has no decision tier).
func (s *solver) smallSearch() bool {
	if len(s.decisionVars) == 0 {
		return false
	}
	bits := 0.0
	for _, v := range s.decisionVars {
		if int(v) < len(s.h.defined) && s.h.defined[v] {
			continue // a load or a min/max target: it follows from the others
		}
		if bits += math.Log2(float64(s.size(v))); bits > smallSearchBits {
			return false
		}
	}
	return true
}

// restartLimit is the number of conflicts the i-th complete search may
// spend before it restarts: doubling on a small search (any proof's
// length is reached within twice its effort), Luby's otherwise.
func restartLimit(i int64, small bool, unit int64) int64 {
	if small {
		return unit << min(i-1, 40)
	}
	return luby(i) * unit
}
