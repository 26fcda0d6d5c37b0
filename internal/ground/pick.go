package ground

import (
	"github.com/weavesql/weave/cp"
	"github.com/weavesql/weave/internal/ir"
)

// Picks. "case when a < b then a else b end" is the smaller of a and b
// (least(a, b), which SQL lacks in SQLite and PostgreSQL alike), written
// with a comparison. Grounded literally it is a reified comparison and a
// variable equal to a or to b under it; grounded as what it is, it is one
// min constraint over a and b:
//
//	case when a < b then a else b end        →  min(a, b)
//	case when a > b then a else b end        →  max(a, b)
//	min(case when a < b then a else b end)   →  min(min(a), min(b)) over the group
//
// (and the swapped and non-strict forms). A NULL operand makes the
// comparison unknown, so the case yields its else branch: the forms agree
// only when a and b are NULL together or never, which grounding checks
// on the values (the spare capacities of a grouped view are never NULL
// where its rows exist, see notNullUnder).

// pick is a case expression that yields the smaller (or larger) of l and r.
type pick struct {
	l, r  ir.Expr
	isMin bool
}

// pickOf recognises a case expression that picks the smaller or the
// larger of the two operands of its only comparison.
func pickOf(e ir.Expr) (pick, bool) {
	c, ok := e.(*ir.Case)
	if !ok || len(c.Whens) != 1 || c.Else == nil || c.T != ir.Int {
		return pick{}, false
	}
	b, ok := c.Whens[0].Cond.(*ir.Binary)
	if !ok {
		return pick{}, false
	}
	var less bool // the comparison holds when l is the smaller
	switch b.Op {
	case "<", "<=":
		less = true
	case ">", ">=":
	default:
		return pick{}, false
	}
	res := c.Whens[0].Result
	switch {
	case sameExpr(res, b.L) && sameExpr(c.Else, b.R):
		return pick{l: b.L, r: b.R, isMin: less}, true
	case sameExpr(res, b.R) && sameExpr(c.Else, b.L):
		return pick{l: b.L, r: b.R, isMin: !less}, true
	}
	return pick{}, false
}

// sameExpr reports whether two expressions are the same column reference
// or constant, or the same arithmetic over such (cheap, partial).
func sameExpr(a, b ir.Expr) bool {
	switch a := a.(type) {
	case *ir.ColRef:
		b, ok := b.(*ir.ColRef)
		return ok && a.Up == b.Up && a.Source == b.Source && a.Col == b.Col
	case *ir.Const:
		b, ok := b.(*ir.Const)
		return ok && a.Value == b.Value
	case *ir.Binary:
		b, ok := b.(*ir.Binary)
		return ok && a.Op == b.Op && sameExpr(a.L, b.L) && sameExpr(a.R, b.R)
	case *ir.Unary:
		b, ok := b.(*ir.Unary)
		return ok && a.Op == b.Op && sameExpr(a.X, b.X)
	}
	return false
}

// pickOperands evaluates a pick's operands in sc; ok is false when they
// are not integers that are NULL together (or never).
func (g *grounder) pickOperands(p pick, sc scope) (l, r value, ok bool) {
	l, r = g.expr(p.l, sc), g.expr(p.r, sc)
	if !isIntValue(l) || !isIntValue(r) {
		return l, r, false
	}
	return l, r, sameForm(l.null, r.null)
}

func isIntValue(v value) bool {
	if v.k == kConst {
		_, ok := v.c.(int64)
		return ok
	}
	return v.k == kInt
}

// pickValue grounds a pick as a min (max) constraint over its operands.
func (g *grounder) pickValue(p pick, sc scope) (value, bool) {
	l, r, ok := g.pickOperands(p, sc)
	if !ok {
		return value{}, false
	}
	ll, _, _ := g.asLin(l)
	rl, _, _ := g.asLin(r)
	v := g.minMax(p.isMin, []lin{ll, rl}, []form{fTrue, fTrue})
	if v.k == kInt {
		v.null = l.null
	}
	return v, true
}

// pickAggregate grounds min over a group of a min pick (max of a max
// pick) as one min over both operands of every member.
func (g *grounder) pickAggregate(p pick, grp *group) (value, bool) {
	members := g.membersOf(grp)
	vs := make([]lin, 0, 2*len(members))
	ps := make([]form, 0, 2*len(members))
	for _, m := range members {
		l, r, ok := g.pickOperands(p, scope{t: m.t})
		if !ok {
			return value{}, false
		}
		for _, v := range []value{l, r} {
			if v.isNullConst() {
				continue
			}
			e, _, _ := g.asLin(v)
			vs = append(vs, e)
			ps = append(ps, and(m.guard, neg(v.null)))
		}
	}
	return g.minMax(p.isMin, vs, ps), true
}

// sameForm reports whether two forms are the same formula (cheap,
// partial: constants, atoms, and conjunctions and disjunctions of them
// in the same order).
// sameForms reports whether two lists of forms are the same, item by item.
func sameForms(a, b []form) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameForm(a[i], b[i]) {
			return false
		}
	}
	return true
}

func sameForm(a, b form) bool {
	switch a := a.(type) {
	case fConst:
		b, ok := b.(fConst)
		return ok && a == b
	case fAnd:
		b, ok := b.(fAnd)
		return ok && sameForms(a, b)
	case fOr:
		b, ok := b.(fOr)
		return ok && sameForms(a, b)
	}
	return sameAtom(a, b)
}

// pickAlso strengthens a pick grounded as a case (an operand may be NULL
// alone): where neither operand is NULL the case's value v is min(a, b)
// (max), which a min constraint under that condition propagates as the
// direct form does, where the reified comparison and the choice under it
// bound v by neither operand until the comparison is decided.
func (g *grounder) pickAlso(p pick, sc scope, v value) {
	if v.k != kInt {
		return
	}
	z, c, k, ok := v.lin.single()
	if !ok || c != 1 || k != 0 {
		return
	}
	l, r := g.expr(p.l, sc), g.expr(p.r, sc)
	if !isIntValue(l) || !isIntValue(r) {
		return
	}
	notNull := and(neg(l.null), neg(r.null))
	if isFalse(notNull) {
		return
	}
	ll, _, _ := g.asLin(l)
	rl, _, _ := g.asLin(r)
	args := []cp.LinearExpr{ll.expr(), rl.expr()}
	var ct cp.Constraint
	if p.isMin {
		ct = g.m.AddMinEquality(z, args)
	} else {
		ct = g.m.AddMaxEquality(z, args)
	}
	if !isTrue(notNull) {
		ct.OnlyEnforceIf(g.litOf(notNull))
	}
	g.note(ct)
}
