package weave

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weavesql/weave/cp"
)

// Status is the outcome of a solve. Infeasibility is a status, not an error:
// errors are reserved for failures (bad SQL, database trouble, invalid models).
type Status int

// The statuses of a solve, in the order of cp.Status.
const (
	// Unknown means no solution was found before the time limit.
	Unknown Status = iota
	// Feasible means a solution was found but not proven optimal.
	Feasible
	// Infeasible means the hard constraints are proven unsatisfiable.
	Infeasible
	// Optimal means the solution is proven optimal (or the model has no
	// soft constraints and the solution satisfies every hard constraint).
	Optimal
)

var statusNames = [...]string{Unknown: "UNKNOWN", Feasible: "FEASIBLE", Infeasible: "INFEASIBLE", Optimal: "OPTIMAL"}

// String returns the upper-case name used in JSON output: UNKNOWN,
// FEASIBLE, INFEASIBLE or OPTIMAL.
func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// HasSolution reports whether a Result with this status carries tables.
func (s Status) HasSolution() bool { return s == Feasible || s == Optimal }

// Sentinel errors, checked with errors.Is. Errors returned by this package
// wrap one of them and add context (view, position, table, rows).
var (
	// ErrCompile marks errors in the schema text: syntax, unsupported SQL,
	// unknown names, type errors, undecidable domains.
	ErrCompile = errors.New("weave: compile error")
	// ErrSchemaMismatch marks a database that lacks a table, view or
	// column the model reads, or holds one with an incompatible type.
	ErrSchemaMismatch = errors.New("weave: schema mismatch")
	// ErrNotConnected is returned by Solve before a successful Connect.
	ErrNotConnected = errors.New("weave: model not connected to a database")
	// ErrData marks state the model cannot be grounded on, such as a NULL
	// where the schema promises a value or a value outside every domain.
	ErrData = errors.New("weave: bad data")
	// ErrVerify marks a solution the database itself found to violate a
	// hard constraint, or a soft constraint whose value differs from the
	// solver's: a compiler bug, never returned as a valid solution.
	ErrVerify = errors.New("weave: verification failed")
	// ErrSolver marks a failure of the solver backend (an invalid model).
	ErrSolver = errors.New("weave: solver error")
)

// SolveOptions tunes one Solve call. The zero value solves with no time
// limit other than the context's, seed 0, and no verification.
type SolveOptions struct {
	// Timeout bounds the search; on expiry Solve returns the best solution
	// found so far with status Feasible, or Unknown if there is none.
	Timeout time.Duration
	// Seed makes the search reproducible: with one worker and the same seed
	// and data, Solve returns the same solution.
	Seed int64
	// Verify re-checks the solution inside the database: the assignment
	// goes into temporary tables (local to one connection), and every hard
	// view and soft view is evaluated over them by the database itself.
	// Nothing is written to the user's tables and no lock that blocks a
	// writer is taken: SELECT, and TEMP on PostgreSQL, suffice.
	Verify bool
	// Workers is the number of parallel search workers (cp's portfolio:
	// diversified searches sharing their best solution); 0 means 1, a
	// negative value GOMAXPROCS. One worker with a Seed is deterministic.
	// On a loop of millisecond solves more than one mostly costs a second
	// model build; the native engine's default is one.
	Workers int
	// Backend solves the grounded model; nil means the native engine
	// (package cp). backend/minizinc provides the paper's MiniZinc
	// pipeline.
	Backend Backend
	// FirstSolution stops at the first solution that satisfies every hard
	// constraint (status Feasible), when any valid answer beats a better
	// one later — a scheduling loop under load.
	FirstSolution bool
	// ImprovementTimeout, if > 0, stops the search once the best solution
	// has not improved for that long (status Feasible unless proven
	// optimal): a scheduling loop gets a good placement in milliseconds
	// instead of waiting for Timeout on objectives that are rarely proven
	// optimal (max-min load balancing).
	ImprovementTimeout time.Duration
	// WideGapImprovementTimeout, if longer than a non-zero
	// ImprovementTimeout, replaces it while the best solution is not
	// proven within WideGap of the optimum (cp.Params): a scheduling loop
	// stops milliseconds after every pod that can be placed is, and
	// searches longer while a pod left without a node might still be
	// placed. The native engine honours it.
	WideGapImprovementTimeout time.Duration
	// WideGap is the gap above which WideGapImprovementTimeout applies.
	WideGap int64
	// AbsoluteGapLimit, if > 0, stops the search once the best solution
	// is proven within that much of the optimum (Result.Bound minus
	// Result.Objective, in the objective's units, at most the limit):
	// status Feasible unless they meet. A caller whose objective ranks
	// one term far above the others (pods placed, then load balance)
	// sets it below that term's unit to stop as soon as the bound shows
	// no solution does better on it. The native engine honours it;
	// backend/minizinc does not and runs to its other limits.
	AbsoluteGapLimit int64
	// NoExplain skips the explanation of an infeasible model.
	NoExplain bool
	// HintNulls makes a stored NULL in a nullable decision column a
	// hint too ("leave it NULL"), as every other stored value is: the
	// search starts from the stored configuration. By default a NULL is
	// read as a row still to decide (a pending pod), and hinting it would
	// make the first solution decide nothing; set HintNulls when the
	// caller stored a configuration in which NULL is a choice (a pod
	// evicted by a planned preemption).
	HintNulls bool
	// ExplainTimeout bounds the search for an explanation; 0 means 1s.
	ExplainTimeout time.Duration
	// TableVersions lets a solve take a table's rows from an earlier
	// solve of this Model instead of reading them: a table whose version
	// here equals its version when this Model last read it is not read
	// again. The caller promises that a table's rows have not changed
	// while its version has not: a program that writes the database
	// itself (a scheduler keeping its cluster state) counts its writes
	// per table. A table not listed, or every table when nil, is read.
	// A table read reduced to a decision's domain is read whole once it
	// keeps its version for two solves in a row, and reduced in memory
	// from then on (Stats.Reused names the tables taken so).
	TableVersions map[string]uint64
}

