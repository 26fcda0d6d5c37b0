// Package weave compiles cluster-management policies written as SQL into
// constraint models and solves them in-process.
//
// The cluster state lives in ordinary SQL tables (SQLite or PostgreSQL).
// A policy is a schema: the tables, an annotation marking the columns the
// solver decides, and views stating the rules. Weave reads the state,
// fills in the decision columns so that every rule holds, and hands the
// tables back for the caller to act on (Solve leaves the database as it
// found it). Pure Go: no C toolchain and no system solver.
//
// # A policy
//
// Three annotations, each a comment on the lines just before a statement:
//
//	-- @variable_columns (node)        before create table: node is decided
//	-- @hard_constraint                before create view: must hold
//	-- @soft_constraint                before create view: maximised
//
// A hard-constraint view holds when every row it selects satisfies its
// where clause (or every group its having clause, or a constraint
// aggregate such as all_different in its select list). A soft-constraint
// view yields an integer; Weave maximises the sum of them. A view that
// reads no decision column is created in the database and evaluated there
// ("pushdown"); one that does is compiled into the views that read it.
// Semantics are SQL's, NULL included. A "nullable" after a column name in
// @variable_columns lets the solver leave it NULL (a pod not placed).
//
// # The pipeline
//
//	Compile        parse (internal/sqlfront), resolve names and types into
//	               the IR (internal/analyze), rewrite it (internal/rewrite)
//	CreateSchema   optional: create the tables, indexes and pushed-down views
//	Connect        check that the database has what the model reads
//	Model.Solve    read one consistent snapshot (one read transaction) and
//	               ground the model over it (internal/ground), solve it
//	               (package cp, or a Backend such as backend/minizinc),
//	               fill in the tables; with Verify, let the database
//	               re-check the solution; when infeasible, explain why
//
// Compile runs once per policy and needs no database; Solve runs whenever
// the state changes and reads the state afresh each time.
//
// # Where to start
//
// Start with [Compile], [Model.Connect] and [Model.Solve] (the example on
// Model.Solve runs the whole pipeline on an in-memory SQLite database),
// then [SolveOptions] and [Result]. [Result.Table] returns a solved table,
// every row with its decision columns filled in. Infeasibility is a
// status, not an error: a Result with Status [Infeasible] carries an
// [Explanation] naming the hard-constraint views and table rows that
// conflict (see the example on Explanation). Errors wrap the sentinel
// errors ([ErrCompile], [ErrSchemaMismatch], [ErrNotConnected], [ErrData],
// [ErrVerify], [ErrSolver]) and name the view, line or row at fault.
//
// The database is any *sql.DB: PostgreSQL through pgx's database/sql
// driver (github.com/jackc/pgx/v5/stdlib), anything else is treated as
// SQLite (modernc.org/sqlite, driver name "sqlite"; an in-memory database
// needs db.SetMaxOpenConns(1), being per connection). [LoadRows] bulk-loads
// state (COPY on PostgreSQL).
//
// Beyond the built-in all_different, constraint aggregates can be
// registered from Go ([WithAggregate]); [WithEncoding] and
// [WithoutRewrite] switch encodings off to measure what they buy.
//
// The command weave (cmd/weave) compiles and solves a policy from the
// shell; package scheduler and the command weave-scheduler build a
// Kubernetes scheduler on this package.
package weave
