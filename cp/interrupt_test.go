package cp

import (
	"context"
	"testing"
	"time"
)

// The time limit and the context are honoured in every phase before the
// search (root propagation, implied cliques, the root bound probe), not
// only during it: on models whose root alone takes seconds, a 20 ms limit
// or a cancellation after 20 ms returns promptly, with status UNKNOWN or
// a verified solution. The bound (1 s) is a contract, not a performance
// claim: it is generous for -race on a loaded machine.
func TestTimeLimitHonouredBeforeSearch(t *testing.T) {
	for _, tc := range []struct {
		name              string
		items, bins, conf int
		feasible          bool
	}{
		{"probe", 1000, 500, 200, true}, // the root bound probe runs (fewer than 4M item-bin pairs)
		// Capacity below the largest items: infeasible, which root
		// propagation takes seconds to prove (5 s before it polled the clock).
		{"root", 3000, 6000, 600, false},
	} {
		m, _, _ := maxMinModel(tc.items, tc.bins, tc.conf, 2)
		for _, mode := range []string{"limit", "cancel"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				const limit = 20 * time.Millisecond
				ctx, p := context.Background(), Params{Seed: 1}
				if mode == "limit" {
					p.TimeLimit = limit
				} else {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					defer cancel()
					time.AfterFunc(limit, cancel)
				}
				start := time.Now()
				r, err := m.Solve(ctx, p)
				elapsed := time.Since(start)
				if err != nil {
					t.Fatal(err)
				}
				if elapsed > time.Second {
					t.Errorf("Solve returned after %v with a %v %s", elapsed, limit, mode)
				}
				switch r.Status {
				case Unknown:
					if r.HasSolution() {
						t.Error("UNKNOWN with a solution")
					}
				case Feasible, Optimal:
					if err := m.Verify(r); err != nil {
						t.Fatal(err)
					}
					if r.Bound < r.Objective {
						t.Errorf("bound %d below the objective %d reached", r.Bound, r.Objective)
					}
				case Infeasible:
					if tc.feasible {
						t.Fatalf("status %v (the model is feasible)", r.Status)
					}
				default:
					t.Fatalf("status %v", r.Status)
				}
			})
		}
	}
}

// A solve interrupted during the root phases must not report what it did
// not prove: with deadlines spread over the root phases of a model that
// is feasible, the status is never INFEASIBLE and the bound never below a
// solution found by an uninterrupted solve.
func TestInterruptedRootNeverClaimsInfeasible(t *testing.T) {
	m, _, _ := maxMinModel(300, 150, 60, 3)
	full, err := m.Solve(context.Background(), Params{Seed: 1, NodeLimit: 20000})
	if err != nil || !full.HasSolution() {
		t.Fatalf("reference solve: %v %v", full, err)
	}
	for _, d := range []time.Duration{0, 50 * time.Microsecond, 200 * time.Microsecond, time.Millisecond, 3 * time.Millisecond, 10 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		r, err := m.Solve(ctx, Params{Seed: 1})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if r.Status == Infeasible {
			t.Fatalf("deadline %v: INFEASIBLE on a feasible model", d)
		}
		if r.Bound < full.Objective {
			t.Fatalf("deadline %v: bound %d below a known solution's objective %d", d, r.Bound, full.Objective)
		}
		if r.HasSolution() {
			if err := m.Verify(r); err != nil {
				t.Fatal(err)
			}
		}
	}
}
