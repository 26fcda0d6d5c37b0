package ground

import (
	"github.com/weavesql/weave/cp"
	"github.com/weavesql/weave/internal/ir"
)

// expr evaluates e in scope sc.
func (g *grounder) expr(e ir.Expr, sc scope) value {
	switch e := e.(type) {
	case *ir.Const:
		return constVal(e.Value)
	case *ir.ColRef:
		return g.colRef(e, sc)
	case *ir.Unary:
		x := g.expr(e.X, sc)
		if e.Op == "not" {
			if x.isNullConst() {
				return x
			}
			t, f := truth(x)
			if x.k == kBool {
				// NOT keeps the operand's NULL condition.
				return value{k: kBool, sym: &sym{t: f, f: t}, null: x.null}
			}
			return boolVal(f, t)
		}
		l, null, ok := g.asLin(x)
		if !ok {
			return constVal(nil)
		}
		v := intVal(l.scale(-1), null)
		v.zeroNull = x.zeroNull
		return v
	case *ir.Binary:
		return g.binary(e, sc)
	case *ir.IsNull:
		x := g.expr(e.X, sc)
		null := x.null
		if x.k == kConst {
			null = fConst(x.c == nil)
		}
		if e.Not {
			return twoValued(neg(null))
		}
		return twoValued(null)
	case *ir.Coalesce:
		return g.coalesce(e, sc)
	case *ir.Case:
		return g.caseExpr(e, sc)
	case *ir.In:
		return g.in(e, sc)
	case *ir.Exists:
		if p := g.existsSetPlanOf(e.Sub); p != nil {
			if v, ok := g.existsSet(p, sc.tupleForSub(), e.Not); ok {
				return v
			}
		}
		r := g.eval(e.Sub, sc.tupleForSub())
		var gs []form
		for _, rw := range r.rows {
			gs = append(gs, rw.guard)
		}
		t := or(gs...)
		if e.Not {
			return twoValued(neg(t))
		}
		return twoValued(t)
	case *ir.Scalar:
		return g.scalar(e, sc)
	case *ir.Agg:
		if sc.grp == nil {
			g.fail("aggregate %s outside a grouped query", e.Func)
		}
		return g.aggregate(e, sc.grp)
	}
	g.fail("cannot evaluate %s", ir.FormatExpr(e))
	return value{}
}

// tupleForSub is the tuple a subquery sees as its enclosing row.
func (sc scope) tupleForSub() *tuple {
	if sc.t != nil {
		return sc.t
	}
	if sc.grp != nil && sc.grp.first != nil {
		return sc.grp.first
	}
	if sc.grp != nil && len(sc.grp.members) > 0 {
		return sc.grp.members[0].t
	}
	if sc.grp != nil {
		return &tuple{outer: sc.grp.outer}
	}
	return nil
}

func (g *grounder) colRef(e *ir.ColRef, sc scope) value {
	if e.Up == 0 && sc.grp != nil {
		if i := groupKeyIndex(sc.grp.q, e); i >= 0 {
			return sc.grp.key[i]
		}
		// Functionally dependent on the group key: every member agrees.
		if sc.grp.first != nil {
			return sc.grp.first.rows[e.Source].vals[e.Col]
		}
		if len(sc.grp.members) == 0 {
			return constVal(nil)
		}
		return sc.grp.members[0].t.rows[e.Source].vals[e.Col]
	}
	t := sc.tupleForSub()
	for i := 0; i < e.Up; i++ {
		if t == nil {
			break
		}
		t = t.outer
	}
	if t == nil || t.rows[e.Source] == nil {
		g.fail("column %s is not bound here", e.Name)
	}
	return t.rows[e.Source].vals[e.Col]
}

