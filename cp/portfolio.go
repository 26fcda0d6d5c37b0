package cp

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The parallel portfolio (Params.Workers > 1): each worker compiles its
// own engine from the model (store, trail, propagators, clause database:
// nothing mutable is shared) and runs the whole single-worker solve
// (root propagation, implied cliques, bound probe, DFS with restarts,
// branch and bound, LNS) under its own strategy. The workers meet only
// in a sharedBest: every improving solution is published there, and a
// worker adopts a better one between two nodes of its search, which
// tightens its branch-and-bound bound and seeds its LNS with the
// incumbent. The first worker to return ends the solve (it proved
// optimality or infeasibility, found the first solution that
// StopAfterFirstSolution asks for, or met a limit that the others meet
// too); the others are cancelled through a derived context, which every
// phase already polls.

// strategy is what distinguishes the workers of a portfolio.
type strategy struct {
	seed        int64 // added to Params.Seed for the worker's random choices
	restartUnit int64 // conflicts per unit of the Luby restart schedule
	lnsEffort   int64 // LNS branches per branch of complete search between restarts
	noLNS       bool  // complete search only (the worker that proves)
	noProbe     bool  // skip the root bound probe (worker 0 runs it)
	// flipFit: best fit on the restarts where worker 0 uses worst fit,
	// and the reverse. Not on the first dive: worst fit there gives the
	// scheduler its balanced first solution, and a best-fit first
	// solution (packed nodes, minimum spare 0 on the placement models)
	// would win the race to StopAfterFirstSolution or start the
	// ImprovementTimeout clock with a poor incumbent.
	flipFit bool
}

// defaultStrategy is the single-worker search, and worker 0's.
var defaultStrategy = strategy{restartUnit: 64, lnsEffort: 3}

// portfolioStrategies are the strategies of workers 0, 1, 2, ...; later
// workers repeat those after worker 0 with other seeds. Worker 0 is
// the single-worker search, so a portfolio is never without it.
// Worker 1 (the only other one on two cores) differs in its random
// choices (implied cliques, neighbourhoods), alternates worst and best
// fit the other way after its first dive, leans further on LNS, and
// skips the bound probe. Worker 2 is a complete search with long
// restarts (proofs of optimality and infeasibility; without the partial
// LNS it solved none of 20 tight 98% packings in 3 s, where workers 0,
// 1 and 3 solved all), worker 3 restarts often and spends most of its
// effort in LNS.
var portfolioStrategies = []strategy{
	defaultStrategy,
	{seed: 1, restartUnit: 64, lnsEffort: 6, noProbe: true, flipFit: true},
	{seed: 2, restartUnit: 256, noLNS: true, noProbe: true},
	{seed: 3, restartUnit: 32, lnsEffort: 10, noProbe: true},
}

func strategyFor(i int) strategy {
	if i < len(portfolioStrategies) {
		return portfolioStrategies[i]
	}
	st := portfolioStrategies[1+(i-1)%(len(portfolioStrategies)-1)]
	st.seed = int64(i)
	return st
}

// workers resolves Params.Workers: 0 means 1, a negative value means
// GOMAXPROCS.
func (p Params) workers() int {
	if p.Workers < 0 {
		return runtime.GOMAXPROCS(0)
	}
	return p.Workers
}

// sharedBest is the incumbent the workers of a portfolio exchange: the
// best assignment of the engine variables found by any of them (every
// worker compiles the model into the same engine variables) and its
// internal (minimised) objective. version changes with every
// improvement, so a worker polls it with one atomic load per node;
// improvedAt (nanoseconds since the start of Solve) lets a worker judge
// ImprovementTimeout by the last improvement of any worker.
type sharedBest struct {
	start      time.Time
	version    atomic.Uint64
	improvedAt atomic.Int64

	mu     sync.Mutex
	values []int64 // nil until a solution is found
	obj    int64
}

// publish offers c's incumbent, just recorded; it is kept if it is the
// first solution or improves the shared objective.
func (sh *sharedBest) publish(c *searchCtl, hasObj bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.values != nil && (!hasObj || c.bestObj >= sh.obj) {
		return // another worker's is as good: c imports it later
	}
	sh.values = append(sh.values[:0], c.best...)
	sh.obj = c.bestObj
	sh.improvedAt.Store(int64(time.Since(sh.start)))
	// Anything c has not imported yet is worse than what it publishes.
	c.seen = sh.version.Add(1)
}

// stalled reports whether no worker has improved the incumbent for d.
func (sh *sharedBest) stalled(d time.Duration) bool {
	return time.Since(sh.start)-time.Duration(sh.improvedAt.Load()) > d
}

// importShared adopts the shared incumbent if it is better than c's:
// c.best and c.bestObj take its values and the branch-and-bound bound
// tightens (propagated with the next propagate; recordSolution ignores
// a leaf that does not beat the adopted objective). Without an
// objective there is nothing to adopt: the first solution ends the
// solve.
func (s *solver) importShared(c *searchCtl) {
	sh := c.shared
	sh.mu.Lock()
	c.seen = sh.version.Load()
	better := s.hasObj && sh.values != nil && len(sh.values) == len(s.lo) && (c.best == nil || sh.obj < c.bestObj)
	if better {
		if c.best == nil {
			c.best = make([]int64, len(s.lo))
		}
		copy(c.best, sh.values)
		c.bestObj = sh.obj
	}
	sh.mu.Unlock()
	if !better {
		return
	}
	c.imports++
	c.lastImprove = sh.start.Add(time.Duration(sh.improvedAt.Load()))
	s.objUB = c.bestObj - 1
	s.enqueue(s.objProp)
}

// worker is one search of a portfolio and what it returned.
type worker struct {
	c      *searchCtl
	status Status
	core   []Lit
	stats  Stats
	lo     int64 // base-level lower bound of the minimised objective
}

