package ground

import (
	"math"
	"sort"

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

// fEq is x = v (x != v when not). It stays symbolic until a literal is
// needed: a join on a decision column yields one per (row, value), and
// most are consumed as domain restrictions or bin-packing membership
// without ever becoming a solver literal.
type fEq struct {
	x   cp.IntVar
	v   int64
	not bool
}

// fInVars is "x equals one of vars" (positive only: its negation is a
// conjunction of "x <> y"). A join of a decision column with another row's
// decision column yields it (a web pod on the node of one of the batch's
// cache pods), in one constraint where an equality literal per pair of
// rows cost pods² literals.
type fInVars struct {
	x    cp.IntVar
	vars []cp.IntVar
}

type fAnd []form
type fOr []form

func (fConst) isForm()  {}
func (fLit) isForm()    {}
func (fLin) isForm()    {}
func (fNe) isForm()     {}
func (fIn) isForm()     {}
func (fEq) isForm()     {}
func (fInVars) isForm() {}
func (fAnd) isForm()    {}
func (fOr) isForm()     {}

var (
	fTrue  form = fConst(true)
	fFalse form = fConst(false)
)

func isTrue(f form) bool  { c, ok := f.(fConst); return ok && bool(c) }
func isFalse(f form) bool { c, ok := f.(fConst); return ok && !bool(c) }

// and2 is and(a, b) without allocating when one side is a constant.
func and2(a, b form) form {
	switch {
	case isTrue(a):
		return b
	case isTrue(b):
		return a
	case isFalse(a) || isFalse(b):
		return fFalse
	}
	return and(a, b)
}

func and(fs ...form) form { return connect(fs, false) }

func or(fs ...form) form { return connect(fs, true) }

// connect builds a conjunction (isOr false) or disjunction: nested ones of
// the same kind are flattened, the neutral constant dropped, the absorbing
// one returned, repeated atoms kept once.
func connect(fs []form, isOr bool) form {
	// Count what is kept first: most calls (a guard and a filter, one of
	// them true) keep one form and need no slice; the others get one
	// allocation of the right size (joins call this per pair of rows).
	n, single := 0, form(nil)
	for _, f := range fs {
		switch f := f.(type) {
		case fConst:
			if bool(f) == isOr {
				return f
			}
		case fAnd:
			if isOr {
				n++
			} else {
				n += len(f)
			}
		case fOr:
			if isOr {
				n += len(f)
			} else {
				n++
			}
		default:
			n++
		}
		if n == 1 && single == nil {
			single = f
		}
	}
	switch {
	case n == 0:
		return fConst(!isOr)
	case n == 1:
		if a, ok := single.(fAnd); ok && !isOr {
			return a[0]
		}
		if o, ok := single.(fOr); ok && isOr {
			return o[0]
		}
		return single
	}
	out := make([]form, 0, n)
	for _, f := range fs {
		switch f := f.(type) {
		case fConst:
		case fAnd:
			if isOr {
				out = append(out, f)
			} else {
				out = append(out, f...)
			}
		case fOr:
			if isOr {
				out = append(out, f...)
			} else {
				out = append(out, f)
			}
		default:
			out = append(out, f)
		}
	}
	out = dedupe(out)
	switch {
	case len(out) == 1:
		return out[0]
	case isOr:
		return fOr(out)
	}
	return fAnd(out)
}

// equalitiesDecide simplifies a short conjunction by its atoms "x = v":
// "x <> w" with w ≠ v is implied and dropped, and "x = w" with w ≠ v
// contradicts it (ok false). neg uses it: a join on a nullable decision
// column is "x = v and x is not null", and "not exists (... = x)" was a
// clause "x <> v or x is null" per value; it is "x <> v", a domain cut.
func equalitiesDecide(fs []form) ([]form, bool) {
	if len(fs) < 2 || len(fs) > 8 {
		return fs, true
	}
	n := 0
	for _, f := range fs {
		if e, ok := f.(fEq); ok && !e.not {
			n++
		}
	}
	if n == 0 {
		return fs, true
	}
	implied := func(f form) (drop, contradicts bool) {
		e, ok := f.(fEq)
		if !ok {
			return false, false
		}
		for _, h := range fs {
			d, ok := h.(fEq)
			if !ok || d.not || d.x != e.x || d.v == e.v {
				continue
			}
			if e.not {
				return true, false // x = d.v implies x <> e.v
			}
			return false, true // x = d.v and x = e.v
		}
		return false, false
	}
	out := fs[:0:0]
	for _, f := range fs {
		drop, contradicts := implied(f)
		switch {
		case contradicts:
			return nil, false
		case !drop:
			out = append(out, f)
		}
	}
	return out, true
}

// dedupe drops repeated atoms from a short list ("present and present"
// arises from a guard and a not-null test on the same group), in place.
func dedupe(fs []form) []form {
	if len(fs) < 2 || len(fs) > 8 {
		return fs
	}
	out := fs[:0]
	for _, f := range fs {
		dup := false
		for _, h := range out {
			if sameAtom(f, h) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, f)
		}
	}
	return out
}

