// Package cp is Weave's constraint solver: build a model of integer and
// Boolean variables, constraints over them and an objective, then Solve it
// in-process. Its API follows OR-tools CP-SAT's Go cpmodel; package weave
// grounds every SQL policy into a cp model, and cp can be used on its own.
// The package imports only the standard library.
//
// # Building a model
//
// [NewModel] returns an empty model. Variables are small value handles:
// [Model.NewIntVar] (a domain [lo, hi], or any [Domain] with
// [Model.NewIntVarFromDomain]) and [Model.NewBoolVar], which returns a
// [Lit]; [Lit.Not] negates it. A [LinearExpr] is a weighted sum built with
// AddTerm, AddLit and AddConstant. The constraints:
//
//   - linear: AddLinear, AddEquality, AddLessOrEqual, AddGreaterOrEqual,
//     AddNotEqual;
//   - Boolean: AddBoolOr, AddBoolAnd, AddAtMostOne, AddExactlyOne,
//     AddImplication;
//   - all_different, optionally except some shared values
//     (AddAllDifferent, AddAllDifferentExcept);
//   - element and table (AddElement, AddVarElement,
//     AddAllowedAssignments);
//   - membership of a value set or of the values other variables take
//     (AddMembership, AddNonMembership, AddVarMembership);
//   - bin packing (AddBinPacking) and min/max (AddMinEquality,
//     AddMaxEquality).
//
// Each returns a [Constraint] that can be made conditional
// (OnlyEnforceIf) and named (WithName: weave names each one after its SQL
// view). [Model.Minimize] or [Model.Maximize] sets the objective;
// [Model.AddHint] suggests a starting value, [Model.AddDecisionStrategy]
// the variables to branch on first.
//
// Building a model never panics: the first error (foreign variable, empty
// domain, overflow, bad argument) is kept on the Model ([Model.Err]),
// every later builder call stays chainable, and Solve reports the error
// with status [ModelInvalid].
//
// # Solving
//
// [Model.Solve] takes a context and [Params] (time limit, seed, workers,
// stop conditions) and returns a [Response]: a [Status] (OPTIMAL,
// FEASIBLE, INFEASIBLE, UNKNOWN or MODEL_INVALID), the objective and its
// proven bound, the values ([Response.Value], [Response.LitValue]) and
// search statistics. Infeasibility is a status, not an error. One worker
// (the default) with a given Seed is deterministic, up to where a time
// limit interrupts it (Params.NodeLimit is the deterministic limit).
// [Model.Verify] is an
// independent checker of a response against every constraint, meant as
// the referee for tests and for callers that want to double-check.
// Assumptions ([Model.AddAssumptions], [Model.CheckAssumptions],
// [Response.Core]) and [Checker] serve explanations: which assumed
// literals cannot hold together.
//
// The examples start from a knapsack proven optimal (the example on
// Model.Solve) and an infeasible model (the example on Status).
// Read-only introspection (NumVars, VarDomain, Constraints, Objective)
// lets other packages translate a model to other solvers (e.g.
// backend/minizinc).
//
// # The engine
//
// Solve presolves the model, then searches: propagation with a trail,
// dom/wdeg search with Luby restarts and last-conflict reasoning,
// branch-and-bound, solution-guided value choice and large-neighbourhood
// search (LNS); a small search, at most 2^32 combinations of the decision
// variables, is searched completely, with doubling restarts and no LNS,
// so that it is proven.
//
// Search branches first on the decision variables: those given to
// AddDecisionStrategy, or else the inferred ones (bin-packing items,
// all_different members, element indices); auxiliary variables come last
// and are usually fixed by propagation. Bin-packing items take the bin
// that keeps the most capacity on the objective-related resources (worst
// fit; best fit while no solution is known or on alternate restarts).
// The bin-packing propagator is incremental (thousands of bins are
// cheap). When placing an item in a bin is refuted, the item also
// loses every bin interchangeable with it at that node (same capacity
// and side constraints in the model, same load bounds, and every other
// item's domain holding both or neither): identical empty bins are
// tried once, not once each (binsym.go). Presolve folds unary constraints into domains and derives
// implied all_different constraints over items that pairwise cannot
// share a bin, again under the objective bound whenever the incumbent
// improves, which proves tight packings infeasible or optimal. Before
// the search, the objective's bound is probed at the root by bisection:
// a value is refuted when propagation under it fails or when items that
// pairwise cannot share a bin under the capacities it leaves (or that the
// model separates with x != y) outnumber the bins; Response.Bound reports
// the result (e.g. 10-13 on the 100x50 max-min benchmark, whose area
// bound is 24-28; seed 2's optimum is 5, reached in milliseconds, and
// only a bound as strong as the set-partitioning LP relaxation, 50.2
// bins at spare 6, proves it). The probe is skipped under StopAfterFirstSolution and
// otherwise limited to a tenth of the remaining time and to
// ImprovementTimeout. LNS
// relaxes the bins at the bottleneck of the objective plus random ones;
// before any solution it repairs the deepest partial assignment: its
// unplaced items plus random bins, or, every other round, bins drawn
// with a bias towards those that leave the most room (a tight packing
// needs that room for its unplaced items). When the objective is one
// variable defined by min constraints over arguments linked to bins (the
// smallest spare over the used bins and the resources), three LNS rounds
// in four are bottleneck rounds (lns_maxmin.go): repack a bottleneck bin
// with roomy and random ones so that every repacked argument rises above
// the minimum; a solution at the same objective with fewer arguments at
// the minimum becomes the incumbent (leximin improvement), and the base
// level then holds only "as good as the incumbent" (solver.weakRoot).
//
// The time limit and the context are honoured in every phase, root
// propagation, implied cliques and the bound probe included: an
// interrupted solve returns UNKNOWN (or the best solution found), never a
// conclusion it did not prove. The trail records nothing at the root,
// saves a domain word or a propagator value at most once per level (a
// bin that fills up removes its value from thousands of items in one
// step), and grows in chunks without copying: about 140 MiB peak on the
// 5,000-item x 10,000-bin max-min benchmark.
//
// With Params.Workers > 1 the solve is a parallel portfolio
// (portfolio.go): each worker compiles its own engine and runs the
// search above under its own strategy (worker 0 exactly the
// single-worker search; the others other seeds, value choices, restart
// schedules and LNS effort); they exchange only the incumbent, which
// tightens every worker's branch-and-bound bound, and the first worker
// to prove optimality or infeasibility (or to meet a limit) ends the
// others. One worker (the default) is deterministic for a seed.
package cp
