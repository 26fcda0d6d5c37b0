package cp

import (
	"fmt"
	"slices"
)

// satSub returns a-b clamped to [-2*MaxMagnitude, 2*MaxMagnitude], which is
// wide enough to compare against any expression range.
func satSub(a, b int64) int64 {
	const lim = 2 * MaxMagnitude
	// b is an expression offset, so |b| <= MaxMagnitude and -b is safe.
	s, ok := addChecked(a, -b)
	switch {
	case !ok && b < 0, ok && s > lim:
		return lim
	case !ok, s < -lim:
		return -lim
	}
	return s
}

// AddLinear adds lo <= e <= hi. Use math.MinInt64 / math.MaxInt64 for an
// open side. Constraints whose terms could overflow int64 are rejected.
func (m *Model) AddLinear(e LinearExpr, lo, hi int64) Constraint {
	vars, coeffs, off, elo, ehi, ok := m.normLinear(e, "linear")
	if !ok {
		return m.rejected()
	}
	// Fold the offset and clamp to the reachable range so later arithmetic
	// stays small.
	l, h := max(satSub(lo, off), elo-off), min(satSub(hi, off), ehi-off)
	if l > h {
		l, h = 1, 0 // canonical empty range: the constraint cannot hold
	}
	return m.add(ConstraintInfo{Kind: KindLinear, Vars: vars, Coeffs: coeffs, Lo: l, Hi: h})
}

// AddLessOrEqual adds e <= k.
func (m *Model) AddLessOrEqual(e LinearExpr, k int64) Constraint {
	return m.AddLinear(e, minInt64, k)
}

// AddGreaterOrEqual adds e >= k.
func (m *Model) AddGreaterOrEqual(e LinearExpr, k int64) Constraint {
	return m.AddLinear(e, k, maxInt64)
}

// AddEquality adds e == k.
func (m *Model) AddEquality(e LinearExpr, k int64) Constraint { return m.AddLinear(e, k, k) }

// AddNotEqual adds e != k.
func (m *Model) AddNotEqual(e LinearExpr, k int64) Constraint {
	vars, coeffs, off, elo, ehi, ok := m.normLinear(e, "not_equal")
	if !ok {
		return m.rejected()
	}
	v := satSub(k, off)
	if v < elo-off || v > ehi-off {
		v = ehi - off + 1 // unreachable, so trivially satisfied; keeps values small
	}
	return m.add(ConstraintInfo{Kind: KindNotEqual, Vars: vars, Coeffs: coeffs, Lo: v, Hi: v})
}

// AddBoolOr adds "at least one of lits" (false when lits is empty).
func (m *Model) AddBoolOr(lits ...Lit) Constraint {
	if !m.okLits(lits, "bool_or") {
		return m.rejected()
	}
	return m.add(ConstraintInfo{Kind: KindBoolOr, Lits: append([]Lit(nil), lits...)})
}

// AddBoolAnd adds "all of lits".
func (m *Model) AddBoolAnd(lits ...Lit) Constraint {
	if !m.okLits(lits, "bool_and") {
		return m.rejected()
	}
	return m.add(ConstraintInfo{Kind: KindBoolAnd, Lits: append([]Lit(nil), lits...)})
}

// AddAtMostOne adds "at most one of lits is true".
func (m *Model) AddAtMostOne(lits ...Lit) Constraint {
	if !m.okLits(lits, "at_most_one") {
		return m.rejected()
	}
	return m.add(ConstraintInfo{Kind: KindAtMostOne, Lits: append([]Lit(nil), lits...)})
}

// AddExactlyOne adds "exactly one of lits is true".
func (m *Model) AddExactlyOne(lits ...Lit) Constraint {
	if !m.okLits(lits, "exactly_one") {
		return m.rejected()
	}
	return m.add(ConstraintInfo{Kind: KindExactlyOne, Lits: append([]Lit(nil), lits...)})
}

// AddImplication adds a => b, stored as the clause (!a or b).
func (m *Model) AddImplication(a, b Lit) Constraint {
	return m.AddBoolOr(a.Not(), b)
}

// AddAllDifferent adds "vars take pairwise distinct values". It accepts
// OnlyEnforceIf: the propagator then filters once every enforcement
// literal is true, and sets the last unfixed one false when the members
// cannot be distinct (e.g. more members than values between them), so an
// assumption enforcing an impossible all_different is refuted at once.
func (m *Model) AddAllDifferent(vars ...IntVar) Constraint {
	if !m.okVars(vars, "all_different") {
		return m.rejected()
	}
	return m.add(ConstraintInfo{Kind: KindAllDifferent, Vars: append([]IntVar(nil), vars...)})
}