func (g *grounder) binary(e *ir.Binary, sc scope) value {
	switch e.Op {
	case "and", "or":
		l := g.expr(e.L, sc)
		// Short-circuit on constants keeps models small.
		if l.k == kConst && l.c != nil {
			if b := l.c.(bool); b == (e.Op == "or") {
				return l
			}
		}
		r := g.expr(e.R, sc)
		// Without a NULL operand the result is never NULL: only its "is
		// true" side is built (twoValued).
		if !l.mayBeNull() && !r.mayBeNull() {
			lt, rt := truthT(l), truthT(r)
			if e.Op == "and" {
				return twoValued(and(lt, rt))
			}
			return twoValued(or(lt, rt))
		}
		lt, lf := truth(l)
		rt, rf := truth(r)
		if e.Op == "and" {
			return boolVal(and(lt, rt), or(lf, rf))
		}
		return boolVal(or(lt, rt), and(lf, rf))
	case "=", "<>", "<", "<=", ">", ">=":
		return g.compare(e.Op, g.expr(e.L, sc), g.expr(e.R, sc))
	}
	l, r := g.expr(e.L, sc), g.expr(e.R, sc)
	ll, ln, lok := g.asLin(l)
	rl, rn, rok := g.asLin(r)
	if !lok || !rok {
		return constVal(nil)
	}
	null := or(ln, rn)
	// A sum of a value that is 0 where NULL and the constant 0 (or a
	// multiple of such a value) stays 0 where NULL: "0 - 10 * sum(...)".
	// Not with any other operand that is never NULL: "2 * count(*) +
	// sum(...)" is NULL where the sum is, and 2 * count(*) there, not 0.
	keep := func(v value) value {
		if v.k == kInt && (isZeroConst(l) && zeroOrNull(r) || isZeroConst(r) && zeroOrNull(l)) {
			v.zeroNull = true
		}
		return v
	}
	switch e.Op {
	case "+":
		return keep(intVal(ll.add(rl, 1), null))
	case "-":
		return keep(intVal(ll.add(rl, -1), null))
	case "*":
		scaled := func(v value, by value) value {
			if v.k == kInt && (l.zeroNull || r.zeroNull) && !by.mayBeNull() {
				v.zeroNull = true
			}
			return v
		}
		switch {
		case rl.isConst():
			return scaled(intVal(ll.scale(rl.k), null), r)
		case ll.isConst():
			return scaled(intVal(rl.scale(ll.k), null), l)
		}
		g.fail("product of two expressions over decision columns is not linear: %s", ir.FormatExpr(e))
	case "/", "%":
		if !rl.isConst() {
			g.fail("division by an expression over decision columns: %s", ir.FormatExpr(e))
		}
		k := rl.k
		if k == 0 {
			g.fail("division by zero in %s", ir.FormatExpr(e))
		}
		if ll.isConst() {
			if e.Op == "/" {
				return intVal(constLin(ll.k/k), null) // Go and SQL both truncate toward zero
			}
			return intVal(constLin(ll.k%k), null)
		}
		q, rem := g.divmod(ll, k)
		if e.Op == "/" {
			return intVal(q, null)
		}
		return intVal(rem, null)
	}
	g.fail("unsupported operator %s", e.Op)
	return value{}
}

// divmod introduces q and r with x = k·q + r, |r| < |k| and r of the sign
// of x: SQL's truncating integer division.
func (g *grounder) divmod(x lin, k int64) (q, r lin) {
	lo, hi := g.bounds(x)
	ak := k
	if ak < 0 {
		ak = -ak
	}
	qlo, qhi := lo/k, hi/k
	if qlo > qhi {
		qlo, qhi = qhi, qlo
	}
	qv := g.m.NewIntVar(qlo, qhi, "")
	// The remainder takes the sign of x; when x's sign is known, so is
	// the remainder's range and no sign literal is needed.
	rlo, rhi := -(ak - 1), ak-1
	switch {
	case lo >= 0:
		rlo = 0
	case hi <= 0:
		rhi = 0
	}
	rv := g.m.NewIntVar(rlo, rhi, "")
	q, r = varLin(qv), varLin(rv)
	g.note(g.m.AddEquality(x.add(q, -k).add(r, -1).expr(), 0))
	if lo < 0 && hi > 0 {
		nonneg := g.litOf(linAtom(x, 0, maxInt))
		g.note(g.m.AddGreaterOrEqual(r.expr(), 0).OnlyEnforceIf(nonneg))
		g.note(g.m.AddLessOrEqual(r.expr(), 0).OnlyEnforceIf(nonneg.Not()))
	}
	return q, r
}

