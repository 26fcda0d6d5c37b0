package weave

import (
	"sort"

	"github.com/weavesql/weave/cp"
)

// Aggregate is a constraint aggregate: a function over the values of a
// column in a group that holds or not, like all_different. Selected by a
// hard-constraint view ("select all_different(node_name) from pod group by
// app"), it must hold in every group.
//
// Registering one takes a few lines: Post adds the constraints to the
// solver's model, Holds checks a solved group (for verification).
type Aggregate struct {
	// Name is how SQL calls it (case-insensitive).
	Name string
	// Post constrains the group's values. Each value is a linear expression
	// over solver variables (strings are codes: equal strings, equal
	// codes); present[i] holds when row i belongs to the group (TrueLit
	// for rows that always do). It returns the constraints it added so
	// Weave can attribute them to the view.
	Post func(m *cp.Model, values []cp.LinearExpr, present []cp.Lit) []cp.Constraint
	// Holds reports whether the aggregate holds over a group's solved
	// values (int64, string or bool). Verify uses it.
	Holds func(values []any) bool
}

// AllDifferent is the built-in all_different aggregate: the values of
// the group are pairwise distinct. It is registered through the same
// mechanism as user aggregates.
var AllDifferent = Aggregate{
	Name: "all_different",
	Post: func(m *cp.Model, values []cp.LinearExpr, present []cp.Lit) []cp.Constraint {
		if c := allDifferentExcept(m, values, present); c != nil {
			return c
		}
		// Rows present under one literal L (an explanation's assumption
		// on the group), the others always: one all_different over every
		// row enforced by L, and one over the rows always present. The
		// propagator then sees the whole group (a pigeonhole refutes L).
		var always, cond []int
		var l cp.Lit
		one := true
		for i, p := range present {
			switch {
			case p == m.TrueLit():
				always = append(always, i)
			case p == m.FalseLit():
			case len(cond) == 0 || p == l:
				l = p
				cond = append(cond, i)
			default:
				one = false
			}
		}
		xs := map[int]cp.IntVar{}
		vars := func(idx []int) []cp.IntVar {
			out := make([]cp.IntVar, len(idx))
			for k, i := range idx {
				x, ok := xs[i]
				if !ok {
					x = asVar(m, values[i])
					xs[i] = x
				}
				out[k] = x
			}
			return out
		}
		switch {
		case len(cond) == 0:
			return []cp.Constraint{m.AddAllDifferent(vars(always)...)}
		case one:
			all := append(append([]int(nil), always...), cond...)
			sort.Ints(all)
			out := []cp.Constraint{m.AddAllDifferent(vars(all)...).OnlyEnforceIf(l)}
			if len(always) > 1 {
				out = append(out, m.AddAllDifferent(vars(always)...))
			}
			return out
		}
		// Rows that exist under different conditions: pairwise, enforced
		// by both rows being present.
		var out []cp.Constraint
		for i := range values {
			for j := i + 1; j < len(values); j++ {
				var d cp.LinearExpr
				d.AddExpr(values[i], 1).AddExpr(values[j], -1)
				out = append(out, m.AddNotEqual(d, 0).OnlyEnforceIf(present[i], present[j]))
			}
		}
		return out
	},
	Holds: func(values []any) bool {
		seen := map[any]bool{}
		for _, v := range values {
			if v == nil {
				continue
			}
			if seen[v] {
				return false
			}
			seen[v] = true
		}
		return true
	},
}

var builtinAggregates = map[string]Aggregate{"all_different": AllDifferent}

// allDifferentExcept posts all_different over a nullable decision column
// (SQL aggregates skip NULL) as one all_different except the column's NULL
// code: every row is present exactly when its variable is not that code
// (or always, if the variable cannot take it). It returns nil when the
// group is not of that shape.
func allDifferentExcept(m *cp.Model, values []cp.LinearExpr, present []cp.Lit) []cp.Constraint {
	var null int64
	found := false
	xs := make([]cp.IntVar, len(values))
	for i, e := range values {
		if len(e.Vars) != 1 || e.Coeffs[0] != 1 || e.Offset != 0 {
			return nil
		}
		xs[i] = e.Vars[0]
		if present[i] == m.TrueLit() {
			continue
		}
		x, v, negated, ok := m.EqLitOf(present[i])
		if !ok || !negated || x != xs[i] || found && v != null {
			return nil
		}
		null, found = v, true
	}
	if !found {
		return nil
	}
	for i, x := range xs {
		if present[i] == m.TrueLit() && m.VarDomain(x.Index()).Contains(null) {
			return nil // always present, yet may take the exempt code
		}
	}
	return []cp.Constraint{m.AddAllDifferentExcept([]int64{null}, xs...)}
}

// asVar turns an expression into a variable: the variable itself, a
// constant, or a new variable equal to the expression.
func asVar(m *cp.Model, e cp.LinearExpr) cp.IntVar {
	if len(e.Vars) == 0 {
		return m.NewConstant(e.Offset)
	}
	if len(e.Vars) == 1 && e.Coeffs[0] == 1 && e.Offset == 0 {
		return e.Vars[0]
	}
	var lo, hi int64
	lo, hi = e.Offset, e.Offset
	for i, v := range e.Vars {
		d := m.VarDomain(v.Index())
		a, b := e.Coeffs[i]*d.Min(), e.Coeffs[i]*d.Max()
		if a > b {
			a, b = b, a
		}
		lo, hi = lo+a, hi+b
	}
	x := m.NewIntVar(lo, hi, "")
	var d cp.LinearExpr
	d.AddExpr(e, 1).AddTerm(x, -1)
	m.AddEquality(d, 0)
	return x
}
