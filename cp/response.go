package cp

import "time"

// Params controls a Solve call.
type Params struct {
	// TimeLimit bounds the search; 0 means no limit (the context still
	// applies).
	TimeLimit time.Duration
	// Seed makes randomised choices (LNS neighbourhoods, tie breaks)
	// reproducible; with Workers <= 1 the search is deterministic for a
	// fixed Seed, up to where the time limit interrupts it. Worker i of a
	// portfolio uses Seed+i.
	Seed int64
	// Workers is the number of search workers run in parallel (a
	// portfolio); 0 and 1 mean one (the deterministic single search), a
	// negative value means runtime.GOMAXPROCS(0). Each worker compiles
	// its own copy of the engine (memory grows with the number of
	// workers) and searches with its own strategy: worker 0 as a single
	// worker would, the others with other seeds, value choices, restart
	// schedules and more or no LNS. They share the best solution found
	// (each tightens its branch-and-bound bound with it) and end together
	// as soon as one of them returns: a proof of optimality or
	// infeasibility, the first solution under StopAfterFirstSolution, or
	// a limit. With several workers the result depends on timing, not
	// only on the Seed. With assumptions, the core of an infeasible
	// solve is minimised after the workers end, sequentially. Every
	// worker compiles the model itself before it polls the limits (tens
	// of ms on the largest models): more workers than cores delay a
	// cancellation by that much.
	Workers int
	// NodeLimit, if > 0, stops the search after that many branches
	// (deterministic alternative to TimeLimit, for tests). With several
	// workers it applies to each worker's own branches, and the solve
	// ends when the first worker reaches it (Stats.Branches, summed over
	// the workers, may then exceed it).
	NodeLimit int64
	// StopAfterFirstSolution returns as soon as one solution is found
	// (status Feasible, or Optimal without an objective).
	StopAfterFirstSolution bool
	// DisableLNS turns large-neighbourhood search off (complete search only).
	DisableLNS bool
	// ImprovementTimeout, if > 0, stops the search once no better solution
	// has been found for that long since the last one (status Feasible,
	// unless optimality was proven first): for a loop that would rather
	// act on a good solution now than on a slightly better one at the time
	// limit. The clock starts at the first solution (with several
	// workers, at the last improvement by any of them). With it, the
	// objective-bound probe runs after the first solution rather than
	// before the search, so that solution comes sooner.
	ImprovementTimeout time.Duration
	// WideGapImprovementTimeout, if longer than a non-zero
	// ImprovementTimeout, replaces it while the best solution is not
	// proven within WideGap of the optimum (|Objective − Bound| >
	// WideGap): a loop that stops a solve after a short wait once its
	// solution is nearly optimal can search longer while a large part of
	// the objective may still be missing. A scheduler whose objective
	// rewards each placed pod with more than all its other terms together
	// sets WideGap just below that reward, and waits longer only while a
	// pod left without a node might still be placed.
	WideGapImprovementTimeout time.Duration
	// WideGap is the gap above which WideGapImprovementTimeout applies.
	WideGap int64
	// AbsoluteGapLimit, if > 0, stops the search once the best solution
	// is proven within that distance of the optimum: |Objective − Bound|
	// <= AbsoluteGapLimit (status Feasible, or Optimal when they meet),
	// as CP-SAT's absolute_gap_limit. The bound is the one proven at the
	// root (presolve, the objective-bound probe, restarts), so it helps a
	// model whose bound comes out tight; with an ImprovementTimeout the
	// probe then runs as soon as the first solution is found.
	AbsoluteGapLimit int64
}

// Status is the outcome of Solve.
type Status int

// Solve outcomes.
const (
	Unknown      Status = iota // no solution found before the limit
	ModelInvalid               // the model has a build error
	Feasible                   // a solution, optimality not proven
	Infeasible                 // proven infeasible (under the assumptions, if any)
	Optimal                    // proven optimal, or feasible with no objective
)

// String returns the CP-SAT style name, e.g. "OPTIMAL".
func (s Status) String() string {
	switch s {
	case Unknown:
		return "UNKNOWN"
	case ModelInvalid:
		return "MODEL_INVALID"
	case Feasible:
		return "FEASIBLE"
	case Infeasible:
		return "INFEASIBLE"
	case Optimal:
		return "OPTIMAL"
	}
	return "STATUS(?)"
}

// Response is the result of Solve. It is never nil.
type Response struct {
	Status Status
	// Objective is the objective value of the returned solution.
	Objective int64
	// Bound is the best proven bound on the objective (a lower bound when
	// minimising, an upper bound when maximising); equal to Objective when
	// Optimal.
	Bound int64
	// Core, when Status is Infeasible and the model has assumptions, is a
	// subset of the assumptions that is infeasible on its own.
	Core []Lit
	// Stats describes the model and the search.
	Stats Stats

	values []int64
}

// Stats are model and search statistics.
type Stats struct {
	Variables, Constraints int
	ConstraintsByKind      map[string]int
	// After presolve (root propagation): variables not fixed, constraints
	// not yet entailed.
	PresolvedVariables, PresolvedConstraints int
	PresolvedByKind                          map[string]int
	// PresolvedByName counts the open constraints per WithName name
	// ("" for unnamed ones) and kind, so a caller can say what each
	// source of constraints still weighs after presolve.
	PresolvedByName                      map[string]map[string]int
	Branches, Conflicts, Solutions       int64
	Restarts, LNSRounds, LNSImprovements int64
	// ConflictsByName counts propagation failures per constraint name
	// (WithName), showing which SQL views drive the search.
	ConflictsByName  map[string]int64
	Presolve, Search time.Duration
	// FirstSolution is the time from the start of Solve to the first
	// solution (0 if none was found).
	FirstSolution time.Duration
	// Workers is the number of search workers that ran (Params.Workers
	// resolved). With several, Branches, Conflicts, Solutions (each
	// worker's own), Restarts, LNSRounds, LNSImprovements and
	// ConflictsByName are sums over the workers, FirstSolution is the
	// earliest, and Presolve and the Presolved counts are worker 0's.
	Workers int
}

// HasSolution reports whether the response carries an assignment.
func (r *Response) HasSolution() bool { return r.values != nil }

// Value returns x's value in the solution (0 without a solution).
func (r *Response) Value(x IntVar) int64 {
	if r.values == nil || x.idx < 0 || int(x.idx) >= len(r.values) {
		return 0
	}
	return r.values[x.idx]
}

// LitValue returns l's truth value in the solution (false without one).
func (r *Response) LitValue(l Lit) bool {
	if r.values == nil {
		return false
	}
	v := r.Value(l.Var())
	if l.IsNegated() {
		return v == 0
	}
	return v == 1
}

// Values returns the whole assignment indexed by variable index, or nil.
func (r *Response) Values() []int64 { return append([]int64(nil), r.values...) }

// NewResponseFromValues builds a response carrying the given assignment
// (indexed by variable index), e.g. to Verify a solution from another
// solver. The objective is evaluated from the values.
func (m *Model) NewResponseFromValues(values []int64) *Response {
	r := &Response{Status: Feasible, values: append([]int64(nil), values...)}
	if m.obj != nil && len(values) == len(m.doms) {
		r.Objective = evalExpr(m.obj.Expr, r.values)
	}
	return r
}
