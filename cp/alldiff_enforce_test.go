package cp

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// pigeonholeModel has n members over the given values, all different
// under the literal a; free is a Boolean nothing constrains.
func pigeonholeModel(n int, values []int64) (m *Model, a Lit, xs []IntVar) {
	m = NewModel()
	for i := 0; i < n; i++ {
		xs = append(xs, m.NewIntVarFromDomain(DomainFromValues(values...), "x"))
	}
	a = m.NewBoolVar("a")
	m.AddAllDifferent(xs...).OnlyEnforceIf(a).WithName("anti_affinity")
	return m, a, xs
}

// A pigeonhole under one assumption literal is refuted at the root by
// propagation: no branch, the literal is the core. Without the
// assumption, root propagation sets the literal false (half-reification).
func TestAllDifferentEnforcedPigeonholeAtRoot(t *testing.T) {
	sparse := make([]int64, 19) // 19 values with holes: the pigeonhole, not Hall intervals
	for i := range sparse {
		sparse[i] = int64(3 * i)
	}
	for _, tc := range []struct {
		name   string
		n      int
		values []int64
	}{
		{"6 members, 5 values", 6, []int64{0, 1, 2, 3, 4}},
		{"20 members, 19 sparse values", 20, sparse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, a, _ := pigeonholeModel(tc.n, tc.values)
			m.AddAssumptions(a)
			r, err := m.Solve(context.Background(), Params{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != Infeasible || r.Stats.Branches != 0 {
				t.Fatalf("status %s after %d branches, want INFEASIBLE at the root", r.Status, r.Stats.Branches)
			}
			if len(r.Core) != 1 || r.Core[0] != a {
				t.Fatalf("core %v, want [%v]", r.Core, a)
			}
			ch := m.NewChecker()
			if at := ch.FirstFailure([]Lit{a}); at != 0 {
				t.Fatalf("FirstFailure = %d, want 0 (propagation refutes the assumption)", at)
			}

			m.ClearAssumptions()
			s, ok := newSolver(m, false)
			if !ok || !s.propagate() {
				t.Fatal("root propagation failed without the assumption")
			}
			if !s.litFalse(a.idx) {
				t.Fatal("root propagation did not set the enforcement literal false")
			}
			r, err = m.Solve(context.Background(), Params{Seed: 1})
			if err != nil || !r.HasSolution() {
				t.Fatalf("without the assumption: %v %v", r, err)
			}
			if err := m.Verify(r); err != nil {
				t.Fatal(err)
			}
			if r.Value(a.Var()) != 0 {
				t.Fatal("solution enforces an impossible all_different")
			}
		})
	}
}

// With two enforcement literals nothing is inferred while both are
// unfixed; fixing one true makes the other false.
func TestAllDifferentEnforcedTwoLiterals(t *testing.T) {
	m := NewModel()
	var xs []IntVar
	for i := 0; i < 4; i++ {
		xs = append(xs, m.NewIntVar(0, 2, "x"))
	}
	a, b := m.NewBoolVar("a"), m.NewBoolVar("b")
	m.AddAllDifferent(xs...).OnlyEnforceIf(a, b)
	s, ok := newSolver(m, false)
	if !ok || !s.propagate() {
		t.Fatal("root propagation failed")
	}
	if s.fixed(a.idx>>1) || s.fixed(b.idx>>1) {
		t.Fatal("an enforcement literal was fixed while two were open")
	}
	s.pushLevel()
	if !s.setLit(a.idx, true) || !s.propagate() {
		t.Fatal("propagation failed after a")
	}
	if !s.litFalse(b.idx) {
		t.Fatal("b not set false once a is true")
	}
	s.backtrackTo(0)
	ch := m.NewChecker()
	if st := ch.Check(context.Background(), []Lit{a, b}, time.Now().Add(5*time.Second), 1000); st != Infeasible {
		t.Fatalf("Check(a, b) = %s", st)
	}
	if st := ch.Check(context.Background(), []Lit{a}, time.Now().Add(5*time.Second), 1000); st != Feasible {
		t.Fatalf("Check(a) = %s", st)
	}
}

// Filtering happens only under the enforcement: with the literal false the
// members may be equal, with it true they may not.
func TestAllDifferentEnforcedFilters(t *testing.T) {
	m := NewModel()
	x, y := m.NewIntVar(0, 1, "x"), m.NewIntVar(0, 1, "y")
	a := m.NewBoolVar("a")
	m.AddAllDifferent(x, y).OnlyEnforceIf(a)
	m.AddEquality(varExpr(x), 0)
	s, ok := newSolver(m, false)
	if !ok || !s.propagate() {
		t.Fatal("root propagation failed")
	}
	if s.fixed(y.idx) {
		t.Fatal("y filtered while a is open")
	}
	s.pushLevel()
	if !s.setLit(a.idx, true) || !s.propagate() {
		t.Fatal("propagation failed after a")
	}
	if !s.fixed(y.idx) || s.lo[y.idx] != 1 {
		t.Fatal("y not filtered to 1 under a")
	}
	s.backtrackTo(0)
	s.pushLevel()
	if !s.setLit(a.idx, false) || !s.propagate() {
		t.Fatal("propagation failed after !a")
	}
	if s.fixed(y.idx) {
		t.Fatal("y filtered under !a")
	}
}

// genEnforcedAllDiff builds a small random model around enforced
// all_different constraints: an empty model or a random one from genModel
// (which already enforces some all_different), plus one to three all_different over
// random members (a variable may occur twice) under random literals,
// sometimes conditions of other constraints, sometimes assumed.
func genEnforcedAllDiff(r *rand.Rand) *Model {
	c := rngChooser{r}
	m := NewModel()
	if c.intn(2) == 0 {
		// Half the models (genModel's are mostly infeasible) hold only
		// enforced all_different over fresh variables.
		m = genModel(c)
		if m.Err() != nil {
			return m
		}
	}
	var ints []IntVar
	for i := 0; i < m.NumVars(); i++ {
		if !m.IsEncodingVar(i) && m.VarDomain(i).Size() > 1 {
			ints = append(ints, m.Var(i))
		}
	}
	for i := 0; i < 2+c.intn(3); i++ {
		ints = append(ints, m.NewIntVar(rangeIn(c, -2, 1), rangeIn(c, 1, 4), "y"))
	}
	var bools []Lit
	for i := 0; i < 1+c.intn(3); i++ {
		bools = append(bools, m.NewBoolVar("e"))
	}
	lit := func() Lit {
		switch c.intn(6) {
		case 0:
			return m.EqLit(ints[c.intn(len(ints))], rangeIn(c, -2, 4))
		case 1:
			return m.LeLit(ints[c.intn(len(ints))], rangeIn(c, -2, 4))
		}
		l := bools[c.intn(len(bools))]
		if c.intn(3) == 0 {
			l = l.Not()
		}
		return l
	}
	for k := 0; k < 1+c.intn(3); k++ {
		var vs []IntVar
		for i := 0; i < 2+c.intn(4); i++ {
			vs = append(vs, ints[c.intn(len(ints))])
		}
		var enf []Lit
		for i := 0; i < 1+c.intn(2); i++ {
			enf = append(enf, lit())
		}
		m.AddAllDifferent(vs...).OnlyEnforceIf(enf...).WithName("ad")
	}
	if c.intn(3) == 0 {
		// Tie the literals to the rest: some must hold.
		m.AddBoolOr(bools...)
	}
	if c.intn(2) == 0 {
		m.AddAssumptions(bools[:1+c.intn(len(bools))]...)
	}
	return m
}

// Enforced all_different against brute force on thousands of random
// models: feasibility, optimum, verified solutions, cores infeasible on
// their own, and Checker answers under random assumption subsets.
func TestAllDifferentEnforcedAgainstBruteForce(t *testing.T) {
	n := 3000
	if testing.Short() || raceDetector {
		n = 500
	}
	if v, err := strconv.Atoi(os.Getenv("CP_RANDOM_MODELS")); err == nil {
		n = v
	}
	checked, infeasible, enforced := 0, 0, 0
	ctx := context.Background()
	for seed := 0; seed < n; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		m := genEnforcedAllDiff(rng)
		if m.Err() != nil {
			continue
		}
		feas, best, ok := bruteForce(m, m.assumptions, 30000)
		if !ok {
			continue
		}
		checked++
		for _, c := range m.cons {
			if c.Kind == KindAllDifferent && len(c.Enforcement) > 0 {
				enforced++
			}
		}
		r, err := m.Solve(ctx, Params{Seed: int64(seed)})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		switch {
		case !feas:
			infeasible++
			if r.Status != Infeasible {
				t.Fatalf("seed %d: brute force infeasible, Solve %v\n%s", seed, r, dump(m))
			}
			if len(m.assumptions) > 0 {
				if f, _, _ := bruteForce(m, r.Core, 30000); f {
					t.Fatalf("seed %d: core %v is feasible\n%s", seed, r.Core, dump(m))
				}
			}
		case r.Status != Optimal:
			t.Fatalf("seed %d: brute force feasible (best %d), Solve %v\n%s", seed, best, r, dump(m))
		default:
			if err := m.Verify(r); err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, dump(m))
			}
			if m.obj != nil && r.Objective != best {
				t.Fatalf("seed %d: objective %d, brute force %d\n%s", seed, r.Objective, best, dump(m))
			}
		}
		// The checker under random subsets of assumption candidates.
		var cands []Lit
		for _, c := range m.cons {
			cands = append(cands, c.Enforcement...)
		}
		if len(cands) == 0 {
			continue
		}
		ch := m.NewChecker()
		for q := 0; q < 3; q++ {
			var lits []Lit
			for _, l := range cands {
				if rng.IntN(2) == 0 {
					lits = append(lits, l)
				}
			}
			want := Feasible
			if f, _, _ := bruteForce(m, lits, 30000); !f {
				want = Infeasible
			}
			if got := ch.Check(ctx, lits, time.Now().Add(10*time.Second), 1<<30); got != want {
				t.Fatalf("seed %d: Check(%v) = %s, brute force %s\n%s", seed, lits, got, want, dump(m))
			}
			if at := ch.FirstFailure(lits); at >= 0 {
				if f, _, _ := bruteForce(m, lits[:min(at+1, len(lits))], 30000); f {
					t.Fatalf("seed %d: FirstFailure(%v) = %d but that prefix is feasible\n%s", seed, lits, at, dump(m))
				}
			}
		}
	}
	t.Logf("%d models checked (%d infeasible), %d enforced all_different", checked, infeasible, enforced)
	if checked < n/2 {
		t.Fatalf("only %d of %d models checked", checked, n)
	}
}
