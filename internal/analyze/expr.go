package analyze

import (
	"github.com/weavesql/weave/internal/ir"
	"github.com/weavesql/weave/internal/sqlfront"
)

// boolExpr lowers e and checks it is Boolean; what names the clause.
func (a *analyzer) boolExpr(e sqlfront.Expr, sc *scope, what string) ir.Expr {
	x := a.expr(e, sc)
	if x == nil {
		return nil
	}
	if t := x.Type(); t != ir.Bool && t != ir.Null {
		a.errorf(e.Position(), "the %s must be a boolean condition, not %s: %s", what, article(t), sqlfront.Format(e))
		return nil
	}
	return x
}

// expr lowers an expression, typing it; it returns nil after reporting an
// error.
func (a *analyzer) expr(e sqlfront.Expr, sc *scope) ir.Expr {
	p := pos(e.Position())
	switch e := e.(type) {
	case *sqlfront.ParenExpr:
		return a.expr(e.X, sc)
	case *sqlfront.IntLit:
		return &ir.Const{P: p, Value: e.Value, T: ir.Int}
	case *sqlfront.FloatLit:
		a.errorf(e.Position(), "decimal number %s: only integers are supported", e.Text)
		return nil
	case *sqlfront.StringLit:
		return &ir.Const{P: p, Value: e.Value, T: ir.String}
	case *sqlfront.BoolLit:
		return &ir.Const{P: p, Value: e.Value, T: ir.Bool}
	case *sqlfront.NullLit:
		return &ir.Const{P: p, Value: nil, T: ir.Null}
	case *sqlfront.ColumnRef:
		return a.column(e, sc)
	case *sqlfront.UnaryExpr:
		x := a.expr(e.X, sc)
		if x == nil {
			return nil
		}
		want := ir.Int
		if e.Op == "not" {
			want = ir.Bool
		}
		if t := x.Type(); t != want && t != ir.Null {
			a.errorf(e.Position(), "%s needs %s operand, not %s", e.Op, article(want), article(t))
			return nil
		}
		if c, ok := x.(*ir.Const); ok && e.Op == "-" {
			if v, ok := c.Value.(int64); ok {
				return &ir.Const{P: p, Value: -v, T: ir.Int}
			}
		}
		return &ir.Unary{P: p, Op: e.Op, X: x}
	case *sqlfront.BinaryExpr:
		return a.binary(e, sc)
	case *sqlfront.BetweenExpr:
		x, lo, hi := a.expr(e.X, sc), a.expr(e.Lo, sc), a.expr(e.Hi, sc)
		if x == nil || lo == nil || hi == nil {
			return nil
		}
		ge := a.compare(e.Position(), ">=", x, lo)
		if ge == nil {
			return nil
		}
		le := a.compare(e.Position(), "<=", x, hi)
		if le == nil {
			return nil
		}
		var r ir.Expr = &ir.Binary{P: p, Op: "and", L: ge, R: le, T: ir.Bool}
		if e.Not {
			r = &ir.Unary{P: p, Op: "not", X: r}
		}
		return r
	case *sqlfront.IsNullExpr:
		x := a.expr(e.X, sc)
		if x == nil {
			return nil
		}
		return &ir.IsNull{P: p, X: x, Not: e.Not}
	case *sqlfront.InExpr:
		return a.in(e, sc)
	case *sqlfront.ExistsExpr:
		sub := a.subquery(e.Query, sc)
		if sub == nil {
			return nil
		}
		return &ir.Exists{P: p, Not: e.Not, Sub: sub}
	case *sqlfront.SubqueryExpr:
		n := len(a.errs)
		sub := a.subquery(e.Query, sc)
		if sub == nil || len(a.errs) > n { // its own errors say why; a column count would only echo them
			return nil
		}
		if len(sub.Select) != 1 {
			a.errorf(e.Position(), "a scalar subquery must select exactly one column, not %d", len(sub.Select))
			return nil
		}
		return &ir.Scalar{P: p, Sub: sub, T: sub.Select[0].Expr.Type()}
	case *sqlfront.CaseExpr:
		return a.caseExpr(e, sc)
	case *sqlfront.FuncCall:
		return a.call(e, sc)
	}
	a.errorf(e.Position(), "unsupported expression %s", sqlfront.Format(e))
	return nil
}

