package ground

import (
	"math"

	"github.com/weavesql/weave/cp"
)

// form is a Boolean formula over solver literals and linear atoms. SQL's
// three-valued logic is kept by giving every Boolean value two forms, one
// for "is true" and one for "is false" (unknown is neither), so no form
// needs a negation node: negation is pushed to the atoms.
type form interface{ isForm() }

type fConst bool

type fLit struct{ l cp.Lit }

// fLin is lo <= e <= hi.
type fLin struct {
	e      lin
	lo, hi int64
}

// fNe is e != k.
type fNe struct {
	e lin
	k int64
}

// fIn is x ∈ vals (or x ∉ vals when not).
type fIn struct {
	x    cp.IntVar
	vals []int64
	not  bool
}

type fAnd []form
type fOr []form

func (fConst) isForm() {}
func (fLit) isForm()   {}
func (fLin) isForm()   {}
func (fNe) isForm()    {}
func (fIn) isForm()    {}
func (fAnd) isForm()   {}
func (fOr) isForm()    {}

var (
	fTrue  form = fConst(true)
	fFalse form = fConst(false)
)

func isTrue(f form) bool  { c, ok := f.(fConst); return ok && bool(c) }
func isFalse(f form) bool { c, ok := f.(fConst); return ok && !bool(c) }

func and(fs ...form) form {
	var out fAnd
	for _, f := range fs {
		switch f := f.(type) {
		case fConst:
			if !f {
				return fFalse
			}
		case fAnd:
			out = append(out, f...)
		default:
			out = append(out, f)
		}
	}
	switch len(out) {
	case 0:
		return fTrue
	case 1:
		return out[0]
	}
	return out
}

func or(fs ...form) form {
	var out fOr
	for _, f := range fs {
		switch f := f.(type) {
		case fConst:
			if f {
				return fTrue
			}
		case fOr:
			out = append(out, f...)
		default:
			out = append(out, f)
		}
	}
	switch len(out) {
	case 0:
		return fFalse
	case 1:
		return out[0]
	}
	return out
}

// neg is the negation of f (two-valued: f is a "truth" form).
func neg(f form) form {
	switch f := f.(type) {
	case fConst:
		return fConst(!f)
	case fLit:
		return fLit{f.l.Not()}
	case fLin:
		var parts []form
		if f.lo != math.MinInt64 {
			parts = append(parts, linAtom(f.e, math.MinInt64, f.lo-1))
		}
		if f.hi != math.MaxInt64 {
			parts = append(parts, linAtom(f.e, f.hi+1, math.MaxInt64))
		}
		return or(parts...)
	case fNe:
		return linAtom(f.e, f.k, f.k)
	case fIn:
		return fIn{x: f.x, vals: f.vals, not: !f.not}
	case fAnd:
		out := make([]form, len(f))
		for i, g := range f {
			out[i] = neg(g)
		}
		return or(out...)
	case fOr:
		out := make([]form, len(f))
		for i, g := range f {
			out[i] = neg(g)
		}
		return and(out...)
	}
	panic("unreachable")
}

// linAtom is lo <= e <= hi, folded when e is constant.
func linAtom(e lin, lo, hi int64) form {
	if e.isConst() {
		return fConst(e.k >= lo && e.k <= hi)
	}
	if lo > hi {
		return fFalse
	}
	return fLin{e: e, lo: lo, hi: hi}
}

func neAtom(e lin, k int64) form {
	if e.isConst() {
		return fConst(e.k != k)
	}
	return fNe{e: e, k: k}
}

