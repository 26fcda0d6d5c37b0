package cp

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

// TestAbsoluteGapLimitAgainstBruteForce: a solve with AbsoluteGapLimit
// returns a verified solution within the limit of the true optimum (by
// brute force), with a valid bound within the limit of its objective; a
// limit of 0 changes nothing. The gap ends some solves early (status
// Feasible) and never one that had to run on.
func TestAbsoluteGapLimitAgainstBruteForce(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 300
	}
	checked, early := 0, 0
	for seed := 0; seed < n; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		m := genModel(rngChooser{rng})
		if m.Err() != nil || m.obj == nil || len(m.assumptions) > 0 {
			continue
		}
		feas, best, ok := bruteForce(m, nil, 200000)
		if !ok || !feas {
			continue
		}
		gap := 1 + rng.Int64N(4)
		p := Params{Seed: int64(seed), AbsoluteGapLimit: gap}
		if seed%2 == 1 {
			p.ImprovementTimeout = time.Minute // the probe runs after the first solution
		}
		r, err := m.Solve(context.Background(), p)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !r.HasSolution() {
			t.Fatalf("seed %d: %v without a solution, brute force best %d\n%s", seed, r.Status, best, dump(m))
		}
		if err := m.Verify(r); err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, dump(m))
		}
		sign := int64(1)
		if !m.obj.Maximize {
			sign = -1
		}
		// Maximising: Objective <= best <= Bound (minimising: reversed).
		if sign*(best-r.Objective) < 0 || sign*(r.Bound-best) < 0 {
			t.Fatalf("seed %d: objective %d, bound %d, optimum %d\n%s", seed, r.Objective, r.Bound, best, dump(m))
		}
		switch r.Status {
		case Optimal:
			if r.Objective != best {
				t.Fatalf("seed %d: optimal %d, brute force %d", seed, r.Objective, best)
			}
		case Feasible:
			early++
			if d := sign * (r.Bound - r.Objective); d > gap {
				t.Fatalf("seed %d: stopped %d from the bound, limit %d\n%s", seed, d, gap, dump(m))
			}
		default:
			t.Fatalf("seed %d: status %v", seed, r.Status)
		}
		checked++
	}
	if checked < n/10 || early == 0 {
		t.Fatalf("%d models checked, %d ended by the gap", checked, early)
	}
	t.Logf("%d models checked, %d ended by the gap", checked, early)
}

// TestAbsoluteGapLimitEndsTheWait: on the max-min benchmark instance
// (optimum 5, the probe's bound 13), a solve waiting a minute for an
// improvement returns as soon as its incumbent is within a limit of 10
// of the bound, and a limit of 1 leaves it waiting (the context ends it).
func TestAbsoluteGapLimitEndsTheWait(t *testing.T) {
	m, _, _ := maxMinModel(100, 50, 20, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	t0 := time.Now()
	r, err := m.Solve(ctx, Params{Seed: 1, ImprovementTimeout: time.Minute, AbsoluteGapLimit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(t0) > 4*time.Second || r.Status != Feasible || r.Bound-r.Objective > 10 {
		t.Fatalf("limit 10: %v objective %d bound %d", r.Status, r.Objective, r.Bound)
	}
	if err := m.Verify(r); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	t0 = time.Now()
	r, err = m.Solve(ctx, Params{Seed: 1, ImprovementTimeout: time.Minute, AbsoluteGapLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(t0) < 250*time.Millisecond || r.Status != Feasible || r.Bound-r.Objective <= 1 {
		t.Fatalf("limit 1 ended before the context: %v objective %d bound %d", r.Status, r.Objective, r.Bound)
	}
}