// column resolves a column reference through the scope chain.
func (a *analyzer) column(e *sqlfront.ColumnRef, sc *scope) ir.Expr {
	up := 0
	for s := sc; s != nil; s, up = s.outer, up+1 {
		var hit *ir.ColRef
		n := 0
		for si, src := range s.q.From {
			if e.Table != "" && src.Alias != e.Table {
				continue
			}
			for ci, c := range src.Columns {
				if c.Name == e.Column {
					n++
					hit = &ir.ColRef{P: pos(e.Position()), Up: up, Source: si, Col: ci, Name: src.Alias + "." + c.Name, T: c.Type, IsVar: c.Var}
				}
			}
			if e.Table != "" && hit == nil {
				a.errorf(e.Position(), "%s has no column %s", src.Name(), e.Column)
				return nil
			}
		}
		if n > 1 {
			a.errorf(e.Position(), "column %s is ambiguous; qualify it with a table name", e.Column)
			return nil
		}
		if hit != nil {
			if hit.T == ir.Invalid {
				return nil // the column's type is already reported
			}
			if up > 0 {
				for t := sc; t != s; t = t.outer {
					t.q.Correlated = true
				}
			}
			// s.inAgg: a subquery inside an aggregate's argument reads
			// the enclosing query's rows, not its groups.
			if s.grouped && !s.inAgg && !a.isGrouped(&ir.ColRef{Source: hit.Source, Col: hit.Col}, s.q) {
				a.errorf(e.Position(), "column %s must appear in the group by clause or be used in an aggregate", hit.Name)
				return nil
			}
			return hit
		}
	}
	for s := sc; s != nil; s = s.outer {
		if s.broken {
			return nil // a from item failed; its error is reported
		}
	}
	if e.Table != "" {
		a.errorf(e.Position(), "unknown table %s in %s.%s", e.Table, e.Table, e.Column)
	} else {
		a.errorf(e.Position(), "unknown column %s", e.Column)
	}
	return nil
}

// isGrouped reports whether column c may be read in a grouped query: it is
// a group by expression, or every primary-key column of its table is
// (functional dependency, as PostgreSQL allows).
func (a *analyzer) isGrouped(c *ir.ColRef, q *ir.Query) bool {
	grouped := func(src, col int) bool {
		for _, g := range q.GroupBy {
			if r, ok := g.(*ir.ColRef); ok && r.Up == 0 && r.Source == src && r.Col == col {
				return true
			}
		}
		return false
	}
	if grouped(c.Source, c.Col) {
		return true
	}
	s := q.From[c.Source]
	if s.Kind != ir.FromTable || len(s.Table.PrimaryKey) == 0 {
		return false
	}
	for _, k := range s.Table.PrimaryKey {
		if !grouped(c.Source, k) {
			return false
		}
	}
	return true
}

func (a *analyzer) subquery(sel *sqlfront.Select, sc *scope) *ir.Query {
	return a.query(sel, sc, ir.Intermediate)
}

func isComparison(op string) bool {
	switch op {
	case "=", "<>", "<", "<=", ">", ">=":
		return true
	}
	return false
}

func (a *analyzer) binary(e *sqlfront.BinaryExpr, sc *scope) ir.Expr {
	l, r := a.expr(e.L, sc), a.expr(e.R, sc)
	if l == nil || r == nil {
		return nil
	}
	p := pos(e.Position())
	switch {
	case e.Op == "and" || e.Op == "or":
		for _, x := range []ir.Expr{l, r} {
			if t := x.Type(); t != ir.Bool && t != ir.Null {
				a.errorf(e.Position(), "%s needs boolean operands, not %s", e.Op, article(t))
				return nil
			}
		}
		return &ir.Binary{P: p, Op: e.Op, L: l, R: r, T: ir.Bool}
	case isComparison(e.Op):
		return a.compare(e.Position(), e.Op, l, r)
	case e.Op == "like" || e.Op == "not like":
		a.errorf(e.Position(), "%s is not supported: compare strings with = or <>, or test membership with in (...)", e.Op)
		return nil
	case !isArithmetic(e.Op):
		a.errorf(e.Position(), "operator %s is not supported", e.Op)
		return nil
	default: // + - * / %
		for _, x := range []ir.Expr{l, r} {
			if t := x.Type(); t != ir.Int && t != ir.Null {
				a.errorf(e.Position(), "%s needs integer operands, not %s", e.Op, article(t))
				return nil
			}
		}
		if e.Op == "*" && a.decided(l, sc) && a.decided(r, sc) {
			a.errorf(e.Position(), "multiplying two expressions over decision columns is not linear: %s", sqlfront.Format(e))
			return nil
		}
		if (e.Op == "/" || e.Op == "%") && a.decided(r, sc) {
			a.errorf(e.Position(), "division by an expression over decision columns is not supported: %s", sqlfront.Format(e))
			return nil
		}
		if c, ok := r.(*ir.Const); ok && c.Value == int64(0) && (e.Op == "/" || e.Op == "%") {
			a.errorf(e.Position(), "division by zero: %s", sqlfront.Format(e))
			return nil
		}
		return &ir.Binary{P: p, Op: e.Op, L: l, R: r, T: ir.Int}
	}
}

