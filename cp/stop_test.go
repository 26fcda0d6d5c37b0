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

// A search whose improvement wait has run out by the end of its first
// dive and bound probe stops there: it does not start a restart's work
// (the implied cliques under the new bound, an LNS round), each a root
// propagation of the model, which it would only notice the end of. The
// probe is made to outlast the wait (afterProbeHook), so the count of
// restarts and LNS rounds says whether any was started.
func TestImprovementTimeoutStopsBeforeTheNextRestart(t *testing.T) {
	defer func(old float64) { loadFactor = old }(loadFactor)
	loadFactor = 0.85
	const wait = 50 * time.Millisecond
	afterProbeHook = func() { time.Sleep(wait + 10*time.Millisecond) }
	defer func() { afterProbeHook = nil }()
	m, _, _ := maxMinModel(100, 50, 20, 2)
	r, err := m.Solve(context.Background(), Params{TimeLimit: 10 * time.Second, ImprovementTimeout: wait, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !r.HasSolution() {
		t.Fatalf("status %s: the first solution was lost", r.Status)
	}
	if err := m.Verify(r); err != nil {
		t.Fatalf("the solution returned is not valid: %v", err)
	}
	if r.Stats.Restarts != 0 || r.Stats.LNSRounds != 0 {
		t.Errorf("%d restarts and %d LNS rounds after the wait ran out", r.Stats.Restarts, r.Stats.LNSRounds)
	}
}

// WideGapImprovementTimeout replaces ImprovementTimeout while the
// incumbent is not proven within WideGap of the optimum, and only then.
func TestStallNowFollowsTheGap(t *testing.T) {
	short, long := 5*time.Millisecond, time.Second
	for _, c := range []struct {
		name        string
		stall, wide time.Duration
		gap, wideAt int64
		noIncumbent bool
		want        time.Duration
	}{
		{"gap above WideGap", short, long, 20, 10, false, long},
		{"gap at WideGap", short, long, 10, 10, false, short},
		{"gap below WideGap", short, long, 3, 10, false, short},
		{"no incumbent yet", short, long, 20, 10, true, short},
		{"wide wait not longer", short, short / 2, 20, 10, false, short},
		{"no improvement timeout", 0, long, 20, 10, false, 0},
	} {
		sc := &searchCtl{stall: c.stall, wideStall: c.wide, wideGap: c.wideAt, bestObj: 100, rootLo: 100 - c.gap}
		if !c.noIncumbent {
			sc.best = []int64{0}
		}
		if got := sc.stallNow(); got != c.want {
			t.Errorf("%s: stallNow %v, want %v", c.name, got, c.want)
		}
	}
}

// End to end: on the max-min packing whose bound the search does not meet
// for a long time, a wide-gap wait keeps the search going well past the
// short improvement timeout (unless it proves the optimum first).
func TestWideGapImprovementTimeoutKeepsSearching(t *testing.T) {
	defer func(old float64) { loadFactor = old }(loadFactor)
	loadFactor = 0.85
	m, _, _ := maxMinModel(100, 50, 20, 2)
	const wide = 400 * time.Millisecond
	start := time.Now()
	r, err := m.Solve(context.Background(), Params{TimeLimit: 20 * time.Second, ImprovementTimeout: 5 * time.Millisecond,
		WideGapImprovementTimeout: wide, WideGap: 0, Seed: 1})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Verify(r); err != nil {
		t.Fatalf("the solution returned is not valid: %v", err)
	}
	if r.Status != Optimal && elapsed < wide {
		t.Errorf("status %s after %v: stopped before the wide-gap wait of %v (objective %d, bound %d)", r.Status, elapsed, wide, r.Objective, r.Bound)
	}
}