// sameAtom reports whether two forms are the same atom (cheap, partial:
// composite forms are never the same).
func sameAtom(a, b form) bool {
	switch a := a.(type) {
	case fLit:
		b, ok := b.(fLit)
		return ok && a == b
	case fEq:
		b, ok := b.(fEq)
		return ok && a == b
	case fLin:
		b, ok := b.(fLin)
		if !ok || a.lo != b.lo || a.hi != b.hi || a.e.k != b.e.k || len(a.e.terms) != len(b.e.terms) {
			return false
		}
		for i := range a.e.terms {
			if a.e.terms[i] != b.e.terms[i] {
				return false
			}
		}
		return true
	}
	return false
}

// negates reports sameAtom(c, neg(f)) without building neg(f): callers
// ask it of every row's NULL form (notNullUnder).
func negates(c, f form) bool {
	switch f := f.(type) {
	case fLit:
		c, ok := c.(fLit)
		return ok && c.l == f.l.Not()
	case fEq:
		c, ok := c.(fEq)
		return ok && c.x == f.x && c.v == f.v && c.not != f.not
	case fNe:
		return !f.e.isConst() && sameAtom(c, fLin{e: f.e, lo: f.k, hi: f.k})
	case fLin:
		if f.e.isConst() {
			return false
		}
		switch {
		case f.lo == math.MinInt64 && f.hi != math.MaxInt64:
			return sameAtom(c, fLin{e: f.e, lo: f.hi + 1, hi: math.MaxInt64})
		case f.hi == math.MaxInt64 && f.lo != math.MinInt64:
			return sameAtom(c, fLin{e: f.e, lo: math.MinInt64, hi: f.lo - 1})
		}
	}
	return false
}

