// Package cp is Weave's standalone constraint solver: a CP-SAT-shaped model
// builder (integer and Boolean variables with domains, linear constraints
// with enforcement literals, all_different, element, table, membership,
// bin packing, min/max, an objective) and an in-process engine
// (propagation with a trail, dom/wdeg search with Luby restarts,
// branch-and-bound, solution-guided value choice and large-neighbourhood
// search).
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
