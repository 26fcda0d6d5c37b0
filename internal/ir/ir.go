// Package ir is Weave's intermediate representation of a compiled schema: the
// tables and the views, with every name resolved, every expression typed and
// marked as depending on decision variables or not. Queries are kept as
// comprehensions over their sources ([select | from, filters]) so the
// grounder can evaluate them over fetched data; the rewrite passes in this
// package change the IR only, never the model.
package ir

import (
	"fmt"
	"strings"
)

// Pos is a position in the schema text.
type Pos struct {
	Line, Col int
}

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Type is the SQL type of a column or expression.
type Type uint8

// The types Weave understands. Null is the type of the literal NULL only.
const (
	Invalid Type = iota
	Int
	Bool
	String
	Null
)

func (t Type) String() string {
	switch t {
	case Int:
		return "integer"
	case Bool:
		return "boolean"
	case String:
		return "string"
	case Null:
		return "null"
	}
	return "invalid"
}

// Program is a compiled schema.
type Program struct {
	Tables []*Table
	Views  []*View
}

// Table returns the table with the given (lower-case) name, or nil.
func (p *Program) Table(name string) *Table {
	for _, t := range p.Tables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// View returns the view with the given name, or nil.
func (p *Program) View(name string) *View {
	for _, v := range p.Views {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// Table is a base table of the schema.
type Table struct {
	Name string
	// Schema is the schema (PostgreSQL) or attached database (SQLite)
	// the policy qualifies the table's name with, or "": the name is
	// then resolved by the connection (search_path).
	Schema     string
	Pos        Pos
	Columns    []*Column
	PrimaryKey []int // column indexes
	// Text is the create statement, executed verbatim by CreateSchema.
	Text string
	// Indexes are create index statements for this table.
	Indexes []string
}

// HasVariables reports whether the table has decision columns.
func (t *Table) HasVariables() bool {
	for _, c := range t.Columns {
		if c.Variable {
			return true
		}
	}
	return false
}

// Column returns the index of the named column, or -1.
func (t *Table) Column(name string) int {
	for i, c := range t.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// Column is a column of a base table.
type Column struct {
	Name    string
	Type    Type
	NotNull bool
	// Variable marks a decision column (@variable_columns).
	Variable bool
	// Unique marks a decision column with a single-column primary key or
	// unique constraint: its values are pairwise distinct (NULLs aside).
	Unique bool
	// Nullable marks a decision column that may be left NULL
	// ("-- @variable_columns (col nullable)").
	Nullable bool
	// Domain lists where the values of a decision column come from; the
	// domain is the intersection of the sources' values.
	Domain []*DomainSource
	// References is the foreign key on this single column, if any.
	References *ColumnRefTarget
}

// ColumnRefTarget names the column a foreign key points at.
type ColumnRefTarget struct {
	Table, Column string
}

// DomainSource is one reason a decision column takes values from a set:
// Query yields one column of constant values.
type DomainSource struct {
	Reason string // e.g. "foreign key references node(name)"
	View   string // the view that implied it, if any
	Pos    Pos
	Query  *Query
	Values []any
}

// ViewKind says what Weave does with a view.
type ViewKind uint8

// View kinds.
const (
	// Pushdown views read input columns only; the database evaluates them.
	Pushdown ViewKind = iota
	// Hard views are constraints that every solution satisfies.
	Hard
	// Soft views yield integers whose sum the solver maximises.
	Soft
	// Intermediate views touch decision columns and are compiled into the
	// views that use them.
	Intermediate
)

func (k ViewKind) String() string {
	switch k {
	case Pushdown:
		return "pushed down to the database"
	case Hard:
		return "hard constraint"
	case Soft:
		return "soft constraint"
	case Intermediate:
		return "intermediate"
	}
	return "?"
}

// Role is the kind's one-word name: pushdown, hard, soft or intermediate
// (what weave check and weave explain print).
func (k ViewKind) Role() string {
	switch k {
	case Pushdown:
		return "pushdown"
	case Hard:
		return "hard"
	case Soft:
		return "soft"
	}
	return "intermediate"
}

// View is a view of the schema.
type View struct {
	Name string
	// Schema qualifies the view's name, as Table.Schema does.
	Schema string
	Pos    Pos
	Kind   ViewKind
	Query  *Query
	// Text is the create view statement.
	Text string
	// Variable reports whether the view depends on decision columns.
	Variable bool
	// ByDomain reports a hard view whose whole check is the membership
	// that gives its table's decision column a domain ("select * from t
	// where t.x in (select ...)", or "t.x is null or t.x in ..."): the
	// domain enforces it, and grounding posts nothing for it.
	ByDomain bool
}

// Query is a select block in comprehension form:
//
//	[Select | s1 <- From[0], s2 <- From[1], ..., Filters, group by GroupBy, Having]
//
// For a hard view, Check holds the condition every row (or group) must
// satisfy; Filters and Having then only restrict which rows are checked.
type Query struct {
	Pos     Pos
	From    []*Source
	Filters []Expr // conjuncts of join conditions and (unless it is the check) the where clause
	GroupBy []Expr
	// Aggregate is true for a query with group by or aggregates: it yields
	// one row per group (one row in all when there is no group by).
	Aggregate bool
	Having    []Expr // conjuncts
	// Check is a hard view's constraint: the where clause of a query
	// without aggregation, the having clause of one with it.
	Check Expr
	// Constraints are constraint aggregates (all_different ...) selected
	// by a hard view: each must hold in every group.
	Constraints []*Agg
	Select      []*Output
	Distinct    bool
	// Correlated reports whether the query refers to an enclosing query.
	Correlated bool
}

// Output is one column of a query's result.
type Output struct {
	Name string
	Expr Expr
}

// SourceKind says what a query's source reads.
type SourceKind uint8

// Source kinds.
const (
	// FromTable reads a base table.
	FromTable SourceKind = iota
	// FromInput reads a pushdown view, evaluated by the database.
	FromInput
	// FromQuery reads a compiled view or a derived table.
	FromQuery
)

// Source is one relation in a from clause.
type Source struct {
	Alias string
	Kind  SourceKind
	Table *Table // FromTable
	View  *View  // FromInput, or FromQuery for a compiled view
	Query *Query // FromQuery
	// Columns are the names and types of the relation's columns; Var marks
	// those that depend on decision columns.
	Columns []SourceColumn
	Pos     Pos
}

// Name is the relation's name (table or view), or its alias for a derived table.
// QuoteIdent quotes a name for SQL.
func QuoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// QualifiedName is a table's or view's name as SQL: quoted, and
// qualified by its schema when the policy names one.
func QualifiedName(schema, name string) string {
	if schema == "" {
		return QuoteIdent(name)
	}
	return QuoteIdent(schema) + "." + QuoteIdent(name)
}

// SQLName is the table's name as SQL (QualifiedName).
func (t *Table) SQLName() string { return QualifiedName(t.Schema, t.Name) }

// SQLName is the view's name as SQL (QualifiedName).
func (v *View) SQLName() string { return QualifiedName(v.Schema, v.Name) }

// SQLName is the name as SQL of the table or view a source reads.
func (s *Source) SQLName() string {
	switch {
	case s.Table != nil:
		return s.Table.SQLName()
	case s.View != nil:
		return s.View.SQLName()
	}
	return QuoteIdent(s.Alias)
}

func (s *Source) Name() string {
	switch {
	case s.Table != nil:
		return s.Table.Name
	case s.View != nil:
		return s.View.Name
	}
	return s.Alias
}

// SourceColumn describes a column of a source.
type SourceColumn struct {
	Name string
	Type Type
	Var  bool
}
