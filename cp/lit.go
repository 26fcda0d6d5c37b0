package cp

import "fmt"

// Lit is a Boolean literal: a 0/1 variable or its negation. The index
// encodes both (2*var + negated), so Not is free.
type Lit struct {
	m   *Model
	idx int32
}

// Not returns the negation of l.
func (l Lit) Not() Lit { return Lit{m: l.m, idx: l.idx ^ 1} }

// Var returns the literal's 0/1 variable (for a negated literal, the
// variable of its positive form).
func (l Lit) Var() IntVar { return IntVar{m: l.m, idx: l.idx >> 1} }

// Index returns a stable id: 2*Var().Index() + 1 if negated.
func (l Lit) Index() int { return int(l.idx) }

// IsNegated reports whether l is the negation of its variable.
func (l Lit) IsNegated() bool { return l.idx&1 == 1 }

// String renders the literal as its variable name, prefixed by "!" if negated.
func (l Lit) String() string {
	if l.IsNegated() {
		return fmt.Sprintf("!%v", l.Var())
	}
	return l.Var().String()
}

// TrueLit returns a literal that is always true (constant 1).
func (m *Model) TrueLit() Lit { return Lit{m: m, idx: m.NewConstant(1).idx << 1} }

// FalseLit returns a literal that is always false.
func (m *Model) FalseLit() Lit { return m.TrueLit().Not() }

// BoolLit returns the positive literal of a variable whose domain is within
// {0, 1}, so integer 0/1 variables can be used in Boolean constraints.
func (m *Model) BoolLit(x IntVar) Lit {
	if !m.okVar(x, "BoolLit") {
		return m.FalseLit()
	}
	if d := m.doms[x.idx]; d.Min() < 0 || d.Max() > 1 {
		m.failf("BoolLit(%v): domain is not within {0,1}", x)
		return m.FalseLit()
	}
	return Lit{m: m, idx: x.idx << 1}
}

func (m *Model) isBoolVar(v int32) bool {
	d := m.doms[v]
	return d.Min() >= 0 && d.Max() <= 1
}

// EqLit returns a literal equivalent to x == v, cached per (x, v). It is
// FalseLit if v is not in x's domain and TrueLit if x is fixed to v. The
// engine channels these literals natively to x's domain.
func (m *Model) EqLit(x IntVar, v int64) Lit {
	if !m.okVar(x, "EqLit") {
		return m.FalseLit()
	}
	d := m.doms[x.idx]
	switch {
	case !d.Contains(v):
		return m.FalseLit()
	case d.Min() == d.Max():
		return m.TrueLit()
	case m.isBoolVar(x.idx):
		return Lit{m: m, idx: x.idx<<1 | int32(1-v)}
	}
	k := encKey{x.idx, v}
	if l, ok := m.eqCache[k]; ok {
		return l
	}
	b := m.newVar(NewDomain(0, 1), fmt.Sprintf("%v==%d", x, v), originEncoding)
	l := Lit{m: m, idx: b.idx << 1}
	m.eqCache[k] = l
	if m.eqOf == nil {
		m.eqOf = map[int32]encKey{}
	}
	m.eqOf[b.idx] = k
	m.add(ConstraintInfo{Kind: KindEqLit, Vars: []IntVar{x}, Lits: []Lit{l}, Values: []int64{v}})
	return l
}

// EqLitOf tells what an encoding literal made by EqLit means: l is
// x == v (negated false) or its negation x != v (negated true). ok is
// false for any other literal, and for the literals EqLit answers with
// without making one (constants, a Boolean variable itself).
func (m *Model) EqLitOf(l Lit) (x IntVar, v int64, negated, ok bool) {
	if l.m != m {
		return IntVar{}, 0, false, false
	}
	k, ok := m.eqOf[l.idx>>1]
	if !ok {
		return IntVar{}, 0, false, false
	}
	return IntVar{m: m, idx: k.v}, k.val, l.idx&1 == 1, true
}

// LeLit returns a literal equivalent to x <= v, cached per (x, v).
func (m *Model) LeLit(x IntVar, v int64) Lit {
	if !m.okVar(x, "LeLit") {
		return m.FalseLit()
	}
	d := m.doms[x.idx]
	switch {
	case v >= d.Max():
		return m.TrueLit()
	case v < d.Min():
		return m.FalseLit()
	case m.isBoolVar(x.idx): // here v == 0
		return Lit{m: m, idx: x.idx<<1 | 1}
	}
	k := encKey{x.idx, v}
	if l, ok := m.leCache[k]; ok {
		return l
	}
	b := m.newVar(NewDomain(0, 1), fmt.Sprintf("%v<=%d", x, v), originEncoding)
	l := Lit{m: m, idx: b.idx << 1}
	m.leCache[k] = l
	m.add(ConstraintInfo{Kind: KindLeLit, Vars: []IntVar{x}, Lits: []Lit{l}, Values: []int64{v}})
	return l
}