func (w *worker) solve(ctx context.Context, m *Model, p Params, st strategy, sh *sharedBest, start time.Time) {
	if st.noLNS {
		p.DisableLNS = true
	}
	c := m.newSearchCtl(ctx, p, st, start)
	c.shared = sh
	s, ok := newSolver(m, true)
	c.initFor(s)
	w.c = c
	w.status, w.core = s.run(c, ok, p, &w.stats, start)
	if w.status == Feasible || w.status == Unknown {
		s.backtrackTo(len(m.assumptions))
	}
	if s.hasObj {
		w.lo = s.lo[s.objVar]
	}
}

// solvePortfolio runs n workers (n > 1) and merges their results into r.
//
// The response: the solution is the shared incumbent (the best any
// worker found); the status is that of the first worker to prove
// optimality or infeasibility (Feasible or Unknown otherwise); the
// bound is the best valid one over the workers (see below). Statistics:
// Branches, Conflicts, Solutions (each worker's own, not the incumbents
// it adopted), Restarts, LNS rounds and improvements, and
// ConflictsByName are sums over the workers; FirstSolution is the
// earliest first solution; Presolve and the Presolved counts are worker
// 0's (the workers' presolves differ only in their random implied
// cliques).
func (m *Model) solvePortfolio(ctx context.Context, p Params, n int, start time.Time, r *Response) *Response {
	return m.runPortfolio(ctx, p, n, start, r, func(ctx context.Context, w *worker, i int, sh *sharedBest) {
		w.solve(ctx, m, p, strategyFor(i), sh, start)
	})
}

// runPortfolio is solvePortfolio with the workers' search as a
// parameter (tests substitute a worker that only stops when cancelled).
func (m *Model) runPortfolio(ctx context.Context, p Params, n int, start time.Time, r *Response, solve func(ctx context.Context, w *worker, i int, sh *sharedBest)) *Response {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sh := &sharedBest{start: start}
	ws := make([]*worker, n)
	done := make(chan int, n)
	for i := range ws {
		ws[i] = &worker{}
		go func() {
			solve(wctx, ws[i], i, sh)
			done <- i
		}()
	}
	// The first worker to return ends the solve: whatever stopped it
	// (a proof, the first solution asked for, a limit) ends the others'
	// work too. NodeLimit is per worker, so the solve ends when one of
	// them has made that many branches.
	var win *worker // the first to prove optimality or infeasibility
	for k := range n {
		i := <-done
		if k == 0 {
			cancel()
		}
		if w := ws[i]; win == nil && (w.status == Optimal || w.status == Infeasible) {
			win = w
		}
	}
	// Every worker has returned (received from done): sh is no longer
	// written.
	values, obj := sh.values, sh.obj
	switch {
	case values != nil && win != nil && win.status == Optimal && (m.obj == nil || win.c.bestObj == obj):
		r.Status = Optimal
	case values != nil:
		// A solution is proof of feasibility whatever a worker claimed
		// (never an infeasibility or a worse optimum with sound
		// reasoning: the differential tests compare with one worker).
		r.Status = Feasible
	case win != nil && win.status == Infeasible:
		r.Status = Infeasible
	default:
		r.Status = Unknown
	}

	w0 := ws[0]
	r.Stats.Presolve = w0.stats.Presolve
	r.Stats.PresolvedVariables, r.Stats.PresolvedConstraints = w0.stats.PresolvedVariables, w0.stats.PresolvedConstraints
	r.Stats.PresolvedByKind, r.Stats.PresolvedByName = w0.stats.PresolvedByKind, w0.stats.PresolvedByName
	r.Stats.ConflictsByName = map[string]int64{}
	for _, w := range ws {
		c := w.c
		r.Stats.Branches += c.branches
		r.Stats.Conflicts += c.conflicts
		r.Stats.Solutions += c.solutions
		r.Stats.Restarts += c.restarts
		r.Stats.LNSRounds += c.lnsRounds
		r.Stats.LNSImprovements += c.lnsImpr
		if c.firstSolution > 0 && (r.Stats.FirstSolution == 0 || c.firstSolution < r.Stats.FirstSolution) {
			r.Stats.FirstSolution = c.firstSolution
		}
		for con, k := range c.conflictsByCon {
			name := m.cons[con].Name
			if name == "" {
				name = string(m.cons[con].Kind)
			}
			r.Stats.ConflictsByName[name] += k
		}
	}
	r.Stats.Workers = n

	if values != nil && r.Status != Infeasible {
		r.values = append([]int64(nil), values[:len(m.doms)]...)
		if m.obj != nil {
			r.Objective = evalExpr(m.obj.Expr, r.values)
		}
	}
	if m.obj != nil {
		// A worker's base-level lower bound holds for the solutions that
		// beat its own incumbent (its bound and the cliques implied under
		// it exclude the others): the optimum is at least the smaller of
		// the two. The best of these over the workers is valid, and so
		// is its minimum with the shared incumbent.
		b := int64(minInt64)
		for _, w := range ws {
			lb := w.lo
			if w.c.best != nil {
				lb = min(lb, w.c.bestObj)
			}
			b = max(b, lb)
		}
		if values != nil {
			b = min(b, obj)
		}
		if r.Status == Optimal {
			b = obj
		}
		if m.obj.Maximize {
			b = -b
		}
		r.Bound = b
	}
	if r.Status == Infeasible && len(m.assumptions) > 0 {
		// Core extraction is sequential, after the workers, under the
		// caller's context (the workers' is cancelled by now).
		r.Core = m.minimizeCore(ctx, win.core, w0.c.deadline)
	}
	r.Stats.Search = time.Since(start) - r.Stats.Presolve
	return r
}
