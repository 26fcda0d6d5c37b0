package scheduler

import (
	"github.com/weavesql/weave"
	"github.com/weavesql/weave/cp"
)

// CompileOptions are the options the scheduler's models are compiled with
// (the aggregates their SQL uses beyond Weave's own): pass them to
// weave.Compile with SchemaSQL or ModelSQL.
func CompileOptions() []weave.CompileOption {
	return []weave.CompileOption{weave.WithAggregate(allEqual)}
}

// allEqual is the constraint aggregate all_equal(x): the values of a
// group's rows are equal, NULL skipped like every SQL aggregate (over a
// nullable decision column, the rows whose variable is NULL are absent).
// One variable for the common value, and each present row equal to it.
var allEqual = weave.Aggregate{
	Name: "all_equal",
	Post: func(m *cp.Model, values []cp.LinearExpr, present []cp.Lit) []cp.Constraint {
		if len(values) < 2 {
			return nil
		}
		lo, hi := int64(0), int64(0)
		for i, e := range values {
			a, b := e.Offset, e.Offset
			for j, v := range e.Vars {
				d := m.VarDomain(v.Index())
				x, y := e.Coeffs[j]*d.Min(), e.Coeffs[j]*d.Max()
				a, b = a+min(x, y), b+max(x, y)
			}
			if i == 0 {
				lo, hi = a, b
			}
			lo, hi = min(lo, a), max(hi, b)
		}
		y := m.NewIntVar(lo, hi, "all_equal")
		var out []cp.Constraint
		for i, e := range values {
			var d cp.LinearExpr
			d.AddExpr(e, 1).AddTerm(y, -1)
			out = append(out, m.AddEquality(d, 0).OnlyEnforceIf(present[i]))
		}
		return out
	},
	Holds: func(values []any) bool {
		var first any
		for _, v := range values {
			if v == nil {
				continue
			}
			if first == nil {
				first = v
			} else if v != first {
				return false
			}
		}
		return true
	},
}
