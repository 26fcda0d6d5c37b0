package ir

// Expr is a typed expression. The marker method keeps the set of nodes
// closed to this package.
type Expr interface {
	Type() Type
	Position() Pos
	// Var reports whether the value depends on decision columns.
	Var() bool
	expr()
}

// ColRef reads column Col of source Source of the query Up levels out
// (0: the query the expression belongs to).
type ColRef struct {
	P      Pos
	Up     int
	Source int
	Col    int
	Name   string // "alias.column", for printing and errors
	T      Type
	IsVar  bool
}

// Const is a literal: int64, bool, string or nil.
type Const struct {
	P     Pos
	Value any
	T     Type
}

// Binary is an arithmetic, comparison or logical operation. Op is one of
// + - * / % = <> < <= > >= and or.
type Binary struct {
	P    Pos
	Op   string
	L, R Expr
	T    Type
}

// Unary is "not" or "-".
type Unary struct {
	P  Pos
	Op string
	X  Expr
}

// Agg is an aggregate call: count, sum, min, max or a registered
// aggregate. Arg is nil for count(*).
type Agg struct {
	P        Pos
	Func     string
	Arg      Expr
	Distinct bool
	T        Type
	// Constraint marks constraint aggregates (all_different and
	// user-registered ones): they hold or not, they yield no value.
	Constraint bool
}

// In is "x [not] in (list)" or "x [not] in (subquery)".
type In struct {
	P    Pos
	X    Expr
	Not  bool
	List []Expr
	Sub  *Query
}

// Exists is "[not] exists (subquery)".
type Exists struct {
	P   Pos
	Not bool
	Sub *Query
}

// Scalar is a scalar subquery "(select ...)".
type Scalar struct {
	P   Pos
	Sub *Query
	T   Type
}

// Case is "case when c1 then r1 ... else e end"; an operand form is
// lowered to equality conditions.
type Case struct {
	P     Pos
	Whens []When
	Else  Expr // nil means NULL
	T     Type
}

// When is one arm of a Case.
type When struct {
	Cond, Result Expr
}

// IsNull is "x is [not] null".
type IsNull struct {
	P   Pos
	X   Expr
	Not bool
}

// Coalesce is "coalesce(a, b, ...)".
type Coalesce struct {
	P    Pos
	Args []Expr
	T    Type
}

func (*ColRef) expr()   {}
func (*Const) expr()    {}
func (*Binary) expr()   {}
func (*Unary) expr()    {}
func (*Agg) expr()      {}
func (*In) expr()       {}
func (*Exists) expr()   {}
func (*Scalar) expr()   {}
func (*Case) expr()     {}
func (*IsNull) expr()   {}
func (*Coalesce) expr() {}

func (e *ColRef) Type() Type   { return e.T }
func (e *Const) Type() Type    { return e.T }
func (e *Binary) Type() Type   { return e.T }
func (e *Unary) Type() Type    { return e.X.Type() }
func (e *Agg) Type() Type      { return e.T }
func (e *In) Type() Type       { return Bool }
func (e *Exists) Type() Type   { return Bool }
func (e *Scalar) Type() Type   { return e.T }
func (e *Case) Type() Type     { return e.T }
func (e *IsNull) Type() Type   { return Bool }
func (e *Coalesce) Type() Type { return e.T }

func (e *ColRef) Position() Pos   { return e.P }
func (e *Const) Position() Pos    { return e.P }
func (e *Binary) Position() Pos   { return e.P }
func (e *Unary) Position() Pos    { return e.P }
func (e *Agg) Position() Pos      { return e.P }
func (e *In) Position() Pos       { return e.P }
func (e *Exists) Position() Pos   { return e.P }
func (e *Scalar) Position() Pos   { return e.P }
func (e *Case) Position() Pos     { return e.P }
func (e *IsNull) Position() Pos   { return e.P }
func (e *Coalesce) Position() Pos { return e.P }

