package cp

import (
	"context"
	"testing"
	"time"
)

// A Checker answers like CheckAssumptions, question after question, on
// the same engine.
func TestCheckerReusesOneEngine(t *testing.T) {
	m := NewModel()
	x := m.NewIntVar(0, 3, "x")
	y := m.NewIntVar(0, 3, "y")
	a, b, c := m.NewBoolVar("a"), m.NewBoolVar("b"), m.NewBoolVar("c")
	var e LinearExpr
	e.AddTerm(x, 1).AddTerm(y, 1)
	m.AddGreaterOrEqual(e, 5).OnlyEnforceIf(a) // x + y >= 5
	m.AddLessOrEqual(varExpr(x), 1).OnlyEnforceIf(b)
	m.AddLessOrEqual(varExpr(y), 1).OnlyEnforceIf(c)
	m.AddAllDifferent(x, y)
	ch := m.NewChecker()
	ctx := context.Background()
	deadline := time.Now().Add(5 * time.Second)
	cases := []struct {
		lits []Lit
		want Status
	}{
		{[]Lit{a, b, c}, Infeasible},
		{[]Lit{a, b}, Feasible},      // x <= 1, y = 4? no: y <= 3 → x=2? x<=1 → x+y <= 4: infeasible
		{[]Lit{b, c}, Feasible},      // x, y in {0,1}, different
		{[]Lit{a}, Feasible},         // x=2, y=3
		{[]Lit{a, b, c}, Infeasible}, // again, after other questions
		{nil, Feasible},
	}
	cases[1].want = Infeasible // x <= 1 and y <= 3 cannot reach 5
	for i, tc := range cases {
		if got := ch.Check(ctx, tc.lits, deadline, 10000); got != tc.want {
			t.Errorf("question %d: got %s, want %s", i, got, tc.want)
		}
		if got := m.CheckAssumptions(ctx, tc.lits, deadline, 10000); got != tc.want {
			t.Errorf("question %d: CheckAssumptions says %s, want %s", i, got, tc.want)
		}
	}
}

func varExpr(x IntVar) LinearExpr {
	var e LinearExpr
	e.AddTerm(x, 1)
	return e
}
