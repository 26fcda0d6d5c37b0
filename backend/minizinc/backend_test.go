package minizinc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weavesql/weave/backend/minizinc/mzntest"
	"github.com/weavesql/weave/cp"
)

// everyKindModel uses every constraint kind.
func everyKindModel(t *testing.T) *cp.Model {
	t.Helper()
	m := cp.NewModel()
	x := m.NewIntVarFromDomain(cp.DomainFromValues(-3, -1, 2, 5), "x")
	y := m.NewIntVar(-2, 3, "y")
	z := m.NewIntVar(0, 2, "z")
	b := m.NewBoolVar("b")
	m.AddLinear(cp.LinearExpr{Vars: []cp.IntVar{x, y}, Coeffs: []int64{2, -1}}, -4, 6).OnlyEnforceIf(b, m.EqLit(z, 1))
	m.AddNotEqual(cp.LinearExpr{Vars: []cp.IntVar{x, y}, Coeffs: []int64{1, 1}}, 1)
	m.AddBoolOr(b, m.LeLit(y, 0))
	m.AddBoolAnd(m.TrueLit())
	m.AddAtMostOne(b, m.EqLit(x, 2))
	m.AddExactlyOne(b.Not(), m.EqLit(z, 0), m.EqLit(z, 2))
	m.AddAllDifferent(x, y, z)
	m.AddElement(z, []int64{5, -3, 2}, x)
	m.AddVarElement(z, []cp.IntVar{y, y, x}, y)
	m.AddAllowedAssignments([]cp.IntVar{y, z}, [][]int64{{1, 0}, {-1, 2}, {3, 1}})
	m.AddMembership(y, []int64{-1, 1, 3})
	m.AddNonMembership(x, []int64{-3})
	item, item2 := m.NewIntVar(0, 1, "item"), m.NewIntVar(0, 1, "item2")
	load0, load1 := m.NewIntVar(0, 5, "load0"), m.NewIntVar(0, 5, "load1")
	m.AddBinPacking([]cp.IntVar{item, item2}, []int64{3, 2}, []int64{1, 0}, []cp.IntVar{load1, load0})
	m.AddBinPacking([]cp.IntVar{item, z}, []int64{1, 2}, []int64{1, 0}, []cp.IntVar{load1, load0}) // z may be 2: sums
	m.AddBinPacking([]cp.IntVar{y}, []int64{4}, []int64{3}, []cp.IntVar{load1})
	mn := m.NewIntVar(-10, 10, "mn")
	m.AddMinEquality(mn, []cp.LinearExpr{{Vars: []cp.IntVar{x}, Coeffs: []int64{1}}, {Vars: []cp.IntVar{y}, Coeffs: []int64{1}, Offset: 1}})
	m.AddMaxEquality(mn, []cp.LinearExpr{{Vars: []cp.IntVar{z}, Coeffs: []int64{-1}, Offset: -1}, {Offset: -8}}).OnlyEnforceIf(b.Not())
	m.Maximize(cp.LinearExpr{Vars: []cp.IntVar{x, mn, load0}, Coeffs: []int64{1, 2, 1}})
	m.AddAssumptions(m.LeLit(x, 4))
	if err := m.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEmitEveryKind checks the translation of each constraint kind on a
// hand-built model, and that Gecode solves it to the optimum cp finds.
func TestEmitEveryKind(t *testing.T) {
	m := everyKindModel(t)
	src, err := Emit(m, Optimized)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"var {-3,-1,2,5}: x0;", "((x3 = 1) /\\ (x4 = 1)) -> (-4 <= 2*x0 - x1 /\\ 2*x0 - x1 <= 6)",
		"x0 + x1 != 1", "all_different_int([x0, x1, x2])", "x0 = array1d(0..2, [5, -3, 2])[x2]",
		"table_int([x1, x2], array2d(1..3, 1..2, [1, 0, -1, 2, 3, 1]))", "x1 in {-1,1,3}", "not (x0 in {-3})",
		"bin_packing_load(array1d(0..1, [x12, x13]), [x10, x11], [3, 2])",
		"x13 = 1*bool2int(x10 = 1) + 2*bool2int(x2 = 1) /\\ x12 = 1*bool2int(x10 = 0) + 2*bool2int(x2 = 0)",
		"x13 = 4*bool2int(x1 = 3)", "x14 = min([x0, x1 + 1])", "((x3 = 0)) -> (x14 = max([-x2 - 1, -8]))",
		"(x4 = 1) <-> (x2 = 1)", "(x5 = 1) <-> (x1 <= 0)", "solve maximize x0 + 2*x14 + x12;", "constraint (x15 = 1); % assumption",
		"include \"all_different_int.mzn\";", "include \"table_int.mzn\";", "include \"bin_packing_load.mzn\";",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("missing %q in\n%s", want, src)
		}
	}
	solveBoth(t, m, Optimized, src)
}

