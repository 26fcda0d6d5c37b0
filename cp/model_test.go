package cp

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestDomain(t *testing.T) {
	d := DomainFromValues(5, 1, 2, 3, 3, 9)
	if got := d.String(); got != "{1..3,5,9}" {
		t.Fatalf("got %s", got)
	}
	if d.Min() != 1 || d.Max() != 9 || d.Size() != 5 || d.IsEmpty() || !d.Contains(5) || d.Contains(4) {
		t.Fatal("domain accessors")
	}
	if v := d.Values(); len(v) != 5 || v[3] != 5 {
		t.Fatalf("values %v", v)
	}
	if !NewDomain(3, 2).IsEmpty() || NewDomain(math.MinInt64, math.MaxInt64).Size() != math.MaxInt64 {
		t.Fatal("empty / saturating size")
	}
	if c := d.Complement().Intersect(NewDomain(0, 10)); c.String() != "{0,4,6..8,10}" {
		t.Fatalf("complement %v", c)
	}
}

func TestInvalidModels(t *testing.T) {
	other := NewModel()
	foreign := other.NewIntVar(0, 1, "f")
	cases := map[string]func(m *Model){
		"foreign var":  func(m *Model) { m.AddAllDifferent(foreign, m.NewIntVar(0, 1, "x")) },
		"foreign lit":  func(m *Model) { m.AddBoolOr(other.NewBoolVar("b")) },
		"zero var":     func(m *Model) { m.AddAllDifferent(IntVar{}) },
		"empty domain": func(m *Model) { m.NewIntVar(3, 2, "x") },
		"huge domain":  func(m *Model) { m.NewIntVar(0, math.MaxInt64, "x") },
		"overflow": func(m *Model) {
			m.AddLinear(LinearExpr{Vars: []IntVar{m.NewIntVar(0, 1<<40, "x")}, Coeffs: []int64{1 << 40}}, 0, 1)
		},
		"bad lengths":   func(m *Model) { m.AddLinear(LinearExpr{Vars: []IntVar{m.NewIntVar(0, 1, "x")}}, 0, 1) },
		"expr overflow": func(m *Model) { var e LinearExpr; e.AddConstant(math.MaxInt64).AddConstant(1); m.AddEquality(e, 0) },
		"enforce table": func(m *Model) {
			m.AddAllowedAssignments([]IntVar{m.NewIntVar(0, 1, "x")}, [][]int64{{1}}).OnlyEnforceIf(m.NewBoolVar("b"))
		},
		"empty element": func(m *Model) { m.AddElement(m.NewIntVar(0, 1, "i"), nil, m.NewIntVar(0, 1, "t")) },
		"tuple length":  func(m *Model) { m.AddAllowedAssignments([]IntVar{m.NewIntVar(0, 1, "x")}, [][]int64{{1, 2}}) },
		"negative size": func(m *Model) {
			x := m.NewIntVar(0, 1, "x")
			m.AddBinPacking([]IntVar{x}, []int64{-1}, []int64{0}, []IntVar{x})
		},
		"duplicate bin": func(m *Model) {
			x := m.NewIntVar(0, 1, "x")
			m.AddBinPacking([]IntVar{x}, []int64{1}, []int64{0, 0}, []IntVar{x, x})
		},
		"bin lengths": func(m *Model) {
			x := m.NewIntVar(0, 1, "x")
			m.AddBinPacking([]IntVar{x}, nil, []int64{0}, []IntVar{x})
		},
		"no min exprs":   func(m *Model) { m.AddMinEquality(m.NewIntVar(0, 1, "x"), nil) },
		"foreign hint":   func(m *Model) { m.AddHint(foreign, 1) },
		"foreign assume": func(m *Model) { m.AddAssumptions(other.NewBoolVar("b")) },
		"foreign enf":    func(m *Model) { m.AddBoolOr(m.NewBoolVar("a")).OnlyEnforceIf(other.NewBoolVar("b")) },
		"foreign objective": func(m *Model) {
			var e LinearExpr
			m.Minimize(*e.AddTerm(foreign, 1))
		},
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			m := NewModel()
			build(m)
			// Builder calls after the error stay chainable.
			x := m.NewIntVar(0, 3, "after")
			m.AddLinear(LinearExpr{Vars: []IntVar{x}, Coeffs: []int64{1}}, 1, 2).OnlyEnforceIf(m.TrueLit()).WithName("n")
			if m.Err() == nil || !errors.Is(m.Err(), ErrInvalidModel) {
				t.Fatalf("Err() = %v", m.Err())
			}
			r, err := m.Solve(context.Background(), Params{})
			if r == nil || r.Status != ModelInvalid || !errors.Is(err, ErrInvalidModel) {
				t.Fatalf("Solve = %v, %v", r, err)
			}
		})
	}
}

