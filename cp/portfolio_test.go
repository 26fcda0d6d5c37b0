package cp

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// TestPortfolioAgreesWithOneWorker: on tiny random models (every
// constraint kind, enforcement, objectives, hints, assumptions) the
// portfolios of 2 and 4 workers reach the same conclusion as one worker
// and as brute force: same feasibility, same optimum, a bound equal to
// it, solutions verified, cores infeasible on their own. Node-limited
// portfolios return only verified solutions and valid bounds.
func TestPortfolioAgreesWithOneWorker(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 300
	}
	checked := 0
	for seed := 0; seed < n; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		m := genModel(rngChooser{rng})
		if m.Err() != nil {
			continue
		}
		feas, best, ok := bruteForce(m, m.assumptions, 200000)
		if !ok {
			continue
		}
		checked++
		one, err := m.Solve(context.Background(), Params{Seed: int64(seed)})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []int{2, 4} {
			r, err := m.Solve(context.Background(), Params{Seed: int64(seed), Workers: w})
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if r.Stats.Workers != w {
				t.Fatalf("seed %d: %d workers ran, want %d", seed, r.Stats.Workers, w)
			}
			if r.Status != one.Status {
				t.Fatalf("seed %d, %d workers: %v, one worker %v (brute force feasible %v, best %d)\n%s", seed, w, r, one, feas, best, dump(m))
			}
			if !feas {
				if r.HasSolution() {
					t.Fatalf("seed %d, %d workers: a solution to an infeasible model", seed, w)
				}
				if len(m.assumptions) > 0 {
					if f, _, _ := bruteForce(m, r.Core, 200000); f {
						t.Fatalf("seed %d, %d workers: core %v is feasible\n%s", seed, w, r.Core, dump(m))
					}
				}
				continue
			}
			if err := m.Verify(r); err != nil {
				t.Fatalf("seed %d, %d workers: %v\n%s", seed, w, err, dump(m))
			}
			if m.obj != nil && (r.Objective != best || r.Bound != best) {
				t.Fatalf("seed %d, %d workers: objective %d bound %d, brute force %d\n%s", seed, w, r.Objective, r.Bound, best, dump(m))
			}
			r2, _ := m.Solve(context.Background(), Params{Seed: int64(seed), Workers: w, NodeLimit: 2})
			checkAgainstOptimum(t, m, r2, feas, best)
		}
	}
	if checked < n/2 {
		t.Fatalf("only %d of %d models checked", checked, n)
	}
}

// checkAgainstOptimum checks a possibly interrupted response against the
// brute-force answer: no claim it cannot back, verified solutions, and a
// bound that never cuts off the optimum.
func checkAgainstOptimum(t *testing.T, m *Model, r *Response, feas bool, best int64) {
	t.Helper()
	if !feas {
		if r.HasSolution() || r.Status == Optimal || r.Status == Feasible {
			t.Fatalf("infeasible by brute force, got %v\n%s", r, dump(m))
		}
		return
	}
	if r.Status == Infeasible {
		t.Fatalf("feasible by brute force (best %d), got %v\n%s", best, r, dump(m))
	}
	if r.HasSolution() {
		if err := m.Verify(r); err != nil {
			t.Fatalf("%v\n%s", err, dump(m))
		}
	}
	if m.obj == nil {
		return
	}
	if (m.obj.Maximize && r.Bound < best) || (!m.obj.Maximize && r.Bound > best) {
		t.Fatalf("bound %d cuts off the optimum %d (%v)\n%s", r.Bound, best, r, dump(m))
	}
	if r.Status == Optimal && r.Objective != best {
		t.Fatalf("claims optimal %d, the optimum is %d", r.Objective, best)
	}
}