// compare evaluates a comparison under SQL's three-valued logic.
func (g *grounder) compare(op string, l, r value) value {
	if l.isNullConst() || r.isNullConst() {
		return constVal(nil)
	}
	if l.k == kConst && r.k == kConst {
		return constVal(ir.CompareConst(op, l.c, r.c))
	}
	notNull := and(neg(l.null), neg(r.null))
	var atom form
	switch {
	case l.k == kStr || r.k == kStr:
		atom = g.stringEq(l, r)
		if op == "<>" {
			atom = neg(atom)
		} else if op != "=" {
			g.fail("ordering comparison %s on strings decided by the solver", op)
		}
	case l.k == kBool || r.k == kBool || isBoolConst(l) || isBoolConst(r):
		lt, lf := truth(l)
		rt, rf := truth(r)
		atom = or(and(lt, rt), and(lf, rf))
		if op == "<>" {
			atom = neg(atom)
		} else if op != "=" {
			g.fail("ordering comparison %s on booleans decided by the solver", op)
		}
	default:
		ll, _, _ := g.asLin(l)
		rl, _, _ := g.asLin(r)
		d := ll.add(rl, -1) // l - r
		switch op {
		case "=":
			atom = g.atom(d, 0, 0)
		case "<>":
			atom = neAtom(d, 0)
		case "<":
			atom = g.atom(d, minInt, -1)
		case "<=":
			atom = g.atom(d, minInt, 0)
		case ">":
			atom = g.atom(d, 1, maxInt)
		case ">=":
			atom = g.atom(d, 0, maxInt)
		}
	}
	if isTrue(notNull) {
		return twoValued(atom)
	}
	// NULL exactly when an operand is.
	t, f := and(atom, notNull), and(neg(atom), notNull)
	if e, ok := atom.(fEq); ok && !e.not {
		if n, ok := notNull.(fEq); ok && n.not && n.x == e.x && n.v != e.v {
			// "x = v and x is not NULL" is "x = v": a join on a nullable
			// decision column, once per (row, value) pair.
			t = atom
		}
	}
	if isFalse(t) && isFalse(f) {
		return constVal(nil)
	}
	return value{k: kBool, sym: &sym{t: t, f: f}, null: neg(notNull)}
}

func isBoolConst(v value) bool {
	_, ok := v.c.(bool)
	return v.k == kConst && ok
}

// stringEq is "l = r" where at least one side is decided by the solver.
func (g *grounder) stringEq(l, r value) form {
	if l.k == kConst {
		l, r = r, l
	}
	if r.k == kConst {
		s, _ := r.c.(string)
		return g.eq(l.sv, g.dict.lookup(s))
	}
	return linAtom(varLin(l.sv).add(varLin(r.sv), -1), 0, 0)
}

func (g *grounder) coalesce(e *ir.Coalesce, sc scope) value {
	vals := make([]value, len(e.Args))
	for i, a := range e.Args {
		vals[i] = g.expr(a, sc)
	}
	// The result is the first argument that is not NULL.
	var build func(i int) value
	build = func(i int) value {
		if i == len(vals) {
			return constVal(nil)
		}
		v := vals[i]
		if v.isNullConst() {
			return build(i + 1)
		}
		if isFalse(v.null) {
			return v
		}
		if v.zeroNull && i+1 < len(vals) && isZeroConst(vals[i+1]) {
			// coalesce(sum(...), 0): the sum is 0 where it is NULL (and
			// only 0: coalesce(sum(...), count(*)) is the count there).
			return intVal(v.lin, fFalse)
		}
		rest := build(i + 1)
		return g.choose(v.null, rest, v)
	}
	return build(0)
}

// choose is "if c then a else b" on values of the same type.
func (g *grounder) choose(c form, a, b value) value {
	if isTrue(c) {
		return a
	}
	if isFalse(c) {
		return b
	}
	if a.k == kBool || b.k == kBool || isBoolConst(a) || isBoolConst(b) {
		at, af := truth(a)
		bt, bf := truth(b)
		nc := neg(c)
		return boolVal(or(and(c, at), and(nc, bt)), or(and(c, af), and(nc, bf)))
	}
	if a.k == kStr || b.k == kStr || isStringConst(a) || isStringConst(b) {
		g.fail("a choice between strings decided by the solver is not supported")
	}
	al, an, aok := g.asLin(a)
	bl, bn, bok := g.asLin(b)
	switch {
	case !aok && !bok:
		return constVal(nil)
	case !aok:
		return intVal(bl, or(c, bn))
	case !bok:
		return intVal(al, or(neg(c), an))
	}
	return intVal(g.ite(c, al, bl), or(and(c, an), and(neg(c), bn)))
}

func isStringConst(v value) bool {
	_, ok := v.c.(string)
	return v.k == kConst && ok
}

func (g *grounder) caseExpr(e *ir.Case, sc scope) (v value) {
	if p, ok := pickOf(e); ok {
		if v, ok := g.pickValue(p, sc); ok {
			return v
		}
		defer func() { g.pickAlso(p, sc, v) }()
	}
	var build func(i int) value
	build = func(i int) value {
		if i == len(e.Whens) {
			if e.Else == nil {
				return constVal(nil)
			}
			return g.expr(e.Else, sc)
		}
		ct := truthT(g.expr(e.Whens[i].Cond, sc))
		if isTrue(ct) {
			return g.expr(e.Whens[i].Result, sc)
		}
		if isFalse(ct) {
			return build(i + 1)
		}
		return g.choose(ct, g.expr(e.Whens[i].Result, sc), build(i+1))
	}
	v = build(0)
	return v
}