// AddAllDifferentExcept adds "vars take pairwise distinct values, except
// that any number of them may take a value of except" (MiniZinc's
// alldifferent_except): a nullable decision column whose NULL may repeat,
// such as a pod left unplaced, is all_different except its NULL code. It
// accepts OnlyEnforceIf like AddAllDifferent.
func (m *Model) AddAllDifferentExcept(except []int64, vars ...IntVar) Constraint {
	if !m.okVars(vars, "all_different") {
		return m.rejected()
	}
	var ex []int64 // nil when nothing is exempt: a plain all_different
	if len(except) > 0 {
		ex = slices.Clone(except)
		slices.Sort(ex)
		ex = slices.Compact(ex)
	}
	return m.add(ConstraintInfo{Kind: KindAllDifferent, Vars: append([]IntVar(nil), vars...), Values: ex})
}

func (m *Model) okValues(vals []int64, what string) bool {
	for _, v := range vals {
		if abs64(v) > MaxMagnitude {
			m.failf("%s: value %d exceeds MaxMagnitude (overflow)", what, v)
			return false
		}
	}
	return true
}

// AddElement adds target == values[index] (0-based).
func (m *Model) AddElement(index IntVar, values []int64, target IntVar) Constraint {
	if !m.okVar(index, "element") || !m.okVar(target, "element") || !m.okValues(values, "element") {
		return m.rejected()
	}
	if len(values) == 0 {
		m.failf("element: empty value array")
		return m.rejected()
	}
	return m.add(ConstraintInfo{Kind: KindElement, Index: index, Target: target, Values: append([]int64(nil), values...)})
}

// AddVarElement adds target == vars[index] (0-based).
func (m *Model) AddVarElement(index IntVar, vars []IntVar, target IntVar) Constraint {
	if !m.okVar(index, "var_element") || !m.okVar(target, "var_element") || !m.okVars(vars, "var_element") {
		return m.rejected()
	}
	if len(vars) == 0 {
		m.failf("var_element: empty variable array")
		return m.rejected()
	}
	return m.add(ConstraintInfo{Kind: KindVarElement, Index: index, Target: target, Vars: append([]IntVar(nil), vars...)})
}

// AddAllowedAssignments adds a table constraint: the tuple of vars equals
// one of tuples.
func (m *Model) AddAllowedAssignments(vars []IntVar, tuples [][]int64) Constraint {
	if !m.okVars(vars, "table") {
		return m.rejected()
	}
	ts := make([][]int64, len(tuples))
	for i, t := range tuples {
		if len(t) != len(vars) {
			m.failf("table: tuple %d has %d values, want %d", i, len(t), len(vars))
			return m.rejected()
		}
		if !m.okValues(t, "table") {
			return m.rejected()
		}
		ts[i] = append([]int64(nil), t...)
	}
	return m.add(ConstraintInfo{Kind: KindTable, Vars: append([]IntVar(nil), vars...), Tuples: ts})
}

// AddMembership adds x ∈ values.
func (m *Model) AddMembership(x IntVar, values []int64) Constraint {
	if !m.okVar(x, "membership") || !m.okValues(values, "membership") {
		return m.rejected()
	}
	return m.add(ConstraintInfo{Kind: KindMembership, Vars: []IntVar{x}, Values: m.valueSet(values)})
}

// valueSet returns the model's copy of a membership's values, one copy
// shared by every membership that lists the same values in the same
// order (the model's constraints never change their values). A placement
// model tests a hundred pods against the same nodes of a zone, and a
// reified membership posts the set twice (in, and not in): one copy, and
// one domain in the solver, instead of one per constraint.
func (m *Model) valueSet(values []int64) []int64 {
	h := uint64(len(values))
	for _, v := range values {
		h = (h ^ uint64(v)) * 0x100000001B3
	}
	for _, s := range m.valueSets[h] {
		if slices.Equal(s, values) {
			return s
		}
	}
	if m.valueSets == nil {
		m.valueSets = map[uint64][][]int64{}
	}
	s := append([]int64(nil), values...)
	m.valueSets[h] = append(m.valueSets[h], s)
	return s
}

