package cp

import (
	"context"
	"testing"
)

func TestQuickNQueens(t *testing.T) {
	m := NewModel()
	n := 8
	q := make([]IntVar, n)
	for i := range q {
		q[i] = m.NewIntVar(0, int64(n-1), "q")
	}
	m.AddAllDifferent(q...)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			var e LinearExpr
			e.AddTerm(q[i], 1).AddTerm(q[j], -1)
			m.AddNotEqual(e, int64(j-i))
			m.AddNotEqual(e, int64(i-j))
		}
	}
	var obj LinearExpr
	obj.AddTerm(q[0], 1)
	m.Maximize(obj)
	r, err := m.Solve(context.Background(), Params{})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(r, r.Stats)
	if err := m.Verify(r); err != nil {
		t.Fatal(err)
	}
	if r.Status != Optimal || r.Objective != 7 {
		t.Fatalf("got %v", r)
	}
}
