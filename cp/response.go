package cp

import "time"

// Params controls a Solve call.
type Params struct {
	// TimeLimit bounds the search; 0 means no limit (the context still
	// applies).
	TimeLimit time.Duration
	// Seed makes randomised choices (LNS neighbourhoods, tie breaks)
	// reproducible; with Workers <= 1 the search is deterministic for a
	// fixed Seed, up to where the time limit interrupts it.
	Seed int64
	// Workers is the number of parallel workers; 0 means 1. Only one
	// worker is used for now.
	Workers int
	// NodeLimit, if > 0, stops the search after that many branches
	// (deterministic alternative to TimeLimit, for tests).
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
	// limit. The clock starts at the first solution. With it, the
	// objective-bound probe runs after the first solution rather than
	// before the search, so that solution comes sooner.
	ImprovementTimeout time.Duration
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