func TestEncodingLiterals(t *testing.T) {
	m := NewModel()
	x := m.NewIntVarFromDomain(DomainFromValues(1, 3, 5), "x")
	if m.EqLit(x, 3) != m.EqLit(x, 3) || m.LeLit(x, 3) != m.LeLit(x, 3) {
		t.Fatal("encoding literals must be cached")
	}
	if m.EqLit(x, 2) != m.FalseLit() || m.LeLit(x, 5) != m.TrueLit() || m.LeLit(x, 0) != m.FalseLit() {
		t.Fatal("trivial encodings")
	}
	b := m.NewBoolVar("b")
	if m.EqLit(b.Var(), 1) != b || m.EqLit(b.Var(), 0) != b.Not() {
		t.Fatal("encoding of a Boolean is the literal itself")
	}
	// x == 3 or x == 5 forced by literals; minimise x.
	m.AddBoolOr(m.EqLit(x, 3), m.EqLit(x, 5))
	m.AddBoolOr(m.LeLit(x, 3).Not(), b)
	m.AddBoolAnd(b.Not())
	m.Minimize(LinearExpr{Vars: []IntVar{x}, Coeffs: []int64{1}})
	r, err := m.Solve(context.Background(), Params{})
	if err != nil || r.Status != Optimal || r.Value(x) != 5 || !r.LitValue(m.EqLit(x, 5)) || r.LitValue(m.EqLit(x, 3)) {
		t.Fatalf("got %v x=%d", r, r.Value(x))
	}
	if err := m.Verify(r); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyNamesViolatedConstraint(t *testing.T) {
	m := NewModel()
	x := m.NewIntVar(0, 5, "x")
	y := m.NewIntVar(0, 5, "y")
	m.AddLinear(LinearExpr{Vars: []IntVar{x, y}, Coeffs: []int64{1, 1}}, 3, 3).WithName("view_sum")
	r := m.NewResponseFromValues([]int64{1, 1})
	err := m.Verify(r)
	if err == nil || !strings.Contains(err.Error(), "view_sum") || !strings.Contains(err.Error(), "linear") {
		t.Fatalf("Verify = %v", err)
	}
	if err := m.Verify(m.NewResponseFromValues([]int64{1, 2})); err != nil {
		t.Fatal(err)
	}
}

func TestAssumptionCore(t *testing.T) {
	m := NewModel()
	var as []Lit
	for i := 0; i < 6; i++ {
		as = append(as, m.NewBoolVar(""))
	}
	x := m.NewIntVar(0, 10, "x")
	// as[1] => x >= 7 ; as[4] => x <= 3: only {1,4} conflict.
	m.AddGreaterOrEqual(LinearExpr{Vars: []IntVar{x}, Coeffs: []int64{1}}, 7).OnlyEnforceIf(as[1])
	m.AddLessOrEqual(LinearExpr{Vars: []IntVar{x}, Coeffs: []int64{1}}, 3).OnlyEnforceIf(as[4])
	m.AddAssumptions(as...)
	r, err := m.Solve(context.Background(), Params{})
	if err != nil || r.Status != Infeasible {
		t.Fatalf("got %v %v", r, err)
	}
	if len(r.Core) != 2 || r.Core[0] != as[1] || r.Core[1] != as[4] {
		t.Fatalf("core %v", r.Core)
	}
	m.ClearAssumptions()
	m.AddAssumptions(as[1], as[2])
	r, _ = m.Solve(context.Background(), Params{})
	if r.Status != Optimal || m.Verify(r) != nil {
		t.Fatalf("got %v", r)
	}
}

func TestTimeLimitReturnsBestSoFar(t *testing.T) {
	m, _ := pigeonModel(11)
	start := time.Now()
	r, err := m.Solve(context.Background(), Params{TimeLimit: 100 * time.Millisecond})
	if err != nil || time.Since(start) > 2*time.Second {
		t.Fatalf("err %v after %v", err, time.Since(start))
	}
	if r.Status != Unknown && r.Status != Infeasible {
		t.Fatalf("status %v", r.Status)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, _ = m.Solve(ctx, Params{})
	if r.Status != Unknown && r.Status != Infeasible {
		t.Fatalf("cancelled: status %v", r.Status)
	}
}

// pigeonModel puts n+1 pigeons in n holes with pairwise != (hard for
// propagation without all_different reasoning).
func pigeonModel(n int) (*Model, []IntVar) {
	m := NewModel()
	var xs []IntVar
	for i := 0; i <= n; i++ {
		xs = append(xs, m.NewIntVar(0, int64(n-1), ""))
	}
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			m.AddNotEqual(LinearExpr{Vars: []IntVar{xs[i], xs[j]}, Coeffs: []int64{1, -1}}, 0)
		}
	}
	return m, xs
}

