package analyze

import (
	"github.com/weavesql/weave/internal/ir"
	"github.com/weavesql/weave/internal/sqlfront"
)

// scope is the name-resolution context of one select block.
type scope struct {
	q       *ir.Query
	outer   *scope
	aggOK   bool // aggregates allowed here (select list, having)
	inAgg   bool // inside an aggregate's argument
	sawAgg  bool // an aggregate was found
	grouped bool // the query aggregates: column refs must be grouped
	kind    ir.ViewKind
	top     bool // the view's own query (not a subquery)
	// broken: a from item had an error, so an unresolved column is most
	// likely one of its columns and is not reported again.
	broken bool
}

// query lowers one select block. kind is the role of the view when the
// block is the view's own query, Intermediate for subqueries.
func (a *analyzer) query(sel *sqlfront.Select, outer *scope, kind ir.ViewKind) *ir.Query {
	q := &ir.Query{Pos: pos(sel.Pos), Distinct: sel.Distinct}
	sc := &scope{q: q, outer: outer, kind: kind, top: outer == nil}
	var on []sqlfront.Expr
	nerr := len(a.errs)
	for _, f := range sel.From {
		on = a.from(f, q, on)
	}
	sc.broken = len(a.errs) > nerr || len(q.From) < countSources(sel.From)
	if len(q.From) == 0 {
		if len(sel.From) == 0 {
			a.errorf(sel.Pos, "a select needs a from clause")
		}
		return nil
	}
	for _, e := range on {
		q.Filters = append(q.Filters, conjuncts(a.boolExpr(e, sc, "join condition"))...)
	}
	// Does this block aggregate? Group by, or an aggregate in select/having.
	q.Aggregate = len(sel.GroupBy) > 0 || sel.Having != nil
	for _, it := range sel.Items {
		if it.Expr != nil && a.hasAggregate(it.Expr) {
			q.Aggregate = true
		}
	}
	isHard := kind == ir.Hard && sc.top
	if sel.Where != nil {
		w := a.boolExpr(sel.Where, sc, "where clause")
		if isHard && !q.Aggregate {
			q.Check = w
		} else {
			q.Filters = append(q.Filters, conjuncts(w)...)
		}
	}
	for _, g := range sel.GroupBy {
		e := a.expr(g, sc)
		if e != nil && e.Type() == ir.Bool && e.Var() {
			// Allowed, grouped by truth value.
		}
		if e != nil {
			q.GroupBy = append(q.GroupBy, e)
		}
	}
	sc.grouped = q.Aggregate
	sc.aggOK = true
	for _, it := range sel.Items {
		a.selectItem(it, sc, isHard)
	}
	if sel.Having != nil {
		h := a.boolExpr(sel.Having, sc, "having clause")
		if isHard {
			q.Check = h
		} else {
			q.Having = conjuncts(h)
		}
	}
	sc.aggOK = false
	if sc.broken {
		return nil
	}
	d := make([]bool, len(q.Select))
	for i, o := range q.Select {
		d[i] = a.decided(o.Expr, sc)
	}
	a.decidedOut[q] = d
	return q
}