func isArithmetic(op string) bool {
	switch op {
	case "+", "-", "*", "/", "%":
		return true
	}
	return false
}

func (a *analyzer) compare(at sqlfront.Pos, op string, l, r ir.Expr) ir.Expr {
	p := pos(at)
	lt, rt := l.Type(), r.Type()
	if lt != rt && lt != ir.Null && rt != ir.Null {
		a.errorf(at, "cannot compare %s with %s", article(lt), article(rt))
		return nil
	}
	t := lt
	if t == ir.Null {
		t = rt
	}
	if op != "=" && op != "<>" && (t == ir.String || t == ir.Bool) && (exprVar(l) || exprVar(r)) {
		a.errorf(at, "ordering comparison %s on %s over decision columns is not supported (only = and <>)", op, article(t))
		return nil
	}
	return &ir.Binary{P: p, Op: op, L: l, R: r, T: ir.Bool}
}

func (a *analyzer) in(e *sqlfront.InExpr, sc *scope) ir.Expr {
	x := a.expr(e.X, sc)
	if x == nil {
		return nil
	}
	r := &ir.In{P: pos(e.Position()), X: x, Not: e.Not}
	if e.Query != nil {
		n := len(a.errs)
		r.Sub = a.subquery(e.Query, sc)
		if r.Sub == nil || len(a.errs) > n { // its own errors say why
			return nil
		}
		if len(r.Sub.Select) != 1 {
			a.errorf(e.Position(), "the subquery of in must select exactly one column, not %d", len(r.Sub.Select))
			return nil
		}
		if t := r.Sub.Select[0].Expr.Type(); t != x.Type() && t != ir.Null && x.Type() != ir.Null {
			a.errorf(e.Position(), "in compares %s with a subquery of %s", article(x.Type()), article(t))
			return nil
		}
		return r
	}
	for _, it := range e.List {
		v := a.expr(it, sc)
		if v == nil {
			return nil
		}
		if v.Type() != x.Type() && v.Type() != ir.Null && x.Type() != ir.Null {
			a.errorf(it.Position(), "in compares %s with %s", article(x.Type()), article(v.Type()))
			return nil
		}
		r.List = append(r.List, v)
	}
	return r
}

func (a *analyzer) caseExpr(e *sqlfront.CaseExpr, sc *scope) ir.Expr {
	p := pos(e.Position())
	c := &ir.Case{P: p, T: ir.Null}
	var operand ir.Expr
	if e.Operand != nil {
		if operand = a.expr(e.Operand, sc); operand == nil {
			return nil
		}
	}
	unify := func(x ir.Expr, at sqlfront.Pos) bool {
		t := x.Type()
		if t == ir.Null {
			return true
		}
		if c.T == ir.Null {
			c.T = t
			return true
		}
		if c.T != t {
			a.errorf(at, "case arms yield %s and %s", article(c.T), article(t))
			return false
		}
		return true
	}
	for _, w := range e.Whens {
		var cond ir.Expr
		if operand != nil {
			v := a.expr(w.Cond, sc)
			if v == nil {
				return nil
			}
			if cond = a.compare(w.Cond.Position(), "=", operand, v); cond == nil {
				return nil
			}
		} else if cond = a.boolExpr(w.Cond, sc, "when condition"); cond == nil {
			return nil
		}
		res := a.expr(w.Result, sc)
		if res == nil || !unify(res, w.Result.Position()) {
			return nil
		}
		c.Whens = append(c.Whens, ir.When{Cond: cond, Result: res})
	}
	if e.Else != nil {
		el := a.expr(e.Else, sc)
		if el == nil || !unify(el, e.Else.Position()) {
			return nil
		}
		c.Else = el
	}
	return c
}

func (a *analyzer) call(e *sqlfront.FuncCall, sc *scope) ir.Expr {
	p := pos(e.Position())
	if isBuiltinAggregate(e.Name) || a.opts.ConstraintAggregates[e.Name] {
		if a.opts.ConstraintAggregates[e.Name] {
			a.errorf(e.Position(), "%s(...) is a constraint aggregate: select it directly in a @hard_constraint view", e.Name)
			return nil
		}
		// Not "return a.aggregate(...)": a nil *ir.Agg in an ir.Expr is
		// not a nil Expr.
		if agg := a.aggregate(e, sc); agg != nil {
			return agg
		}
		return nil
	}
	switch e.Name {
	case "coalesce":
		if len(e.Args) < 1 || e.Star || e.Distinct {
			a.errorf(e.Position(), "coalesce takes one or more arguments")
			return nil
		}
		c := &ir.Coalesce{P: p, T: ir.Null}
		for _, arg := range e.Args {
			x := a.expr(arg, sc)
			if x == nil {
				return nil
			}
			if t := x.Type(); t != ir.Null {
				if c.T != ir.Null && c.T != t {
					a.errorf(arg.Position(), "coalesce mixes %s and %s", article(c.T), article(t))
					return nil
				}
				c.T = t
			}
			c.Args = append(c.Args, x)
		}
		return c
	}
	a.errorf(e.Position(), "unknown function %s (supported: count, sum, min, max, coalesce and registered aggregates)", e.Name)
	return nil
}