func TestIntrospection(t *testing.T) {
	m := NewModel()
	x := m.NewIntVar(0, 4, "x")
	b := m.NewBoolVar("b")
	m.AddLinear(LinearExpr{Vars: []IntVar{x, x}, Coeffs: []int64{1, 2}, Offset: 1}, 4, 7).OnlyEnforceIf(b).WithName("v")
	m.EqLit(x, 2)
	m.Maximize(LinearExpr{Vars: []IntVar{x}, Coeffs: []int64{1}})
	cs := m.Constraints()
	if m.NumVars() != 3 || len(cs) != 2 || m.VarDomain(0).String() != "{0..4}" || !m.IsEncodingVar(2) {
		t.Fatalf("vars %d cons %d", m.NumVars(), len(cs))
	}
	c := cs[0]
	if c.Kind != KindLinear || c.Name != "v" || len(c.Vars) != 1 || c.Coeffs[0] != 3 || c.Lo != 3 || c.Hi != 6 || c.Enforcement[0] != b {
		t.Fatalf("linear info %+v", c)
	}
	cs[0].Vars[0] = b.Var() // a copy
	if m.Constraints()[0].Vars[0] != x {
		t.Fatal("Constraints must return copies")
	}
	if cs[1].Kind != KindEqLit || cs[1].Values[0] != 2 {
		t.Fatalf("eq_lit info %+v", cs[1])
	}
	if o, ok := m.Objective(); !ok || !o.Maximize {
		t.Fatal("objective")
	}
}

func TestStatusString(t *testing.T) {
	want := []string{"UNKNOWN", "MODEL_INVALID", "FEASIBLE", "INFEASIBLE", "OPTIMAL"}
	for i, w := range want {
		if Status(i).String() != w {
			t.Fatalf("%d: %s", i, Status(i))
		}
	}
}

func TestBoundValidAfterFirstSolution(t *testing.T) {
	m := NewModel()
	x := m.NewIntVar(0, 10, "x")
	y := m.NewIntVar(0, 10, "y")
	m.AddLinear(LinearExpr{Vars: []IntVar{x, y}, Coeffs: []int64{1, 1}}, 0, 12)
	m.Maximize(LinearExpr{Vars: []IntVar{x, y}, Coeffs: []int64{1, 1}})
	r, err := m.Solve(context.Background(), Params{StopAfterFirstSolution: true, Seed: 1})
	if err != nil || !r.HasSolution() {
		t.Fatal(r, err)
	}
	if r.Bound < 12 {
		t.Fatalf("bound %d is below the optimum 12 (objective %d)", r.Bound, r.Objective)
	}
}

// TestUnusedEncodingLiterals: literals created by EqLit/LeLit that no
// constraint uses are dropped by presolve but still get consistent values.
func TestUnusedEncodingLiterals(t *testing.T) {
	for want := int64(0); want <= 5; want++ {
		m := NewModel()
		x := m.NewIntVar(0, 5, "x")
		eq := m.EqLit(x, 3)
		le := m.LeLit(x, 2)
		m.AddEquality(LinearExpr{Vars: []IntVar{x}, Coeffs: []int64{1}}, want)
		r, err := m.Solve(context.Background(), Params{Seed: 1})
		if err != nil || r.Status != Optimal {
			t.Fatal(r, err)
		}
		if err := m.Verify(r); err != nil {
			t.Fatal(err)
		}
		if r.LitValue(eq) != (want == 3) || r.LitValue(le) != (want <= 2) {
			t.Fatalf("x=%d: eq=%v le=%v", want, r.LitValue(eq), r.LitValue(le))
		}
		if r.Stats.PresolvedByKind["eq_lit"] != 0 || r.Stats.PresolvedByKind["le_lit"] != 0 {
			t.Fatalf("encodings not dropped: %v", r.Stats.PresolvedByKind)
		}
	}
}

// TestGrow: reserving room changes nothing but capacity; a model built
// after Grow solves like one built without it.
func TestGrow(t *testing.T) {
	m := NewModel()
	m.Grow(100, 200)
	if cap(m.doms) < 100 || cap(m.names) < 100 || cap(m.origin) < 100 || cap(m.cons) < 200 {
		t.Fatalf("capacities %d %d %d %d", cap(m.doms), cap(m.names), cap(m.origin), cap(m.cons))
	}
	if m.NumVars() != 0 || m.NumConstraints() != 0 {
		t.Fatalf("Grow added %d variables and %d constraints", m.NumVars(), m.NumConstraints())
	}
	x, y := m.NewIntVar(0, 3, "x"), m.NewIntVar(0, 3, "y")
	m.AddAllDifferent(x, y)
	m.Maximize(LinearExpr{Vars: []IntVar{x, y}, Coeffs: []int64{1, 1}})
	r, err := m.Solve(context.Background(), Params{Seed: 1})
	if err != nil || r.Status != Optimal || r.Objective != 5 {
		t.Fatalf("after Grow: %v, %v, objective %d; want optimal 5", err, r.Status, r.Objective)
	}
}