// from lowers one from item, appending its sources to q and returning the
// join conditions to resolve once every source is known.
func (a *analyzer) from(f sqlfront.FromItem, q *ir.Query, on []sqlfront.Expr) []sqlfront.Expr {
	switch f := f.(type) {
	case *sqlfront.TableRef:
		alias := f.Alias
		if alias == "" {
			alias = f.Name
		}
		for _, s := range q.From {
			if s.Alias == alias {
				a.errorf(f.Pos, "%s appears twice in the from clause; give one an alias", alias)
				return on
			}
		}
		src := &ir.Source{Alias: alias, Pos: pos(f.Pos)}
		if t := a.tables[f.Name]; t != nil {
			a.sameSchema(f.Pos, f.Schema, t.Schema, t.Name)
			src.Kind, src.Table = ir.FromTable, t
			for _, c := range t.Columns {
				src.Columns = append(src.Columns, ir.SourceColumn{Name: c.Name, Type: c.Type, Var: c.Variable})
			}
		} else if v := a.views[f.Name]; v != nil {
			a.sameSchema(f.Pos, f.Schema, v.Schema, v.Name)
			src.View = v
			if v.Kind == ir.Pushdown {
				src.Kind = ir.FromInput
			} else if v.Kind == ir.Intermediate {
				src.Kind, src.Query = ir.FromQuery, v.Query
			} else {
				a.errorf(f.Pos, "view %s is a %s; constraint views cannot be read by other views", v.Name, v.Kind)
				return on
			}
			for _, o := range v.Query.Select {
				src.Columns = append(src.Columns, ir.SourceColumn{Name: o.Name, Type: o.Expr.Type(), Var: exprVar(o.Expr)})
			}
			a.decidedCols[src] = a.decidedOut[v.Query]
		} else {
			if !a.broken[f.Name] { // else the view's own errors say it all
				a.errorf(f.Pos, "unknown table or view %s", f.Name)
			}
			return on
		}
		q.From = append(q.From, src)
	case *sqlfront.DerivedTable:
		sub := a.query(f.Query, nil, ir.Intermediate)
		if sub == nil {
			return on
		}
		if f.Alias == "" {
			a.errorf(f.Pos, "a subquery in from needs an alias")
			return on
		}
		src := &ir.Source{Alias: f.Alias, Kind: ir.FromQuery, Query: sub, Pos: pos(f.Pos)}
		for _, o := range sub.Select {
			src.Columns = append(src.Columns, ir.SourceColumn{Name: o.Name, Type: o.Expr.Type(), Var: exprVar(o.Expr)})
		}
		a.decidedCols[src] = a.decidedOut[sub]
		q.From = append(q.From, src)
	case *sqlfront.Join:
		if f.Outer && a.outerJoin == nil {
			a.outerJoin = f
		}
		on = a.from(f.Left, q, on)
		on = a.from(f.Right, q, on)
		if f.On != nil {
			on = append(on, f.On)
		}
	}
	return on
}

func (a *analyzer) selectItem(it *sqlfront.SelectItem, sc *scope, isHard bool) {
	q := sc.q
	if it.Star {
		if sc.grouped {
			a.errorf(it.Pos, "select * cannot be used with group by or aggregates")
			return
		}
		found := false
		for si, s := range q.From {
			if it.StarTable != "" && s.Alias != it.StarTable {
				continue
			}
			found = true
			for ci, c := range s.Columns {
				q.Select = append(q.Select, &ir.Output{Name: c.Name, Expr: &ir.ColRef{
					P: pos(it.Pos), Source: si, Col: ci, Name: s.Alias + "." + c.Name, T: c.Type, IsVar: c.Var}})
			}
		}
		if !found {
			a.errorf(it.Pos, "unknown table %s in %s.*", it.StarTable, it.StarTable)
		}
		return
	}
	if fc, ok := it.Expr.(*sqlfront.FuncCall); ok && a.opts.ConstraintAggregates[fc.Name] {
		if !isHard {
			a.errorf(fc.Pos, "%s(...) is a constraint aggregate: it can only be selected by a @hard_constraint view", fc.Name)
			return
		}
		if agg := a.aggregate(fc, sc); agg != nil {
			q.Constraints = append(q.Constraints, agg)
		}
		return
	}
	e := a.expr(it.Expr, sc)
	if e == nil {
		return
	}
	name := it.Alias
	if name == "" {
		switch x := it.Expr.(type) {
		case *sqlfront.ColumnRef:
			name = x.Column
		case *sqlfront.FuncCall:
			name = x.Name
		default:
			name = "?column?"
		}
	}
	q.Select = append(q.Select, &ir.Output{Name: name, Expr: e})
}

// hasAggregate reports whether e contains an aggregate call outside
// subqueries.
func (a *analyzer) hasAggregate(e sqlfront.Expr) bool {
	found := false
	sqlfront.Inspect(e, func(n sqlfront.Node) bool {
		switch n := n.(type) {
		case *sqlfront.FuncCall:
			if isBuiltinAggregate(n.Name) || a.opts.ConstraintAggregates[n.Name] {
				found = true
			}
		case *sqlfront.Select:
			return false
		}
		return !found
	})
	return found
}

func isBuiltinAggregate(name string) bool {
	switch name {
	case "count", "sum", "min", "max":
		return true
	}
	return false
}

// countSources is the number of relations a from clause names.
func countSources(from []sqlfront.FromItem) int {
	n := 0
	for _, f := range from {
		if j, ok := f.(*sqlfront.Join); ok {
			n += countSources([]sqlfront.FromItem{j.Left, j.Right})
		} else {
			n++
		}
	}
	return n
}

// conjuncts splits a Boolean expression on "and".
func conjuncts(e ir.Expr) []ir.Expr {
	if e == nil {
		return nil
	}
	if b, ok := e.(*ir.Binary); ok && b.Op == "and" {
		return append(conjuncts(b.L), conjuncts(b.R)...)
	}
	return []ir.Expr{e}
}