// TestEmitNaive checks the Naive style on the same model: filtered sums
// over encoding literals, per-bin filtered sums, pairwise all_different,
// and the same optimum.
func TestEmitNaive(t *testing.T) {
	m := everyKindModel(t)
	src, err := Emit(m, Naive)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		// x0 == 2 is used in at_most_one: kept, with its channelling.
		"var 0..1: x7; % x==2", "(x7 = 1) <-> (x0 = 2)",
		"let { array[1..3] of var int: X = [x0, x1, x2] } in forall(i, j in 1..3 where i < j)(X[i] != X[j])",
		"let { array[1..2] of var int: X = [x10, x11]; array[1..2] of int: S = [3, 2] } in (x13 = sum([S[i] | i in 1..2 where X[i] == 1]) /\\ x12 = sum([S[i] | i in 1..2 where X[i] == 0]))",
		"solve maximize x0 + 2*x14 + x12;",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("missing %q in\n%s", want, src)
		}
	}
	for _, not := range []string{"alldifferent", "all_different_int", "bin_packing_load", "bool2int"} {
		if strings.Contains(src, not) {
			t.Errorf("naive emission uses %s:\n%s", not, src)
		}
	}

	// A linear constraint and an objective over literals used nowhere
	// else: the literals are not declared, their sums filter on x.
	m = cp.NewModel()
	var xs []cp.IntVar
	var eq, le cp.LinearExpr
	for i := 0; i < 4; i++ {
		x := m.NewIntVar(0, 5, "x")
		xs = append(xs, x)
		eq.Vars, eq.Coeffs = append(eq.Vars, m.EqLit(x, 3).Var()), append(eq.Coeffs, int64(i+1))
		le.Vars, le.Coeffs = append(le.Vars, m.LeLit(x, 1).Var()), append(le.Coeffs, 1)
	}
	m.AddLinear(eq, 3, 6)
	le.Vars, le.Coeffs = append(le.Vars, xs[0]), append(le.Coeffs, 2)
	m.Maximize(le)
	src, err = Emit(m, Naive)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"constraint 3 <= (let { array[1..4] of var int: X = [x0, x3, x6, x9]; array[1..4] of int: C = [1, 2, 3, 4] } in sum([C[i] | i in 1..4 where X[i] == 3]))",
		"solve maximize 2*x0 + (let { array[1..4] of var int: X = [x0, x3, x6, x9] } in sum([1 | i in 1..4 where X[i] <= 1]));",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("missing %q in\n%s", want, src)
		}
	}
	if strings.Contains(src, "x1;") || strings.Contains(src, "<->") {
		t.Errorf("literals declared:\n%s", src)
	}
	solveBoth(t, m, Naive, src)
	solveBoth(t, everyKindModel(t), Naive, "")
}

