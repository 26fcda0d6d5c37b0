package cp

import (
	"context"
	"testing"
)

// TestAllDifferentExcept: members may share an exempt value (the NULL of
// an unplaced pod) but no other. With 4 members over {0 (exempt), 1, 2},
// at most two take 1 or 2 and the others must take 0; maximising how many
// are non-zero reaches 2, never more; without the exemption the model is
// infeasible (a pigeonhole over 3 values).
func TestAllDifferentExcept(t *testing.T) {
	build := func(except []int64) (*Model, []IntVar) {
		m := NewModel()
		var xs []IntVar
		var nonZero LinearExpr
		for i := 0; i < 4; i++ {
			x := m.NewIntVar(0, 2, "x")
			xs = append(xs, x)
			nonZero.AddTerm(m.EqLit(x, 0).Var(), -1) // 1 - [x == 0]
			nonZero.AddConstant(1)
		}
		if except == nil {
			m.AddAllDifferent(xs...)
		} else {
			m.AddAllDifferentExcept(except, xs...)
		}
		m.Maximize(nonZero)
		return m, xs
	}
	m, xs := build([]int64{0})
	r, err := m.Solve(context.Background(), Params{Seed: 1})
	if err != nil || r.Status != Optimal || r.Objective != 2 {
		t.Fatalf("except {0}: %v, status %v, objective %d; want optimal 2", err, r.Status, r.Objective)
	}
	if err := m.Verify(r); err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, x := range xs {
		seen[r.Value(x)]++
	}
	if seen[0] != 2 || seen[1] != 1 || seen[2] != 1 {
		t.Fatalf("values %v: want two 0s, one 1, one 2", seen)
	}
	m, _ = build(nil)
	if r, err := m.Solve(context.Background(), Params{Seed: 1}); err != nil || r.Status != Infeasible {
		t.Fatalf("plain all_different over 4 members and 3 values: %v, %v; want infeasible", err, r.Status)
	}

	// Propagation: a member fixed to a shared value removes it from nobody;
	// one fixed to another value removes that value from the others.
	m = NewModel()
	a, b, c := m.NewIntVar(0, 3, "a"), m.NewIntVar(0, 3, "b"), m.NewIntVar(0, 3, "c")
	m.AddAllDifferentExcept([]int64{0, 3}, a, b, c)
	m.AddEquality(varExpr(a), 0)
	m.AddEquality(varExpr(b), 2)
	s, ok := newSolver(m, false)
	if !ok || !s.propagate() {
		t.Fatal("root propagation failed")
	}
	for v, want := range map[int64]bool{0: true, 1: true, 2: false, 3: true} {
		if s.contains(c.idx, v) != want {
			t.Errorf("after a = 0, b = 2: c may take %d: %v, want %v", v, !want, want)
		}
	}
}

// TestEqLitOf: the literals EqLit makes tell what they encode; others do
// not claim to.
func TestEqLitOf(t *testing.T) {
	m := NewModel()
	x := m.NewIntVar(0, 9, "x")
	l := m.EqLit(x, 4)
	if y, v, neg, ok := m.EqLitOf(l); !ok || y != x || v != 4 || neg {
		t.Fatalf("EqLitOf(x == 4) = %v %d %v %v", y, v, neg, ok)
	}
	if y, v, neg, ok := m.EqLitOf(l.Not()); !ok || y != x || v != 4 || !neg {
		t.Fatalf("EqLitOf(x != 4) = %v %d %v %v", y, v, neg, ok)
	}
	if _, _, _, ok := m.EqLitOf(m.LeLit(x, 4)); ok {
		t.Fatal("EqLitOf claims a LeLit")
	}
	if _, _, _, ok := m.EqLitOf(m.NewBoolVar("b")); ok {
		t.Fatal("EqLitOf claims a plain Boolean")
	}
	if _, _, _, ok := m.EqLitOf(NewModel().EqLit(NewModel().NewIntVar(0, 1, "z"), 0)); ok {
		t.Fatal("EqLitOf claims another model's literal")
	}
}
