package cp

import (
	"context"
	"math/rand/v2"
	"time"
)

// Checker decides satisfiability under changing sets of assumptions with
// one solver built once: core minimisation (QuickXplain, deletion) asks
// dozens of such questions of the same model, and rebuilding the engine
// for each dominates on large models. The objective is ignored.
type Checker struct {
	m  *Model
	s  *solver
	ok bool
}

// NewChecker builds the engine for m and propagates it at the root.
func (m *Model) NewChecker() *Checker {
	c := &Checker{m: m}
	if m.err != nil {
		return c
	}
	s, ok := newSolver(m, false)
	c.s, c.ok = s, ok && s.propagate()
	return c
}

// Check reports whether the constraints hold with exactly lits assumed
// true: Infeasible, Feasible, or Unknown when neither was shown within the
// deadline and the conflict budget (ModelInvalid for a bad model or a
// foreign literal). The checker returns to the root afterwards.
func (c *Checker) Check(ctx context.Context, lits []Lit, deadline time.Time, conflicts int64) Status {
	m := c.m
	if m.err != nil {
		return ModelInvalid
	}
	for _, l := range lits {
		if !m.okLit(l, "Checker.Check") {
			return ModelInvalid
		}
	}
	if !c.ok {
		return Infeasible
	}
	s := c.s
	defer s.backtrackTo(0)
	ctl := &searchCtl{ctx: ctx, deadline: deadline, lastConf: -1, conflictsByCon: map[int]int64{}, rng: rand.New(rand.NewPCG(1, 2))}
	for _, a := range lits {
		s.pushLevel()
		s.decisions = append(s.decisions, decision{v: -1})
		if !s.setLit(a.idx, true) || !s.propagate() {
			return Infeasible
		}
	}
	// Search above a level of its own: a refutation at the search's base
	// level is applied there, and at level 0 it would outlive this
	// question (a later Check would start from a root left inconsistent
	// by the failure that ended this one).
	s.pushLevel()
	s.decisions = append(s.decisions, decision{v: -1})
	switch s.dfs(ctl, len(lits)+1, conflicts) {
	case dfsExhausted:
		return Infeasible
	case dfsSolved:
		return Feasible
	}
	return Unknown
}

// FirstFailure assumes lits one by one, propagating after each, and
// returns the index of the first literal after which propagation fails,
// or -1 if none does (search may still refute them). The prefix up to
// and including that index is infeasible; core extraction builds on it.
func (c *Checker) FirstFailure(lits []Lit) int {
	m := c.m
	for _, l := range lits {
		if !m.okLit(l, "Checker.FirstFailure") {
			return -1
		}
	}
	if !c.ok {
		return 0
	}
	s := c.s
	defer s.backtrackTo(0)
	for i, a := range lits {
		s.pushLevel()
		s.decisions = append(s.decisions, decision{v: -1})
		if !s.setLit(a.idx, true) || !s.propagate() {
			return i
		}
	}
	return -1
}