func (e *ColRef) Var() bool { return e.IsVar }
func (e *Const) Var() bool  { return false }
func (e *Binary) Var() bool { return e.L.Var() || e.R.Var() }
func (e *Unary) Var() bool  { return e.X.Var() }
func (e *Agg) Var() bool    { return e.Arg != nil && e.Arg.Var() }
func (e *In) Var() bool {
	if e.X.Var() {
		return true
	}
	for _, x := range e.List {
		if x.Var() {
			return true
		}
	}
	return e.Sub != nil && e.Sub.Var()
}
func (e *Exists) Var() bool { return e.Sub.Var() }
func (e *Scalar) Var() bool { return e.Sub.Var() }
func (e *Case) Var() bool {
	for _, w := range e.Whens {
		if w.Cond.Var() || w.Result.Var() {
			return true
		}
	}
	return e.Else != nil && e.Else.Var()
}
func (e *IsNull) Var() bool { return e.X.Var() }
func (e *Coalesce) Var() bool {
	for _, a := range e.Args {
		if a.Var() {
			return true
		}
	}
	return false
}

// Var reports whether the query's result depends on decision columns:
// through a source, a filter, or an expression.
func (q *Query) Var() bool {
	for _, s := range q.From {
		// Rows of a compiled view may exist only under a decision; rows
		// of a table always exist (their decision cells matter only where
		// an expression reads them).
		if s.Kind == FromQuery && (s.View != nil && s.View.Variable || s.View == nil && s.Query.Var()) {
			return true
		}
	}
	for _, g := range q.GroupBy {
		if g.Var() {
			return true
		}
	}
	for _, c := range q.Constraints {
		if c.Var() {
			return true
		}
	}
	for _, f := range q.Filters {
		if f.Var() {
			return true
		}
	}
	for _, h := range q.Having {
		if h.Var() {
			return true
		}
	}
	for _, o := range q.Select {
		if o.Expr.Var() {
			return true
		}
	}
	return q.Check != nil && q.Check.Var()
}

// Inspect calls f for e and every expression below it, depth first,
// descending into subqueries; f returning false prunes the subtree.
func Inspect(e Expr, f func(Expr) bool) {
	if e == nil || !f(e) {
		return
	}
	switch e := e.(type) {
	case *Binary:
		Inspect(e.L, f)
		Inspect(e.R, f)
	case *Unary:
		Inspect(e.X, f)
	case *Agg:
		Inspect(e.Arg, f)
	case *In:
		Inspect(e.X, f)
		for _, x := range e.List {
			Inspect(x, f)
		}
		if e.Sub != nil {
			InspectQuery(e.Sub, f)
		}
	case *Exists:
		InspectQuery(e.Sub, f)
	case *Scalar:
		InspectQuery(e.Sub, f)
	case *Case:
		for _, w := range e.Whens {
			Inspect(w.Cond, f)
			Inspect(w.Result, f)
		}
		Inspect(e.Else, f)
	case *IsNull:
		Inspect(e.X, f)
	case *Coalesce:
		for _, a := range e.Args {
			Inspect(a, f)
		}
	}
}

// InspectQuery calls Inspect on every expression of q, including derived
// tables in its from clause.
func InspectQuery(q *Query, f func(Expr) bool) {
	for _, s := range q.From {
		if s.Kind == FromQuery && s.View == nil && s.Query != nil {
			InspectQuery(s.Query, f)
		}
	}
	InspectOwn(q, f)
}

// InspectOwn calls Inspect on q's own expressions, not on those of the
// derived tables in its from clause: a column reference met here counts
// its Up from q (a derived table has no enclosing query).
func InspectOwn(q *Query, f func(Expr) bool) {
	for _, x := range q.Filters {
		Inspect(x, f)
	}
	for _, x := range q.GroupBy {
		Inspect(x, f)
	}
	for _, x := range q.Having {
		Inspect(x, f)
	}
	Inspect(q.Check, f)
	for _, a := range q.Constraints {
		Inspect(a, f)
	}
	for _, o := range q.Select {
		Inspect(o.Expr, f)
	}
}
