// Package sqlfront is the SQL front end of Weave: a hand-written scanner and
// recursive-descent parser for the subset of SQL that Weave schemas use
// (create table, create index and create view statements whose queries are
// select blocks with inner joins, grouping and subqueries), together with the
// comment annotations (-- @variable_columns, -- @hard_constraint,
// -- @soft_constraint) that mark decision variables and constraints. Parse
// turns schema text into a position-annotated AST and reports every error it
// finds, each with a line:col position and the name of the table or view it
// belongs to; later passes use Walk, Inspect and Format to analyse the AST and
// to word their own errors.
package sqlfront
