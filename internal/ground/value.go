package ground

import (
	"cmp"
	"math"
	"slices"

	"github.com/weavesql/weave/cp"
)

// lin is a linear expression Σ c·v + k over solver variables.
type lin struct {
	terms []term
	k     int64
}

type term struct {
	v cp.IntVar
	c int64
}

func constLin(k int64) lin { return lin{k: k} }

func varLin(v cp.IntVar) lin { return lin{terms: []term{{v, 1}}} }

// litLin is the 0/1 value of a literal.
func litLin(l cp.Lit) lin {
	if l.IsNegated() {
		return lin{terms: []term{{l.Var(), -1}}, k: 1}
	}
	return lin{terms: []term{{l.Var(), 1}}}
}

func (e lin) isConst() bool { return len(e.terms) == 0 }

// single reports e = c·x + k.
func (e lin) single() (x cp.IntVar, c, k int64, ok bool) {
	if len(e.terms) != 1 {
		return x, 0, 0, false
	}
	return e.terms[0].v, e.terms[0].c, e.k, true
}

func (e lin) add(o lin, c int64) lin {
	// A constant on either side adds no term: e's or o's terms, already
	// merged, are shared (nothing changes a lin's terms in place but
	// norm's sort, which keeps the sum).
	if len(o.terms) == 0 {
		return lin{terms: e.terms, k: e.k + c*o.k}
	}
	if len(e.terms) == 0 && c == 1 {
		return lin{terms: o.terms, k: e.k + o.k}
	}
	out := lin{terms: make([]term, 0, len(e.terms)+len(o.terms)), k: e.k + c*o.k}
	out.terms = append(out.terms, e.terms...)
	for _, t := range o.terms {
		out.terms = append(out.terms, term{t.v, t.c * c})
	}
	return out.norm()
}

// sumLins adds many expressions at once (adding them one by one would
// copy the growing sum each time).
func sumLins(parts []lin) lin {
	n := 0
	for _, p := range parts {
		n += len(p.terms)
	}
	out := lin{terms: make([]term, 0, n)}
	for _, p := range parts {
		out.terms = append(out.terms, p.terms...)
		out.k += p.k
	}
	return out.norm()
}

func (e lin) scale(c int64) lin {
	out := lin{terms: make([]term, len(e.terms)), k: e.k * c}
	for i, t := range e.terms {
		out.terms[i] = term{t.v, t.c * c}
	}
	return out.norm()
}

// norm merges repeated variables and drops zero coefficients.
func (e lin) norm() lin {
	if len(e.terms) < 2 {
		if len(e.terms) == 1 && e.terms[0].c == 0 {
			e.terms = nil
		}
		return e
	}
	slices.SortFunc(e.terms, func(a, b term) int { return cmp.Compare(a.v.Index(), b.v.Index()) })
	out := e.terms[:0:0]
	for _, t := range e.terms {
		if n := len(out); n > 0 && out[n-1].v == t.v {
			out[n-1].c += t.c
			continue
		}
		out = append(out, t)
	}
	kept := out[:0]
	for _, t := range out {
		if t.c != 0 {
			kept = append(kept, t)
		}
	}
	e.terms = kept
	return e
}

func (e lin) expr() cp.LinearExpr {
	var x cp.LinearExpr
	for _, t := range e.terms {
		x.AddTerm(t.v, t.c)
	}
	x.AddConstant(e.k)
	return x
}

// bounds returns the range e can take given the variables' domains, each
// end saturated at minInt or maxInt where it would not fit in an int64.
func (g *grounder) bounds(e lin) (lo, hi int64) {
	const limit = 1 << 62
	lo, hi = e.k, e.k
	flo, fhi := float64(e.k), float64(e.k)
	for _, t := range e.terms {
		d := g.m.VarDomain(t.v.Index())
		a, b := t.c*d.Min(), t.c*d.Max()
		fa, fb := float64(t.c)*float64(d.Min()), float64(t.c)*float64(d.Max())
		if a > b {
			a, b, fa, fb = b, a, fb, fa
		}
		lo, hi, flo, fhi = lo+a, hi+b, flo+fa, fhi+fb
	}
	if flo < -limit {
		lo = minInt
	}
	if fhi > limit {
		hi = maxInt
	}
	return lo, hi
}

// kind of a symbolic value.
type kind uint8

const (
	kConst kind = iota // a constant (int64, string, bool or nil)
	kInt               // an integer expression over variables
	kStr               // a string decided by a variable holding its code
	kBool              // a Boolean over variables
)

// value is what an expression evaluates to on one row: a constant, or a
// symbolic value the solver decides. null is the condition under which a
// symbolic value is NULL (fFalse when it never is).
//
// Most values are constants (every fetched cell that no decision column
// holds), so the symbolic parts live behind a pointer: a row of 13
// columns is 13 × 48 bytes, not 13 × 120, and the collector scans that
// much less per batch. A symbolic part is never changed after it is
// made (values are copied freely and share it).
type value struct {
	k kind
	// zeroNull (kInt) says lin is 0 wherever null holds, as a sum over
	// rows is when no row is present: "NULL counts as 0" (a soft
	// constraint's value, coalesce(v, 0)) then needs no test of null.
	zeroNull bool
	c        any
	null     form
	*sym     // nil for a constant
}

