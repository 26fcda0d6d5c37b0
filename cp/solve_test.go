package cp

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// TestRandomAgainstBruteForce compares Solve with exhaustive enumeration
// on thousands of tiny random models: same feasibility, same optimum,
// every solution verified, every core infeasible on its own.
func TestRandomAgainstBruteForce(t *testing.T) {
	n := 4000
	if testing.Short() {
		n = 500
	}
	if v, err := strconv.Atoi(os.Getenv("CP_RANDOM_MODELS")); err == nil {
		n = v
	}
	checked := 0
	for seed := 0; seed < n; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		m := genModel(rngChooser{rng})
		if m.Err() != nil {
			continue
		}
		if ok, _ := agreesWithBruteForce(t, seed, m); ok {
			checked++
		}
	}
	if checked < n/2 {
		t.Fatalf("only %d of %d models checked", checked, n)
	}
}

// agreesWithBruteForce solves m (seed seed) and checks it against
// exhaustive enumeration: same feasibility, same optimum and bound, every
// core infeasible on its own, every solution verified, a truncated
// search's too. checked is false when m is too large to enumerate.
func agreesWithBruteForce(t *testing.T, seed int, m *Model) (checked, feasible bool) {
	t.Helper()
	feas, best, ok := bruteForce(m, m.assumptions, 200000)
	if !ok {
		return false, false
	}
	r, err := m.Solve(context.Background(), Params{Seed: int64(seed)})
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	if !feas {
		if r.Status != Infeasible {
			t.Fatalf("seed %d: brute force infeasible, Solve %v\n%s", seed, r, dump(m))
		}
		if len(m.assumptions) > 0 {
			if f, _, _ := bruteForce(m, r.Core, 200000); f {
				t.Fatalf("seed %d: core %v is feasible\n%s", seed, r.Core, dump(m))
			}
		}
		return true, false
	}
	if r.Status != Optimal {
		t.Fatalf("seed %d: brute force feasible (best %d), Solve %v\n%s", seed, best, r, dump(m))
	}
	if err := m.Verify(r); err != nil {
		t.Fatalf("seed %d: %v\n%s", seed, err, dump(m))
	}
	if m.obj != nil && (r.Objective != best || r.Bound != best) {
		t.Fatalf("seed %d: objective %d bound %d, brute force %d\n%s", seed, r.Objective, r.Bound, best, dump(m))
	}
	// A truncated search must still return only verified solutions.
	r2, _ := m.Solve(context.Background(), Params{Seed: int64(seed), NodeLimit: 2})
	if r2.HasSolution() {
		if err := m.Verify(r2); err != nil {
			t.Fatalf("seed %d (node limit): %v", seed, err)
		}
		if r2.Status == Optimal && m.obj != nil && r2.Objective != best {
			t.Fatalf("seed %d: node-limited claims optimal %d, want %d", seed, r2.Objective, best)
		}
	}
	return true, true
}

func dump(m *Model) string {
	s := ""
	for i := 0; i < m.NumVars(); i++ {
		s += m.Var(i).String() + " in " + fmtDomain(m.VarDomain(i)) + "\n"
	}
	for _, c := range m.Constraints() {
		s += formatConstraint(c) + "\n"
	}
	if o, ok := m.Objective(); ok {
		s += formatObjective(o) + "\n"
	}
	if len(m.assumptions) > 0 {
		s += "assumptions: "
		for _, a := range m.assumptions {
			s += a.String() + " "
		}
		s += "\n"
	}
	return s
}
