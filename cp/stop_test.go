package cp

import (
	"context"
	"testing"
	"time"
)

// ImprovementTimeout ends a search whose objective stopped improving long
// before the time limit, with the best solution found (valid, status
// Feasible) — on a max-min bin packing whose optimum is not proven.
func TestImprovementTimeoutStopsAStalledSearch(t *testing.T) {
	defer func(old float64) { loadFactor = old }(loadFactor)
	loadFactor = 0.85
	m, spare, _ := maxMinModel(100, 50, 20, 2)
	const limit = 60 * time.Second
	start := time.Now()
	r, err := m.Solve(context.Background(), Params{TimeLimit: limit, ImprovementTimeout: 100 * time.Millisecond, Seed: 1})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != Feasible {
		t.Fatalf("status %s, want FEASIBLE (a stalled search, optimality not proven)", r.Status)
	}
	if err := m.Verify(r); err != nil {
		t.Fatalf("the solution returned is not valid: %v", err)
	}
	if r.Value(spare) != r.Objective {
		t.Errorf("objective %d, but the solution's spare is %d", r.Objective, r.Value(spare))
	}
	// Generous: the search stalls within seconds; without the option it
	// would run the full minute.
	if elapsed > limit/4 {
		t.Errorf("Solve took %v with a %v limit: it did not stop when the objective stalled", elapsed, limit)
	}
}