// neg is the negation of f (two-valued: f is a "truth" form).
func neg(f form) form {
	switch f := f.(type) {
	case fConst:
		return fConst(!f)
	case fLit:
		return fLit{f.l.Not()}
	case fLin:
		// One bound (the usual case: "load <= capacity") negates to one
		// atom, without the slice a disjunction of two needs.
		switch {
		case f.lo == math.MinInt64 && f.hi == math.MaxInt64:
			return fFalse
		case f.lo == math.MinInt64:
			return linAtom(f.e, f.hi+1, math.MaxInt64)
		case f.hi == math.MaxInt64:
			return linAtom(f.e, math.MinInt64, f.lo-1)
		}
		return or(linAtom(f.e, math.MinInt64, f.lo-1), linAtom(f.e, f.hi+1, math.MaxInt64))
	case fNe:
		return linAtom(f.e, f.k, f.k)
	case fIn:
		return fIn{x: f.x, vals: f.vals, not: !f.not}
	case fEq:
		return fEq{x: f.x, v: f.v, not: !f.not}
	case fInVars:
		out := make([]form, len(f.vars))
		for i, y := range f.vars {
			out[i] = neAtom(varLin(f.x).add(varLin(y), -1), 0)
		}
		return and(out...)
	case fAnd:
		f2, ok := equalitiesDecide(f)
		switch {
		case !ok:
			return fTrue // the conjunction cannot hold
		case len(f2) == 1:
			return neg(f2[0])
		}
		out := make([]form, len(f2))
		for i, g := range f2 {
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

// atom is linAtom folded by the domains of e's variables: lo ≤ e ≤ hi is
// true (or false) when every (or no) value e can take lies in [lo, hi] —
// "spare < 0" over a load that cannot exceed the capacity is false, and
// needs no literal.
func (g *grounder) atom(e lin, lo, hi int64) form {
	f := linAtom(e, lo, hi)
	if _, ok := f.(fLin); !ok {
		return f
	}
	min, max := g.bounds(e)
	switch {
	case min == minInt || max == maxInt: // unbounded, or saturated
		return f
	case min >= lo && max <= hi:
		return fTrue
	case max < lo || min > hi:
		return fFalse
	}
	return f
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
				return g.m.EqLit(x, lo)
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
	case fEq:
		if f.not {
			return g.m.EqLit(f.x, f.v).Not()
		}
		return g.m.EqLit(f.x, f.v)
	case fIn:
		if len(f.vals) >= reifiedInMin || g.opts.SmallSets && len(f.vals) > 1 {
			// One reified membership, not a literal per value: "the
			// pod's node is in this zone" over a zone of hundreds of
			// nodes, per pod and zone.
			b := m.NewBoolVar("")
			g.note(m.AddMembership(f.x, f.vals).OnlyEnforceIf(b))
			g.note(m.AddNonMembership(f.x, f.vals).OnlyEnforceIf(b.Not()))
			if f.not {
				return b.Not()
			}
			return b
		}
		lits := make([]cp.Lit, 0, len(f.vals))
		for _, v := range f.vals {
			lits = append(lits, g.m.EqLit(f.x, v))
		}
		l := g.litOf(or(litForms(lits)...))
		if f.not {
			return l.Not()
		}
		return l
	case fInVars:
		b := m.NewBoolVar("")
		g.post(f, b)
		g.post(neg(f), b.Not())
		return b
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
		if x, vals, ok := sameVarIn(f); ok && (len(vals) >= reifiedInMin || g.opts.SmallSets) {
			return g.litOf(fIn{x: x, vals: vals})
		}
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

// reifiedInMin is the number of values from which "x ∈ vals" gets one
// reified membership rather than a literal per value.
const reifiedInMin = 8

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
		g.note(m.AddLinear(f.e.expr(), f.lo, f.hi).OnlyEnforceIf(enf...))
	case fNe:
		if x, y, ok := asPairNe(f.e, f.k); ok && len(enf) == 0 && g.inHard && !g.opts.PairwiseAllDifferent {
			g.bufferNe(x, y)
			return
		}
		g.note(m.AddNotEqual(f.e.expr(), f.k).OnlyEnforceIf(enf...))
	case fEq:
		if f.not && len(enf) == 0 {
			g.forbid(f.x, f.v, nil)
			return
		}
		g.post(fLit{g.litOf(f)}, enf...)
	case fIn:
		if f.not {
			g.note(m.AddNonMembership(f.x, f.vals).OnlyEnforceIf(enf...))
		} else {
			g.note(m.AddMembership(f.x, f.vals).OnlyEnforceIf(enf...))
		}
	case fInVars:
		g.note(m.AddVarMembership(f.x, f.vars).OnlyEnforceIf(enf...))
	case fAnd:
		for _, h := range f {
			g.post(h, enf...)
		}
	case fOr:
		f, holds := absorb(f)
		if holds {
			return
		}
		if x, vals, ok := sameVarIn(f); ok {
			g.note(m.AddMembership(x, vals).OnlyEnforceIf(enf...))
			return
		}
		cl := make([]cp.Lit, 0, len(enf)+len(f))
		for _, l := range enf {
			cl = append(cl, l.Not())
		}
		g.note(m.AddBoolOr(g.clauseLits(cl, f)...))
	}
}

// sameVarIn recognises a disjunction of "x = v" and "x ∈ vals" atoms over
// one variable: it is "x ∈ (their union)", a domain restriction, where a
// clause over one literal per value would leave the other values in x's
// domain for the search to try and fail one by one. SQL writes it as
// "x is null or exists (select ... where q.node = x)" over stored rows
// (required pod affinity to bound pods: the nodes that hold them).
func sameVarIn(f fOr) (x cp.IntVar, vals []int64, ok bool) {
	for i, h := range f {
		var y cp.IntVar
		switch a := h.(type) {
		case fEq:
			if a.not {
				return x, nil, false
			}
			y = a.x
		case fIn:
			if a.not {
				return x, nil, false
			}
			y = a.x
		default:
			return x, nil, false
		}
		if i == 0 {
			x = y
		} else if y != x {
			return x, nil, false
		}
	}
	for _, h := range f {
		switch a := h.(type) {
		case fEq:
			vals = append(vals, a.v)
		case fIn:
			vals = append(vals, a.vals...)
		}
	}
	return x, vals, len(f) > 0
}

// absorb simplifies a required disjunction by absorption, a ∨ (¬a ∧ b) =
// a ∨ b, for the atoms "x = v" among its disjuncts: a conjunct "x ≠ v"
// of another disjunct is dropped (the clause only needs it where x = v,
// the first disjunct, fails). SQL puts one in every comparison with a
// nullable column ("x is null or exists (... q.x = x ...)" asks x not NULL
// in each pair), which grounded an implication per pair for nothing.
// holds reports a disjunct left with no conjunct: the disjunction is true.
func absorb(f fOr) (out fOr, holds bool) {
	var atoms []fEq
	for _, h := range f {
		if e, ok := h.(fEq); ok && !e.not {
			atoms = append(atoms, e)
		}
	}
	if len(atoms) == 0 {
		return f, false
	}
	absorbed := func(h form) bool {
		e, ok := h.(fEq)
		if !ok || !e.not {
			return false
		}
		for _, a := range atoms {
			if a.x == e.x && a.v == e.v {
				return true
			}
		}
		return false
	}
	out = f
	for i, h := range f {
		a, ok := h.(fAnd)
		if !ok {
			continue
		}
		n := 0
		for _, c := range a {
			if !absorbed(c) {
				n++
			}
		}
		if n == len(a) {
			continue
		}
		if n == 0 {
			return nil, true
		}
		kept := make(fAnd, 0, n)
		for _, c := range a {
			if !absorbed(c) {
				kept = append(kept, c)
			}
		}
		if len(out) > 0 && &out[0] == &f[0] {
			out = append(fOr(nil), f...) // copy before the first change
		}
		if len(kept) == 1 {
			out[i] = kept[0]
		} else {
			out[i] = kept
		}
	}
	return out, false
}

// clauseLits appends to cl a literal per disjunct of f for a clause that
// is required to hold: a nested disjunction joins the clause, and a
// compound disjunct gets a literal that implies it, not one equivalent to
// it — the clause only needs "literal → disjunct" (Plaisted–Greenbaum), so
// the converse constraints litOf would add are left out.
func (g *grounder) clauseLits(cl []cp.Lit, f fOr) []cp.Lit {
	for _, h := range f {
		if o, ok := h.(fOr); ok {
			cl = g.clauseLits(cl, o)
			continue
		}
		cl = append(cl, g.implLit(h))
	}
	return cl
}

// implLit returns a literal that implies f (f may hold while it is false).
func (g *grounder) implLit(f form) cp.Lit {
	switch f := f.(type) {
	case fLin:
		if _, c, _, ok := f.e.single(); ok && c == 1 {
			return g.litOf(f) // an encoding literal of the variable
		}
		b := g.m.NewBoolVar("")
		g.post(f, b)
		return b
	case fAnd:
		b := g.m.NewBoolVar("")
		for _, h := range f {
			g.post(h, b)
		}
		return b
	case fOr:
		b := g.m.NewBoolVar("")
		g.note(g.m.AddBoolOr(g.clauseLits([]cp.Lit{b.Not()}, f)...))
		return b
	case fInVars:
		b := g.m.NewBoolVar("")
		g.post(f, b)
		return b
	}
	return g.litOf(f)
}

// postImplied requires guard → f.
func (g *grounder) postImplied(guard, f form) {
	if isFalse(guard) || isTrue(f) {
		return
	}
	if e, ok := guard.(fEq); ok && !e.not && isFalse(f) {
		// "x = v implies false": v is not a possible value of x (while
		// the explanation's assumption holds).
		var enf []cp.Lit
		if g.assume != nil {
			enf = []cp.Lit{*g.assume}
		}
		g.forbid(e.x, e.v, enf)
		return
	}
	enf := g.enforce(guard)
	if g.assume != nil {
		enf = append(enf, *g.assume)
	}
	g.post(f, enf...)
}

// forbidKey is a variable whose values are removed, and the literal (if
// any) under which they are.
type forbidKey struct {
	x     cp.IntVar
	under cp.Lit
	cond  bool
}

// forbid removes v from the possible values of x, while enf holds (at most
// one literal: an explanation's assumption). The removals of a view are
// posted together when it is done: one non-membership per variable and
// assumption, not one clause per value. (Under other literals a clause per
// value stays: an enforced non-membership propagates far more slowly.)
func (g *grounder) forbid(x cp.IntVar, v int64, enf []cp.Lit) {
	if g.forbidden == nil {
		g.forbidden = map[forbidKey][]int64{}
	}
	k := forbidKey{x: x}
	if len(enf) == 1 {
		k.under, k.cond = enf[0], true
	}
	g.forbidden[k] = append(g.forbidden[k], v)
}

func (g *grounder) flushForbidden() {
	if len(g.forbidden) == 0 {
		return
	}
	ks := make([]forbidKey, 0, len(g.forbidden))
	for k := range g.forbidden {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if a, b := ks[i].x.Index(), ks[j].x.Index(); a != b {
			return a < b
		}
		if ks[i].cond != ks[j].cond {
			return !ks[i].cond
		}
		return ks[i].under.Index() < ks[j].under.Index()
	})
	for _, k := range ks {
		c := g.m.AddNonMembership(k.x, g.forbidden[k])
		if k.cond {
			c.OnlyEnforceIf(k.under)
		}
		g.note(c)
	}
	g.forbidden = nil
}

// eq is the form x = v, folded when v is not a possible value or the only one.
func (g *grounder) eq(x cp.IntVar, v int64) form {
	d := g.m.VarDomain(x.Index())
	if !d.Contains(v) {
		return fFalse
	}
	if d.Size() == 1 {
		return fTrue
	}
	return fEq{x: x, v: v}
}