// sym is the symbolic part of a value; which field is set follows the
// value's kind.
type sym struct {
	lin  lin       // kInt
	sv   cp.IntVar // kStr
	t, f form      // kBool: is true, is false
}

// zeroWhenNull marks an integer value whose lin is 0 where it is NULL.
func zeroWhenNull(v value) value {
	if v.k == kInt {
		v.zeroNull = true
	}
	return v
}

// zeroOrNull reports whether v is 0 wherever it is NULL (a constant 0,
// or a value marked zeroNull).
func zeroOrNull(v value) bool {
	if v.k == kConst {
		k, ok := v.c.(int64)
		return ok && k == 0
	}
	return v.k == kInt && (v.zeroNull || isFalse(v.null))
}

// isZeroConst reports whether v is the constant 0.
func isZeroConst(v value) bool {
	k, ok := v.c.(int64)
	return v.k == kConst && ok && k == 0
}

func constVal(c any) value { return value{k: kConst, c: c, null: fConst(c == nil)} }

func intVal(e lin, null form) value {
	if e.isConst() && isFalse(null) {
		return constVal(e.k)
	}
	return value{k: kInt, sym: &sym{lin: e}, null: null}
}

func boolVal(t, f form) value {
	if isTrue(t) {
		return constVal(true)
	}
	if isTrue(f) {
		return constVal(false)
	}
	if isFalse(t) && isFalse(f) {
		return constVal(nil)
	}
	return value{k: kBool, sym: &sym{t: t, f: f}, null: and(neg(t), neg(f))}
}

// twoValued is a Boolean that is never NULL (EXISTS, IS NULL, AND/OR and
// comparisons of operands that cannot be NULL): it is false exactly when
// t does not hold, so its "is false" form is neg(t), built only when asked
// for (truth) — a hard check reads only its "is true" side (truthT).
func twoValued(t form) value {
	switch {
	case isTrue(t):
		return constVal(true)
	case isFalse(t):
		return constVal(false)
	}
	return value{k: kBool, sym: &sym{t: t}, null: fFalse}
}

// mayBeNull reports whether v can be NULL.
func (v value) mayBeNull() bool {
	if v.k == kConst {
		return v.c == nil
	}
	return v.null != nil && !isFalse(v.null)
}

func (v value) isNullConst() bool { return v.k == kConst && v.c == nil }

// truth returns the "is true" and "is false" forms of a Boolean value.
func truth(v value) (t, f form) {
	switch v.k {
	case kConst:
		switch c := v.c.(type) {
		case bool:
			return fConst(c), fConst(!c)
		case nil:
			return fFalse, fFalse
		}
	case kBool:
		if v.f == nil {
			return v.t, neg(v.t) // two-valued
		}
		return v.t, v.f
	}
	panic("truth of a non-Boolean value")
}

// truthT returns the "is true" form of a Boolean value.
func truthT(v value) form {
	if v.k == kBool {
		return v.t
	}
	t, _ := truth(v)
	return t
}

// asLin returns an integer value as a linear expression (Booleans count
// 0/1), with its null condition. A NULL constant gives ok=false.
func (g *grounder) asLin(v value) (e lin, null form, ok bool) {
	switch v.k {
	case kConst:
		switch c := v.c.(type) {
		case int64:
			return constLin(c), fFalse, true
		case bool:
			if c {
				return constLin(1), fFalse, true
			}
			return constLin(0), fFalse, true
		}
		return lin{}, fTrue, false
	case kInt:
		return v.lin, v.null, true
	case kBool:
		return litLin(g.litOf(v.t)), v.null, true
	}
	return lin{}, fTrue, false
}

// ite materialises "if c then a else b" for integer expressions.
func (g *grounder) ite(c form, a, b lin) lin {
	if isTrue(c) {
		return a
	}
	if isFalse(c) {
		return b
	}
	alo, ahi := g.bounds(a)
	blo, bhi := g.bounds(b)
	if a.isConst() && b.isConst() {
		// a·[c] + b·(1-[c])
		l := g.litOf(c)
		return litLin(l).scale(a.k-b.k).add(constLin(b.k), 1)
	}
	z := g.m.NewIntVar(min(alo, blo), max(ahi, bhi), "")
	l := g.litOf(c)
	zl := varLin(z)
	g.note(g.m.AddEquality(zl.add(a, -1).expr(), 0).OnlyEnforceIf(l))
	g.note(g.m.AddEquality(zl.add(b, -1).expr(), 0).OnlyEnforceIf(l.Not()))
	return zl
}

const (
	minInt = math.MinInt64
	maxInt = math.MaxInt64
)