// AddVarMembership adds "x equals one of vars": x ∈ {vars[i]}, a
// membership whose set is decided by the search. It states "this pod is
// on a node that holds one of those pods" in one constraint, where a
// reified equality per pair would cost a literal per (x, vars[i]). With
// no vars it cannot hold.
func (m *Model) AddVarMembership(x IntVar, vars []IntVar) Constraint {
	if !m.okVar(x, "var_membership") || !m.okVars(vars, "var_membership") {
		return m.rejected()
	}
	return m.add(ConstraintInfo{Kind: KindVarMembership, Vars: append([]IntVar{x}, vars...)})
}

// AddNonMembership adds x ∉ values.
func (m *Model) AddNonMembership(x IntVar, values []int64) Constraint {
	if !m.okVar(x, "non_membership") || !m.okValues(values, "non_membership") {
		return m.rejected()
	}
	return m.add(ConstraintInfo{Kind: KindNonMembership, Vars: []IntVar{x}, Values: m.valueSet(values)})
}

// AddBinPacking adds loads[j] == Σ_i sizes[i]*[assign[i] == bins[j]] for
// one resource. Sizes must be >= 0 and bins distinct. A fixed capacity is
// the load variable's upper bound; a variable one is a constraint on it.
// Items may take values outside bins (they then load no listed bin).
func (m *Model) AddBinPacking(assign []IntVar, sizes []int64, bins []int64, loads []IntVar) Constraint {
	if !m.okVars(assign, "bin_packing") || !m.okVars(loads, "bin_packing") || !m.okValues(bins, "bin_packing") {
		return m.rejected()
	}
	if len(assign) != len(sizes) || len(bins) != len(loads) {
		m.failf("bin_packing: %d items with %d sizes, %d bins with %d loads", len(assign), len(sizes), len(bins), len(loads))
		return m.rejected()
	}
	var total int64
	for _, s := range sizes {
		if s < 0 {
			m.failf("bin_packing: negative size %d", s)
			return m.rejected()
		}
		total += s
		if s > MaxMagnitude || total > MaxMagnitude {
			m.failf("bin_packing: total size exceeds MaxMagnitude (overflow)")
			return m.rejected()
		}
	}
	seen := map[int64]bool{}
	for _, b := range bins {
		if seen[b] {
			m.failf("bin_packing: duplicate bin %d", b)
			return m.rejected()
		}
		seen[b] = true
	}
	return m.add(ConstraintInfo{Kind: KindBinPacking, Vars: append([]IntVar(nil), assign...),
		Values: append([]int64(nil), sizes...), Bins: append([]int64(nil), bins...), Loads: append([]IntVar(nil), loads...)})
}

func (m *Model) minMax(kind ConstraintKind, target IntVar, exprs []LinearExpr) Constraint {
	if !m.okVar(target, string(kind)) {
		return m.rejected()
	}
	if len(exprs) == 0 {
		m.failf("%s: no expressions", kind)
		return m.rejected()
	}
	es := make([]LinearExpr, len(exprs))
	for i, e := range exprs {
		vars, coeffs, off, _, _, ok := m.normLinearNamed(e, func() string { return fmt.Sprintf("%s expression %d", kind, i) })
		if !ok {
			return m.rejected()
		}
		es[i] = LinearExpr{Vars: vars, Coeffs: coeffs, Offset: off}
	}
	return m.add(ConstraintInfo{Kind: kind, Target: target, Exprs: es})
}

// AddMinEquality adds target == min(exprs).
func (m *Model) AddMinEquality(target IntVar, exprs []LinearExpr) Constraint {
	return m.minMax(KindMinEquality, target, exprs)
}

// AddMaxEquality adds target == max(exprs).
func (m *Model) AddMaxEquality(target IntVar, exprs []LinearExpr) Constraint {
	return m.minMax(KindMaxEquality, target, exprs)
}

// Objective describes the model's objective: minimise (or maximise) Expr.
type Objective struct {
	Expr     LinearExpr
	Maximize bool
}

func (m *Model) setObjective(e LinearExpr, maximize bool) {
	vars, coeffs, off, _, _, ok := m.normLinear(e, "objective")
	if !ok {
		return
	}
	m.obj = &Objective{Expr: LinearExpr{Vars: vars, Coeffs: coeffs, Offset: off}, Maximize: maximize}
}

// Minimize sets the objective to minimise e (replacing any previous one).
func (m *Model) Minimize(e LinearExpr) { m.setObjective(e, false) }

// Maximize sets the objective to maximise e (replacing any previous one).
func (m *Model) Maximize(e LinearExpr) { m.setObjective(e, true) }
