package cp

import (
	"fmt"
	"slices"
)

// ConstraintKind names a constraint type; it is the key of
// Stats.ConstraintsByKind and appears in errors.
type ConstraintKind string

// Constraint kinds. KindEqLit and KindLeLit are the channelling
// constraints created by EqLit and LeLit.
const (
	KindLinear        ConstraintKind = "linear"         // Lo <= Σ Coeffs*Vars <= Hi
	KindNotEqual      ConstraintKind = "not_equal"      // Σ Coeffs*Vars != Lo
	KindBoolOr        ConstraintKind = "bool_or"        // some of Lits
	KindBoolAnd       ConstraintKind = "bool_and"       // all of Lits
	KindAtMostOne     ConstraintKind = "at_most_one"    // Σ Lits <= 1
	KindExactlyOne    ConstraintKind = "exactly_one"    // Σ Lits == 1
	KindAllDifferent  ConstraintKind = "all_different"  // Vars pairwise distinct, except at the values of Values (sorted)
	KindElement       ConstraintKind = "element"        // Target == Values[Index]
	KindVarElement    ConstraintKind = "var_element"    // Target == Vars[Index]
	KindTable         ConstraintKind = "table"          // Vars ∈ Tuples
	KindMembership    ConstraintKind = "membership"     // Vars[0] ∈ Values
	KindNonMembership ConstraintKind = "non_membership" // Vars[0] ∉ Values
	KindVarMembership ConstraintKind = "var_membership" // Vars[0] == Vars[i] for some i >= 1
	KindBinPacking    ConstraintKind = "bin_packing"    // Loads[j] == Σ Values[i]*[Vars[i]==Bins[j]]
	KindMinEquality   ConstraintKind = "min_equality"   // Target == min(Exprs)
	KindMaxEquality   ConstraintKind = "max_equality"   // Target == max(Exprs)
	KindEqLit         ConstraintKind = "eq_lit"         // Lits[0] <=> Vars[0] == Values[0]
	KindLeLit         ConstraintKind = "le_lit"         // Lits[0] <=> Vars[0] <= Values[0]
)

// ConstraintInfo is the read-only description of one constraint, as
// returned by Model.Constraints. Which fields are used depends on Kind
// (see the Kind constants). A constraint with Enforcement literals only
// has to hold when all of them are true. Linear offsets are folded into
// Lo and Hi.
type ConstraintInfo struct {
	Kind        ConstraintKind
	Name        string
	Enforcement []Lit
	Vars        []IntVar
	Coeffs      []int64
	Lo, Hi      int64
	Lits        []Lit
	Values      []int64 // element values, membership set, bin-packing sizes, eq/le literal value
	Bins        []int64
	Tuples      [][]int64
	Index       IntVar
	Target      IntVar
	Loads       []IntVar
	Exprs       []LinearExpr
}

// Label renders the kind and, if set, the name, e.g. `linear "capacity"`.
func (c *ConstraintInfo) Label() string {
	if c.Name != "" {
		return fmt.Sprintf("%s %q", c.Kind, c.Name)
	}
	return string(c.Kind)
}

// enforceable lists the kinds that accept OnlyEnforceIf.
var enforceable = map[ConstraintKind]bool{
	KindLinear: true, KindNotEqual: true, KindBoolOr: true, KindBoolAnd: true,
	KindMembership: true, KindNonMembership: true, KindMinEquality: true, KindMaxEquality: true,
	KindAllDifferent: true, KindVarMembership: true,
}

// Constraint is a handle to a constraint just added, for the fluent
// OnlyEnforceIf and WithName calls. A handle for a rejected constraint
// is inert.
type Constraint struct {
	m   *Model
	idx int
}

// OnlyEnforceIf makes the constraint conditional on the conjunction of
// lits. Supported on linear, not-equal, bool_or, bool_and, membership,
// non-membership, var_membership, min/max equality and all_different;
// other kinds record
// an error.
func (c Constraint) OnlyEnforceIf(lits ...Lit) Constraint {
	if c.m == nil || c.idx < 0 {
		return c
	}
	ci := &c.m.cons[c.idx]
	if !enforceable[ci.Kind] {
		c.m.failf("%s: OnlyEnforceIf is not supported on this kind", ci.Label())
		return c
	}
	for _, l := range lits {
		if !c.m.okLit(l, ci.Label()+" OnlyEnforceIf") {
			return c
		}
	}
	ci.Enforcement = append(ci.Enforcement, lits...)
	return c
}

// WithName names the constraint (typically the SQL view that produced it);
// the name appears in errors, statistics and Verify messages.
func (c Constraint) WithName(name string) Constraint {
	if c.m != nil && c.idx >= 0 {
		c.m.cons[c.idx].Name = name
	}
	return c
}

// Index returns the constraint's position in Model.Constraints, or -1 for
// a rejected constraint.
func (c Constraint) Index() int {
	if c.m == nil {
		return -1
	}
	return c.idx
}

func (m *Model) add(ci ConstraintInfo) Constraint {
	if len(m.cons) == cap(m.cons) {
		// Double the capacity: append grows large slices by a quarter,
		// which copied a 16,000-constraint model (about 300 bytes a
		// constraint) several times over and left as much garbage to
		// scan.
		m.cons = slices.Grow(m.cons, max(len(m.cons), 64))
	}
	m.cons = append(m.cons, ci)
	return Constraint{m: m, idx: len(m.cons) - 1}
}

func (m *Model) rejected() Constraint { return Constraint{m: m, idx: -1} }

func (m *Model) okVars(vs []IntVar, what string) bool {
	for _, x := range vs {
		if !m.okVar(x, what) {
			return false
		}
	}
	return true
}

func (m *Model) okLits(ls []Lit, what string) bool {
	for _, l := range ls {
		if !m.okLit(l, what) {
			return false
		}
	}
	return true
}