// aggregate lowers an aggregate call in a select list or having clause.
func (a *analyzer) aggregate(e *sqlfront.FuncCall, sc *scope) *ir.Agg {
	if !sc.aggOK {
		a.errorf(e.Position(), "aggregate %s is only allowed in the select list or the having clause", e.Name)
		return nil
	}
	if sc.inAgg {
		a.errorf(e.Position(), "aggregate %s cannot be nested inside another aggregate", e.Name)
		return nil
	}
	agg := &ir.Agg{P: pos(e.Position()), Func: e.Name, Distinct: e.Distinct, Constraint: a.opts.ConstraintAggregates[e.Name]}
	if e.Star {
		if e.Name != "count" {
			a.errorf(e.Position(), "%s(*) is not allowed; only count(*)", e.Name)
			return nil
		}
		agg.T = ir.Int
		return agg
	}
	if len(e.Args) != 1 {
		a.errorf(e.Position(), "%s takes exactly one argument", e.Name)
		return nil
	}
	sc.inAgg = true
	arg := a.expr(e.Args[0], sc)
	sc.inAgg = false
	if arg == nil {
		return nil
	}
	agg.Arg = arg
	switch e.Name {
	case "count":
		agg.T = ir.Int
	case "sum":
		if t := arg.Type(); t != ir.Int && t != ir.Null {
			// PostgreSQL has no sum(boolean); SQLite would add 0/1.
			a.errorf(e.Position(), "sum needs an integer argument, not %s (count the rows instead, or sum a case expression)", article(t))
			return nil
		}
		agg.T = ir.Int
	case "min", "max":
		// Over strings only where the database evaluates the view (in its
		// collation, as its order by): the grounder orders integers only.
		switch arg.Type() {
		case ir.Int:
		case ir.String:
			if a.stringMinMax == nil {
				a.stringMinMax = e
			}
		default:
			a.errorf(e.Position(), "%s needs an integer or string argument, not %s", e.Name, article(arg.Type()))
			return nil
		}
		agg.T = arg.Type()
	default:
		agg.T = ir.Bool
	}
	if e.Distinct && agg.Func != "count" && !agg.Constraint {
		a.errorf(e.Position(), "%s(distinct ...) is not supported", e.Name)
		return nil
	}
	if e.Distinct && exprVar(arg) {
		a.errorf(e.Position(), "%s(distinct ...) over decision columns is not supported", e.Name)
		return nil
	}
	return agg
}

// decided reports whether the value of e, evaluated in scope sc, depends on
// decision columns: it reads one, reads a column of a view or derived table
// whose value does, reads a subquery that does, or aggregates rows that the
// solver chooses (sum(pod.cpu) over the pods placed on a node).
func (a *analyzer) decided(e ir.Expr, sc *scope) bool {
	found := false
	ir.Inspect(e, func(x ir.Expr) bool {
		if found {
			return false
		}
		switch x := x.(type) {
		case *ir.ColRef:
			s := sc
			for i := 0; i < x.Up && s != nil; i++ {
				s = s.outer
			}
			found = x.IsVar
			if !found && s != nil && x.Source < len(s.q.From) {
				if d := a.decidedCols[s.q.From[x.Source]]; x.Col < len(d) {
					found = d[x.Col]
				}
			}
		case *ir.Agg:
			found = rowsDecided(sc.q) || x.Arg != nil && a.decided(x.Arg, sc)
			return false
		case *ir.In:
			found = a.decided(x.X, sc) || x.Sub != nil && queryVar(x.Sub)
			for _, y := range x.List {
				found = found || a.decided(y, sc)
			}
			return false
		case *ir.Exists:
			found = queryVar(x.Sub)
			return false
		case *ir.Scalar:
			found = queryVar(x.Sub)
			return false
		}
		return !found
	})
	return found
}

// rowsDecided reports whether the solver chooses which rows (or groups) q
// has: a filter or grouping reads decision columns, or a source's rows
// depend on them.
func rowsDecided(q *ir.Query) bool {
	for _, s := range q.From {
		if s.Kind == ir.FromQuery && queryVar(s.Query) {
			return true
		}
	}
	for _, f := range q.Filters {
		if exprVar(f) {
			return true
		}
	}
	for _, g := range q.GroupBy {
		if exprVar(g) {
			return true
		}
	}
	return false
}