// TestPortfolioMaxMinAgrees: the same on small max-min bin packings
// (implied cliques, the bound probe, LNS and the incumbent shared
// between workers all at work), including node-limited and
// improvement-timeout solves.
func TestPortfolioMaxMinAgrees(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 100
	}
	for seed := uint64(0); seed < uint64(n); seed++ {
		m, best, feasible := smallMaxMin(seed)
		for _, p := range []Params{{Seed: 1, Workers: 2}, {Seed: 2, Workers: 4},
			{Seed: 3, Workers: 2, NodeLimit: 3}, {Seed: 4, Workers: 3, ImprovementTimeout: time.Hour},
			{Seed: 5, Workers: 2, NodeLimit: 5, DisableLNS: true}} {
			r, err := m.Solve(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			checkAgainstOptimum(t, m, r, feasible, best)
			if p.NodeLimit == 0 {
				want := Infeasible
				if feasible {
					want = Optimal
				}
				if r.Status != want || (feasible && (r.Objective != best || r.Bound != best)) {
					t.Fatalf("seed %d %+v: %v, want %v at %d", seed, p, r, want, best)
				}
			}
		}
	}
}

// TestPortfolioLargerPackings: on max-min packings too large for brute
// force that one worker solves (proves optimal or infeasible) in well
// under a second, 2 and 3 workers prove the same optimum.
func TestPortfolioLargerPackings(t *testing.T) {
	defer func(old float64) { loadFactor = old }(loadFactor)
	for _, tc := range []struct {
		items, bins int
		seed        uint64
	}{{10, 4, 1}, {10, 4, 2}, {10, 4, 4}, {10, 4, 5}, {12, 4, 1}, {12, 4, 2}, {12, 4, 5}, {12, 4, 6}, {14, 5, 4}, {14, 5, 6}} {
		loadFactor = []float64{0.6, 0.7, 0.85}[tc.seed%3]
		m, _, _ := maxMinModel(tc.items, tc.bins, 3, tc.seed)
		one, err := m.Solve(context.Background(), Params{Seed: 1, TimeLimit: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if one.Status != Optimal && one.Status != Infeasible {
			t.Fatalf("%+v: one worker did not finish: %v", tc, one)
		}
		for _, w := range []int{2, 3} {
			r, err := m.Solve(context.Background(), Params{Seed: 1, Workers: w, TimeLimit: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != one.Status || r.Objective != one.Objective || (r.Status == Optimal && r.Bound != one.Bound) {
				t.Fatalf("%+v: %d workers %v, one worker %v", tc, w, r, one)
			}
			if r.HasSolution() {
				if err := m.Verify(r); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestPortfolioCancellationStopsAllWorkers: a cancelled context or a time
// limit ends a portfolio promptly, in every phase (the root of a large
// model, the search), and Solve returns only once every worker has
// stopped (no goroutine is left running). The bound (1 s after a 30 ms
// interruption) is generous for -race on a loaded machine.
func TestPortfolioCancellationStopsAllWorkers(t *testing.T) {
	before := runtime.NumGoroutine()
	for _, tc := range []struct {
		name              string
		items, bins, conf int
		feasible          bool
		workers           int
	}{
		{"search", 1000, 500, 200, true, 4},
		// Infeasible (capacity below the largest items), which root
		// propagation proves. Two workers, not four: compiling the
		// model (newSolver, not interruptible, 20 ms here and 170 ms
		// under -race) is each worker's, and four of them on two cores
		// under -race take more than the bound.
		{"root", 3000, 6000, 600, false, 2},
	} {
		m, _, _ := maxMinModel(tc.items, tc.bins, tc.conf, 2)
		for _, mode := range []string{"limit", "cancel"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				const limit = 30 * time.Millisecond
				ctx, p := context.Background(), Params{Seed: 1, Workers: tc.workers}
				if mode == "limit" {
					p.TimeLimit = limit
				} else {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					defer cancel()
					time.AfterFunc(limit, cancel)
				}
				// What no limit can cut short (each worker compiles the
				// model) takes longer on a loaded machine: the bound is a
				// second or ten times a solve cancelled before it starts,
				// measured now, whichever is longer.
				floorCtx, cancelFloor := context.WithCancel(context.Background())
				cancelFloor()
				start := time.Now()
				if _, err := m.Solve(floorCtx, Params{Seed: 1, Workers: tc.workers}); err != nil {
					t.Fatal(err)
				}
				bound := max(time.Second, 10*time.Since(start))
				start = time.Now()
				r, err := m.Solve(ctx, p)
				elapsed := time.Since(start)
				if err != nil {
					t.Fatal(err)
				}
				if elapsed > bound {
					t.Errorf("Solve returned after %v with a %v %s (bound %v)", elapsed, limit, mode, bound)
				}
				if (r.Status == Infeasible && tc.feasible) || (r.Status != Infeasible && r.Status != Unknown && !tc.feasible) {
					t.Fatalf("status %v", r.Status)
				}
				if r.HasSolution() {
					if err := m.Verify(r); err != nil {
						t.Fatal(err)
					}
				}
			})
		}
	}
	// Workers end before Solve returns; give the timers' goroutines a
	// moment.
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Fatalf("%d goroutines after the solves, %d before", g, before)
	}
}

// TestPortfolioProofEndsSolve: once one worker proves infeasibility or
// optimality, the solve ends without waiting for the others (whose LNS
// would run to the time limit): the 85% 100x50 max-min instance of seed
// 1 is infeasible (a clique of 51 items for 50 bins), the 75% one is
// solved to optimality.
func TestPortfolioProofEndsSolve(t *testing.T) {
	defer func(old float64) { loadFactor = old }(loadFactor)
	const limit = time.Minute
	for _, tc := range []struct {
		load float64
		want Status
	}{{0.85, Infeasible}, {0.75, Optimal}} {
		loadFactor = tc.load
		m, _, _ := maxMinModel(100, 50, 20, 1)
		one, err := m.Solve(context.Background(), Params{Seed: 1, TimeLimit: limit})
		if err != nil || one.Status != tc.want {
			t.Fatalf("load %.2f, one worker: %v %v", tc.load, one, err)
		}
		for _, w := range []int{2, 4} {
			start := time.Now()
			r, err := m.Solve(context.Background(), Params{Seed: 1, Workers: w, TimeLimit: limit})
			elapsed := time.Since(start)
			if err != nil || r.Status != tc.want {
				t.Fatalf("load %.2f, %d workers: %v %v", tc.load, w, r, err)
			}
			if r.Status == Optimal {
				if err := m.Verify(r); err != nil {
					t.Fatal(err)
				}
				if r.Objective != one.Objective || r.Bound != r.Objective {
					t.Fatalf("load %.2f, %d workers: %v, one worker %v", tc.load, w, r, one)
				}
			}
			if elapsed > limit/6 {
				t.Fatalf("load %.2f, %d workers: %v took %v", tc.load, w, r, elapsed)
			}
		}
	}
}

// TestPortfolioProofByOneWorkerStopsTheOthers: a proof by one worker
// ends the solve while another would never end on its own: worker 1 is
// replaced by one that only stops when its context is cancelled, and
// the solve (no time limit) ends with worker 0's proof, for an optimum
// and for an infeasibility.
func TestPortfolioProofByOneWorkerStopsTheOthers(t *testing.T) {
	defer func(old float64) { loadFactor = old }(loadFactor)
	for _, tc := range []struct {
		load float64
		want Status
	}{{0.75, Optimal}, {0.85, Infeasible}} {
		loadFactor = tc.load
		m, _, _ := maxMinModel(100, 50, 20, 1)
		p := Params{Seed: 1, Workers: 2}
		start := time.Now()
		cancelled := false
		r := m.runPortfolio(context.Background(), p, 2, start, &Response{}, func(ctx context.Context, w *worker, i int, sh *sharedBest) {
			if i == 0 {
				w.solve(ctx, m, p, strategyFor(0), sh, start)
				return
			}
			w.c = m.newSearchCtl(ctx, p, strategyFor(1), start)
			w.lo, w.status = minInt64, Unknown
			<-ctx.Done()
			cancelled = true
		})
		if r.Status != tc.want || !cancelled {
			t.Fatalf("load %.2f: %v (want %v), idle worker cancelled: %v", tc.load, r, tc.want, cancelled)
		}
		if r.Status == Optimal {
			if err := m.Verify(r); err != nil {
				t.Fatal(err)
			}
			if r.Bound != r.Objective {
				t.Fatalf("load %.2f: %v", tc.load, r)
			}
		}
		if e := time.Since(start); e > 20*time.Second {
			t.Fatalf("load %.2f: took %v", tc.load, e)
		}
	}
}

// TestPortfolioFirstSolutionAndStall: StopAfterFirstSolution and
// ImprovementTimeout end a portfolio like a single search, with a
// verified solution, on the placement model the scheduler solves.
func TestPortfolioFirstSolutionAndStall(t *testing.T) {
	m, err := loadModel("testdata/placement500.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Params{
		{Seed: 1, Workers: 2, TimeLimit: 10 * time.Second, StopAfterFirstSolution: true},
		{Seed: 1, Workers: 2, TimeLimit: 10 * time.Second, ImprovementTimeout: 20 * time.Millisecond},
		{Seed: 1, Workers: -1, TimeLimit: 10 * time.Second, ImprovementTimeout: 20 * time.Millisecond},
	} {
		start := time.Now()
		r, err := m.Solve(context.Background(), p)
		elapsed := time.Since(start)
		if err != nil || !r.HasSolution() {
			t.Fatalf("%+v: %v %v", p, r, err)
		}
		if err := m.Verify(r); err != nil {
			t.Fatal(err)
		}
		if r.Status == Infeasible || r.Status == Unknown {
			t.Fatalf("%+v: %v", p, r)
		}
		if (p.StopAfterFirstSolution && r.Status != Feasible) || r.Bound < r.Objective {
			t.Fatalf("%+v: %v", p, r)
		}
		if elapsed > 3*time.Second {
			t.Fatalf("%+v: took %v", p, elapsed)
		}
		if want := p.workers(); r.Stats.Workers != want {
			t.Fatalf("%+v: %d workers ran, want %d", p, r.Stats.Workers, want)
		}
	}
}

// TestWorkersZeroAndOneAreTheSingleSearch: Workers 0 and 1 are the same
// deterministic search.
func TestWorkersZeroAndOneAreTheSingleSearch(t *testing.T) {
	m, _, _ := maxMinModel(300, 150, 60, 3)
	a, err := m.Solve(context.Background(), Params{Seed: 1, NodeLimit: 3000})
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Solve(context.Background(), Params{Seed: 1, NodeLimit: 3000, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if a.Stats.Workers != 1 || b.Stats.Workers != 1 || a.Objective != b.Objective || a.Stats.Branches != b.Stats.Branches || a.Stats.Conflicts != b.Stats.Conflicts {
		t.Fatalf("Workers 0: %v, Workers 1: %v", a, b)
	}
}

// TestPortfolioSharesIncumbent: on a max-min packing that neither worker
// solves to optimality, each improves on the other's incumbents: at
// least one adopts a better solution found by the other, and the
// solution returned is the best any of them found (verified).
func TestPortfolioSharesIncumbent(t *testing.T) {
	defer func(old float64) { loadFactor = old }(loadFactor)
	loadFactor = 0.75
	m, _, _ := maxMinModel(100, 50, 20, 2)
	p := Params{Seed: 1, Workers: 2, TimeLimit: 500 * time.Millisecond}
	start := time.Now()
	ws := make([]*worker, 2)
	r := m.runPortfolio(context.Background(), p, 2, start, &Response{}, func(ctx context.Context, w *worker, i int, sh *sharedBest) {
		ws[i] = w
		w.solve(ctx, m, p, strategyFor(i), sh, start)
	})
	if !r.HasSolution() {
		t.Fatalf("%v", r)
	}
	if err := m.Verify(r); err != nil {
		t.Fatal(err)
	}
	var imports int64
	for i, w := range ws {
		imports += w.c.imports
		if w.c.best != nil && -w.c.bestObj > r.Objective {
			t.Fatalf("worker %d found %d, the response has %d", i, -w.c.bestObj, r.Objective)
		}
	}
	if imports == 0 {
		t.Fatalf("no worker adopted the other's incumbent (%v)", r)
	}
}