// solveBoth solves m with cp and with Gecode in the given style and
// checks they agree on status and objective.
func solveBoth(t *testing.T, m *cp.Model, style Style, src string) {
	t.Helper()
	mzntest.Require(t)
	want, err := m.Solve(context.Background(), cp.Params{TimeLimit: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Backend{Style: style}.Solve(context.Background(), m, cp.Params{TimeLimit: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != want.Status || got.Objective != want.Objective {
		t.Fatalf("Gecode %v %d, cp %v %d\n%s", got.Status, got.Objective, want.Status, want.Objective, src)
	}
	if got.HasSolution() {
		if err := m.Verify(got); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBackendStatuses(t *testing.T) {
	mzntest.Require(t)
	ctx := context.Background()

	m := cp.NewModel()
	x := m.NewIntVar(0, 3, "x")
	m.AddEquality(cp.LinearExpr{Vars: []cp.IntVar{x}, Coeffs: []int64{2}}, 3)
	r, err := Backend{}.Solve(ctx, m, cp.Params{})
	if err != nil || r.Status != cp.Infeasible || r.HasSolution() {
		t.Fatalf("infeasible: %v %v", r.Status, err)
	}

	m = cp.NewModel()
	x = m.NewIntVar(0, 3, "x")
	m.EqLit(x, 2) // a hidden encoding variable must get a value too
	r, err = Backend{}.Solve(ctx, m, cp.Params{})
	if err != nil || r.Status != cp.Optimal || m.Verify(r) != nil {
		t.Fatalf("satisfaction: %v %v", r.Status, err)
	}

	// A search Gecode cannot finish: pigeonhole with 12 pigeons in 11 holes
	// under pairwise not-equal (no global reasoning).
	m = cp.NewModel()
	var ps []cp.IntVar
	for i := 0; i < 12; i++ {
		ps = append(ps, m.NewIntVar(0, 10, "p"))
	}
	for i := range ps {
		for j := i + 1; j < len(ps); j++ {
			m.AddNotEqual(cp.LinearExpr{Vars: []cp.IntVar{ps[i], ps[j]}, Coeffs: []int64{1, -1}}, 0)
		}
	}
	start := time.Now()
	r, err = Backend{}.Solve(ctx, m, cp.Params{TimeLimit: 500 * time.Millisecond})
	if err != nil || r.Status != cp.Unknown {
		t.Fatalf("time limit: %v %v", r.Status, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	r, err = Backend{}.Solve(cctx, m, cp.Params{})
	if err != nil || r.Status != cp.Unknown {
		t.Fatalf("context: %v %v", r.Status, err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("limits not honoured: %v", d)
	}

	m = cp.NewModel()
	m.NewIntVar(0, 1<<40, "big")
	if _, err := (Backend{}).Solve(ctx, m, cp.Params{}); err == nil {
		t.Fatal("no error for a domain beyond Gecode's range")
	}
}

func TestFlatten(t *testing.T) {
	mzntest.Require(t)
	m := genMaxMin(10, 4, 3, 0.85, 1).m
	src, err := Emit(m, Optimized)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Flatten(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if st.Variables < m.NumVars()-1 || st.Constraints == 0 || st.Duration <= 0 {
		t.Fatalf("stats %+v for %d variables", st, m.NumVars())
	}
	if _, err := Flatten(context.Background(), "constraint 1 +;"); err == nil {
		t.Fatal("no error for a syntax error")
	}
}

// TestRegressions solves the models saved in testdata: cases where cp and
// Gecode disagreed. Each .mzn file is the Emit output of the model built
// by the function of the same name in regressions, with a header comment.
func TestRegressions(t *testing.T) {
	for name, build := range regressions {
		t.Run(name, func(t *testing.T) {
			m, note := build()
			src, err := Emit(m, Optimized)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join("testdata", name+".mzn")
			golden := "% " + strings.ReplaceAll(note, "\n", "\n% ") + "\n" + src
			if os.Getenv("WEAVE_UPDATE_TESTDATA") == "1" {
				if err := os.WriteFile(file, []byte(golden), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if b, err := os.ReadFile(file); err != nil || string(b) != golden {
				t.Fatalf("%s is stale or missing (WEAVE_UPDATE_TESTDATA=1 rewrites it): %v", file, err)
			}
			mzntest.Require(t)
			g, err := Backend{}.Solve(context.Background(), m, cp.Params{TimeLimit: 10 * time.Second})
			if err != nil || g.Status != cp.Optimal || m.Verify(g) != nil {
				t.Fatalf("Gecode: %v %v", g.Status, err)
			}
			r, err := m.Solve(context.Background(), cp.Params{TimeLimit: time.Second, Seed: 1})
			if err != nil || !r.HasSolution() || m.Verify(r) != nil || r.Objective != g.Objective {
				t.Fatalf("cp: %v objective %d, Gecode optimum %d: %v", r.Status, r.Objective, g.Objective, err)
			}
			t.Logf("cp: %v %d in %v, %d branches, %d LNS rounds; Gecode: %v %d", r.Status, r.Objective, r.Stats.Presolve+r.Stats.Search, r.Stats.Branches, r.Stats.LNSRounds, g.Status, g.Objective)
			if r.Status != cp.Optimal {
				// Known cp issue, reported; the test passes fully once fixed.
				t.Skipf("known cp issue: optimum %d found but not proven within 1 s (%d branches)", r.Objective, r.Stats.Branches)
			}
		})
	}
}

var regressions = map[string]func() (*cp.Model, string){
	"cp_unproven_optimum_free_vars": func() (*cp.Model, string) {
		m := cp.NewModel()
		var xs []cp.IntVar
		for i := 0; i < 10; i++ {
			xs = append(xs, m.NewIntVar(0, 1, "x"))
		}
		m.Minimize(cp.LinearExpr{Vars: xs[:1], Coeffs: []int64{1}})
		return m, `cp finds x0 = 0, the objective's lower bound, at once but does not prove it
optimal within 1 s (millions of branches with LNS on; without LNS it
enumerates all 2^10 assignments of the unconstrained x1..x9). Gecode: OPTIMAL 0.
Minimised from random models (seeds 223, 263, 581 of the differential test)
on cp before fe87fcb, which fixed it (objective bound re-imposed after backtracking).`
	},
	"cp_unproven_optimum_constant_objective": func() (*cp.Model, string) {
		m := cp.NewModel()
		for i := 0; i < 5; i++ {
			m.NewIntVar(0, 3, "x")
		}
		m.Minimize(cp.LinearExpr{Vars: []cp.IntVar{m.NewConstant(1)}, Coeffs: []int64{1}})
		return m, `The objective is a constant (the constant variable x5 = 1); cp
returns FEASIBLE after 1 s instead of OPTIMAL. Gecode (solve minimize x5): OPTIMAL 1.
Minimised from random model seed 263 of the differential test; fixed by fe87fcb.`
	},
}
