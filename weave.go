// Package weave compiles cluster-management policies written as SQL into
// constraint models and solves them in-process.
//
// A schema is plain SQL: tables hold the cluster state, a
// "-- @variable_columns (col, ...)" annotation marks the columns the solver
// decides, and views annotated "-- @hard_constraint" or "-- @soft_constraint"
// state the policy. Compile parses and analyses the schema once; Connect binds
// the model to a database holding the state; every Solve reads one consistent
// snapshot, grounds the model over it, solves it with the native solver
// (package cp) and returns the tables with their variable columns filled in.
package weave