// litOf returns a literal equivalent to f, adding channelling constraints
// to the model when f is not already a literal.
func (g *grounder) litOf(f form) cp.Lit {
	m := g.m
	switch f := f.(type) {
	case fConst:
		if f {
			return m.TrueLit()
		}
		return m.FalseLit()
	case fLit:
		return f.l
	case fLin:
		if x, c, k, ok := f.e.single(); ok && c == 1 {
			lo, hi := f.lo, f.hi
			if lo != math.MinInt64 {
				lo -= k
			}
			if hi != math.MaxInt64 {
				hi -= k
			}
			switch {
			case lo == hi:
				return g.eqLit(x, lo)
			case lo == math.MinInt64:
				return m.LeLit(x, hi)
			case hi == math.MaxInt64:
				return m.LeLit(x, lo-1).Not()
			}
		}
		b := m.NewBoolVar("")
		g.post(f, b)
		g.post(neg(f), b.Not())
		return b
	case fNe:
		return g.litOf(linAtom(f.e, f.k, f.k)).Not()
	case fIn:
		lits := make([]cp.Lit, 0, len(f.vals))
		for _, v := range f.vals {
			lits = append(lits, g.eqLit(f.x, v))
		}
		l := g.litOf(or(litForms(lits)...))
		if f.not {
			return l.Not()
		}
		return l
	case fAnd:
		lits := make([]cp.Lit, len(f))
		for i, h := range f {
			lits[i] = g.litOf(h)
		}
		b := m.NewBoolVar("")
		g.note(m.AddBoolAnd(lits...).OnlyEnforceIf(b))
		cl := []cp.Lit{b}
		for _, l := range lits {
			cl = append(cl, l.Not())
		}
		g.note(m.AddBoolOr(cl...))
		return b
	case fOr:
		lits := make([]cp.Lit, len(f))
		for i, h := range f {
			lits[i] = g.litOf(h)
		}
		b := m.NewBoolVar("")
		if len(lits) >= 4 {
			// b ⇔ Σ lits ≥ 1 as two linear constraints rather than one
			// implication per disjunct: "some pod is on node n" over every
			// pod would otherwise cost pods × nodes clauses.
			var sum cp.LinearExpr
			for _, l := range lits {
				sum.AddLit(l, 1)
			}
			g.note(m.AddGreaterOrEqual(sum, 1).OnlyEnforceIf(b))
			g.note(m.AddLessOrEqual(sum, 0).OnlyEnforceIf(b.Not()))
			return b
		}
		g.note(m.AddBoolOr(lits...).OnlyEnforceIf(b))
		for _, l := range lits {
			g.note(m.AddImplication(l, b))
		}
		return b
	}
	panic("unreachable")
}

func litForms(ls []cp.Lit) []form {
	out := make([]form, len(ls))
	for i, l := range ls {
		out[i] = fLit{l}
	}
	return out
}

// enforce turns a row guard into enforcement literals: a conjunction of
// literals stays one literal each, anything else is reified.
func (g *grounder) enforce(guard form) []cp.Lit {
	switch f := guard.(type) {
	case fConst:
		if f {
			return nil
		}
		return []cp.Lit{g.m.FalseLit()}
	case fAnd:
		out := make([]cp.Lit, len(f))
		for i, h := range f {
			out[i] = g.litOf(h)
		}
		return out
	}
	return []cp.Lit{g.litOf(guard)}
}

// post requires f to hold whenever all of enf hold.
func (g *grounder) post(f form, enf ...cp.Lit) {
	m := g.m
	switch f := f.(type) {
	case fConst:
		if !f {
			cl := make([]cp.Lit, 0, len(enf)+1)
			for _, l := range enf {
				cl = append(cl, l.Not())
			}
			if len(cl) == 0 {
				cl = append(cl, m.FalseLit())
			}
			g.note(m.AddBoolOr(cl...))
		}
	case fLit:
		cl := make([]cp.Lit, 0, len(enf)+1)
		for _, l := range enf {
			cl = append(cl, l.Not())
		}
		g.note(m.AddBoolOr(append(cl, f.l)...))
	case fLin:
		if g.inHard && len(enf) == 0 {
			if r, ok := g.asCapacityRow(f.e, f.lo, f.hi); ok {
				g.capRows = append(g.capRows, r)
				return
			}
		}
		g.note(m.AddLinear(f.e.expr(), f.lo, f.hi).OnlyEnforceIf(enf...))
	case fNe:
		g.note(m.AddNotEqual(f.e.expr(), f.k).OnlyEnforceIf(enf...))
	case fIn:
		if f.not {
			g.note(m.AddNonMembership(f.x, f.vals).OnlyEnforceIf(enf...))
		} else {
			g.note(m.AddMembership(f.x, f.vals).OnlyEnforceIf(enf...))
		}
	case fAnd:
		for _, h := range f {
			g.post(h, enf...)
		}
	case fOr:
		cl := make([]cp.Lit, 0, len(enf)+len(f))
		for _, l := range enf {
			cl = append(cl, l.Not())
		}
		for _, h := range f {
			cl = append(cl, g.litOf(h))
		}
		g.note(m.AddBoolOr(cl...))
	}
}

// postImplied requires guard → f.
func (g *grounder) postImplied(guard, f form) {
	if isFalse(guard) || isTrue(f) {
		return
	}
	enf := g.enforce(guard)
	if g.assume != nil {
		enf = append(enf, *g.assume)
	}
	g.post(f, enf...)
}