// Backend solves a grounded constraint model. The native engine is the
// default; another backend receives the same model, so the two can be
// compared on it. A backend returns an assignment for every variable of
// the model (cp.Model.NewResponseFromValues) with its status.
type Backend interface {
	Name() string
	Solve(ctx context.Context, m *cp.Model, p cp.Params) (*cp.Response, error)
}

// Row is one row of a solved table, keyed by column name. Values are
// int64, bool, string or nil (SQL NULL).
type Row map[string]any

// Table is a solved table: its columns in schema order and every row with
// the variable columns filled in.
type Table struct {
	Name    string
	Columns []string
	Rows    []Row
}

// Result is what Solve returns.
type Result struct {
	Status Status
	// Objective is the sum of the soft-constraint views; nil without
	// soft constraints or without a solution.
	Objective *int64
	// Bound is the best proven bound on the objective (nil if none).
	Bound *int64
	// Soft holds the value of each soft-constraint view.
	Soft map[string]int64
	// Tables holds every table with variable columns, solved, by name.
	Tables map[string]*Table
	// Explanation, when Status is Infeasible, names the hard constraints
	// and rows that conflict (nil if none was found within the budget or
	// NoExplain was set).
	Explanation *Explanation
	// Stats describes the model and the time spent in each phase.
	Stats Stats
}

// Table returns the solved table with the given name, or nil.
func (r *Result) Table(name string) *Table {
	if r == nil || r.Tables == nil {
		return nil
	}
	return r.Tables[name]
}

// Stats describes a solve: model size and time per phase.
type Stats struct {
	Variables   int            `json:"variables"`
	Constraints int            `json:"constraints"`
	ByKind      map[string]int `json:"constraints_by_kind"`
	// PerView counts the constraints each view contributed.
	PerView map[string]int `json:"constraints_by_view"`
	// Views details what each hard and soft view contributed ("load"
	// holds the bin-packing constraints shared by several views).
	Views map[string]ViewStats `json:"views"`
	// PresolvedVariables and PresolvedConstraints count what remains
	// after the solver's presolve; PresolvedByKind by kind.
	PresolvedVariables   int            `json:"presolved_variables"`
	PresolvedConstraints int            `json:"presolved_constraints"`
	PresolvedByKind      map[string]int `json:"presolved_constraints_by_kind"`
	// Rows counts the rows of each relation the solve read or reused.
	Rows map[string]int `json:"rows_read"`
	// Reused names the tables whose rows came from an earlier solve
	// (SolveOptions.TableVersions) instead of the database.
	Reused []string `json:"reused_tables,omitempty"`
	// Fetch is the time reading the snapshot and Ground the time building
	// the model; they overlap (the grounder starts on the first relations
	// read and waits only for one it reads before it arrives), so their
	// sum exceeds the wall time they take together.
	Fetch   time.Duration `json:"fetch_ns"`
	Ground  time.Duration `json:"ground_ns"`
	Solve   time.Duration `json:"solve_ns"`
	Extract time.Duration `json:"extract_ns"`
	Verify  time.Duration `json:"verify_ns"`
	Explain time.Duration `json:"explain_ns"`
	// Branches, Conflicts and Solutions come from the solver; Solutions
	// counts the improving solutions it found.
	Branches  int64 `json:"branches"`
	Conflicts int64 `json:"conflicts"`
	Solutions int64 `json:"solutions"`
	// FirstSolution is the time from the solver's start (the start of
	// the Solve phase) to its first solution, 0 if it found none; the
	// rest of Solve went to improving it or proving it optimal.
	FirstSolution time.Duration `json:"first_solution_ns"`
}

// ViewStats is what one view added to the grounded model.
type ViewStats struct {
	Variables   int            `json:"variables"`
	Constraints int            `json:"constraints"`
	ByKind      map[string]int `json:"constraints_by_kind"`
	// Presolved counts the view's constraints still open after the
	// solver's presolve (domain cuts folded, entailed ones dropped), and
	// PresolvedByKind by kind.
	Presolved       int            `json:"presolved_constraints"`
	PresolvedByKind map[string]int `json:"presolved_constraints_by_kind"`
	// Ground is the time spent grounding the view (the views it reads
	// are evaluated once, on first use, and counted there).
	Ground time.Duration `json:"ground_ns"`
}