// in is "x [not] in (...)": the disjunction of equalities, turned into a
// membership constraint when x is a decision variable and the set constant.
func (g *grounder) in(e *ir.In, sc scope) value {
	x := g.expr(e.X, sc)
	var items []row
	var sub *rel
	if e.Sub != nil {
		sub = g.eval(e.Sub, sc.tupleForSub())
		items = sub.rows
	} else {
		for _, it := range e.List {
			items = append(items, row{vals: []value{g.expr(it, sc)}, guard: fTrue})
		}
	}
	var t, f form
	if set, ok := g.constSet(x, items, sub); ok {
		t = fIn{x: set.x, vals: set.vals}
		if len(set.vals) == 0 {
			t = fFalse
		}
		f = and(neg(t), neg(x.null))
		t = and(t, neg(x.null))
		if set.sawNull {
			f = fFalse
		}
	} else {
		ts := make([]form, 0, len(items))
		fs := make([]form, 0, len(items))
		for _, it := range items {
			eq := g.compare("=", x, it.vals[0])
			et, ef := truth(eq)
			ts = append(ts, and(it.guard, et))
			fs = append(fs, or(neg(it.guard), ef))
		}
		t, f = or(ts...), and(fs...)
	}
	if e.Not {
		return boolVal(f, t)
	}
	return boolVal(t, f)
}

type constSet struct {
	x       cp.IntVar
	vals    []int64
	sawNull bool
}

// constSet recognises "variable in (constants that always exist)". The
// codes of a subquery's result (sub, nil for a list) are read once per
// result, which eval caches, and filtered by each variable's domain:
// node_sample_only tests every pending pod against the same node names.
func (g *grounder) constSet(x value, items []row, sub *rel) (constSet, bool) {
	var s constSet
	switch x.k {
	case kStr:
		s.x = x.sv
	case kInt:
		v, c, k, ok := x.lin.single()
		if !ok || c != 1 || k != 0 {
			return s, false
		}
		s.x = v
	default:
		return s, false
	}
	cs := g.constCodes[sub]
	if sub == nil || cs == nil || cs.n != len(items) || cs.dict != len(g.dict.str) {
		cs = g.codesOf(items)
		if sub != nil {
			g.constCodes[sub] = cs
		}
	}
	if !cs.ok {
		return s, false
	}
	s.sawNull = cs.sawNull
	dom := g.m.VarDomain(s.x.Index())
	s.vals = make([]int64, 0, min(len(cs.codes), int(min(dom.Size(), 1<<16))))
	for _, code := range cs.codes {
		if dom.Contains(code) {
			s.vals = append(s.vals, code)
		}
	}
	return s, true
}

// constCodes are the distinct value codes of a list of rows that always
// exist (ok false when a row is not such a constant), in order of first
// appearance; n and dict are the list's length and the dictionary's size
// they were read at.
type constCodes struct {
	codes       []int64
	sawNull, ok bool
	n, dict     int
}

func (g *grounder) codesOf(items []row) *constCodes {
	cs := &constCodes{n: len(items), dict: len(g.dict.str)}
	seen := make(map[int64]bool, len(items))
	for _, it := range items {
		if !isTrue(it.guard) || it.vals[0].k != kConst {
			return cs
		}
		var code int64
		switch c := it.vals[0].c.(type) {
		case nil:
			cs.sawNull = true
			continue
		case string:
			code = g.dict.lookup(c)
			if code < 0 {
				continue
			}
		case int64:
			code = c
		default:
			return cs
		}
		if !seen[code] {
			seen[code] = true
			cs.codes = append(cs.codes, code)
		}
	}
	cs.ok = true
	return cs
}

// scalar is a scalar subquery: its single row's value, NULL if it has none.
func (g *grounder) scalar(e *ir.Scalar, sc scope) value {
	r := g.eval(e.Sub, sc.tupleForSub())
	switch len(r.rows) {
	case 0:
		return constVal(nil)
	case 1:
		rw := r.rows[0]
		if isTrue(rw.guard) {
			return rw.vals[0]
		}
	}
	// Several candidate rows, at most one of which may exist.
	out := constVal(nil)
	for i := len(r.rows) - 1; i >= 0; i-- {
		rw := r.rows[i]
		if isTrue(rw.guard) && i < len(r.rows)-1 {
			g.fail("scalar subquery at %s yields more than one row", e.P)
		}
		out = g.choose(rw.guard, rw.vals[0], out)
	}
	return out
}
