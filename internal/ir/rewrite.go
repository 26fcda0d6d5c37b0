package ir

// RewriteExpr rebuilds e bottom-up: f is applied to every node after its
// children were rewritten, and returns the replacement (or the node
// itself). Subqueries are rewritten in place through RewriteQuery.
func RewriteExpr(e Expr, f func(Expr) Expr) Expr {
	if e == nil {
		return nil
	}
	switch x := e.(type) {
	case *Binary:
		x.L, x.R = RewriteExpr(x.L, f), RewriteExpr(x.R, f)
	case *Unary:
		x.X = RewriteExpr(x.X, f)
	case *Agg:
		x.Arg = RewriteExpr(x.Arg, f)
	case *In:
		x.X = RewriteExpr(x.X, f)
		for i := range x.List {
			x.List[i] = RewriteExpr(x.List[i], f)
		}
		if x.Sub != nil {
			RewriteQuery(x.Sub, f)
		}
	case *Exists:
		RewriteQuery(x.Sub, f)
	case *Scalar:
		RewriteQuery(x.Sub, f)
	case *Case:
		for i := range x.Whens {
			x.Whens[i].Cond = RewriteExpr(x.Whens[i].Cond, f)
			x.Whens[i].Result = RewriteExpr(x.Whens[i].Result, f)
		}
		x.Else = RewriteExpr(x.Else, f)
	case *IsNull:
		x.X = RewriteExpr(x.X, f)
	case *Coalesce:
		for i := range x.Args {
			x.Args[i] = RewriteExpr(x.Args[i], f)
		}
	}
	return f(e)
}

// RewriteQuery rewrites every expression of q in place, including its
// derived tables and subqueries (not the compiled views it reads: they are
// rewritten as views of their own).
func RewriteQuery(q *Query, f func(Expr) Expr) {
	for _, s := range q.From {
		if s.Kind == FromQuery && s.View == nil && s.Query != nil {
			RewriteQuery(s.Query, f)
		}
	}
	for i := range q.Filters {
		q.Filters[i] = RewriteExpr(q.Filters[i], f)
	}
	for i := range q.GroupBy {
		q.GroupBy[i] = RewriteExpr(q.GroupBy[i], f)
	}
	for i := range q.Having {
		q.Having[i] = RewriteExpr(q.Having[i], f)
	}
	q.Check = RewriteExpr(q.Check, f)
	for _, a := range q.Constraints {
		a.Arg = RewriteExpr(a.Arg, f)
	}
	for _, o := range q.Select {
		o.Expr = RewriteExpr(o.Expr, f)
	}
}
