// Package cp is Weave's standalone constraint solver: a CP-SAT-shaped model
// builder (integer and Boolean variables with domains, linear constraints
// with enforcement literals, all_different (optionally except some shared
// values), element, table, membership (of a value set, or of the values
// other variables take: var_membership), bin packing, min/max, an
// objective) and an in-process engine
// (propagation with a trail, dom/wdeg search with Luby restarts and
// last-conflict reasoning, branch-and-bound, solution-guided value choice
// and large-neighbourhood search; a small search, at most 2^32
// combinations of the decision variables, is searched completely, with
// doubling restarts and no LNS, so that it is proven).
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
//
// Building a model never panics: the first error (foreign variable, empty
// domain, overflow, bad argument) is kept on the Model, every later builder
// call stays chainable, and Solve reports the error with status
// ModelInvalid. Verify is an independent checker meant as the referee for
// tests and for callers that want to double-check a response.
//
// Read-only introspection (NumVars, VarDomain, Constraints, Objective) lets
// other packages translate a model to other solvers (e.g. MiniZinc).
//
// The package imports only the standard library.
package cp
