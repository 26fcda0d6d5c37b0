package rewrite

import "github.com/weavesql/weave/internal/ir"

// pushNot moves negations down to the predicates, where the grounder turns
// them into the solver's negated forms (not-equal, non-membership):
//
//	not (a and b)     →  not a or not b
//	not (a or b)      →  not a and not b
//	not not a         →  a
//	not (x = y)       →  x <> y          (also <, <=, >, >=, <>)
//	not (x in S)      →  x not in S
//	not exists S      →  (not exists) S
//	not (x is null)   →  x is not null
//
// Each equivalence holds in SQL's three-valued logic.
func pushNot(p *ir.Program) bool {
	return eachQuery(p, func(v *ir.View, q *ir.Query) bool {
		if v.Kind == ir.Pushdown {
			return false
		}
		changed := false
		ir.RewriteQuery(q, func(e ir.Expr) ir.Expr {
			u, ok := e.(*ir.Unary)
			if !ok || u.Op != "not" {
				return e
			}
			if r, ok := negate(u.X); ok {
				changed = true
				return r
			}
			return e
		})
		return changed
	})
}

var flipped = map[string]string{"=": "<>", "<>": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}

// negate returns an expression equivalent to "not e" without a not at its
// root, when there is one.
func negate(e ir.Expr) (ir.Expr, bool) {
	switch x := e.(type) {
	case *ir.Unary:
		if x.Op == "not" {
			return x.X, true
		}
	case *ir.Binary:
		switch x.Op {
		case "and", "or":
			op := "or"
			if x.Op == "or" {
				op = "and"
			}
			return &ir.Binary{P: x.P, Op: op, L: not(x.L), R: not(x.R), T: ir.Bool}, true
		default:
			if f, ok := flipped[x.Op]; ok {
				return &ir.Binary{P: x.P, Op: f, L: x.L, R: x.R, T: ir.Bool}, true
			}
		}
	case *ir.In:
		return &ir.In{P: x.P, X: x.X, Not: !x.Not, List: x.List, Sub: x.Sub}, true
	case *ir.Exists:
		return &ir.Exists{P: x.P, Not: !x.Not, Sub: x.Sub}, true
	case *ir.IsNull:
		return &ir.IsNull{P: x.P, X: x.X, Not: !x.Not}, true
	}
	return nil, false
}

// not negates e, pushing further when possible.
func not(e ir.Expr) ir.Expr {
	if r, ok := negate(e); ok {
		return r
	}
	return &ir.Unary{P: e.Position(), Op: "not", X: e}
}
