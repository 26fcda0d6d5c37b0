package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weavesql/weave"
)

// shippedSeeds are the instances the README and the benchmarks use.
var shippedSeeds = []int64{1, 2, 3}

func TestGeneratorShape(t *testing.T) {
	for _, seed := range shippedSeeds {
		in := Generate(seed, 524, 39, 85)
		if len(in.Hosts) != 16 || len(in.VMs) != 524 {
			t.Fatalf("seed %d: %d hosts, %d VMs", seed, len(in.Hosts), len(in.VMs))
		}
		caps := map[int64]bool{}
		for _, h := range in.Hosts {
			caps[h.Mem] = true
		}
		if len(caps) < 3 {
			t.Errorf("seed %d: hosts are not heterogeneous", seed)
		}
		lo, hi := in.Range(in.Current())
		if pct(lo) != "39" || pct(hi) != "85" {
			t.Errorf("seed %d: initial range %s%%-%s%%, want 39%%-85%%", seed, pct(lo), pct(hi))
		}
		if bad := in.Check(in.Current(), 0); len(bad) > 0 {
			t.Errorf("seed %d: the initial placement breaks the rules: %v", seed, bad)
		}
	}
}

func TestGreedyValid(t *testing.T) {
	for _, seed := range shippedSeeds {
		in := Generate(seed, 524, 39, 85)
		g := Greedy(in, 10)
		if bad := in.Check(g, 10); len(bad) > 0 {
			t.Errorf("seed %d: %v", seed, bad)
		}
		lo, hi := in.Range(g)
		lo0, hi0 := in.Range(in.Current())
		if hi-lo >= hi0-lo0 {
			t.Errorf("seed %d: greedy did not improve the range", seed)
		}
	}
}

// TestWeaveBeatsGreedy solves each shipped seed cold (from the current
// placement, as an operator runs it: the target) and warm (from
// greedy's plan), with the database re-checking the solution (Verify),
// checks it with the plain Go filter, and requires a strictly tighter
// range than the greedy baseline's and than the paper's 51-63%. Cold
// Weave passes greedy's range within about a second on every seed (4 s
// allowed), so the check holds on a loaded machine.
func TestWeaveBeatsGreedy(t *testing.T) {
	ctx := context.Background()
	seeds := shippedSeeds
	if raceEnabled {
		// Each solve runs five times as long under -race: the first seed
		// there, every seed in .ci/run's run without it.
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		for _, start := range []string{"cold", "greedy"} {
			t.Run(fmt.Sprintf("seed%d/%s", seed, start), func(t *testing.T) {
				in := Generate(seed, 524, 39, 85)
				g := Greedy(in, 10)
				b, err := NewBalancer(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				var warm Placement
				timeout := 4 * time.Second
				if start == "greedy" {
					warm, timeout = g, 2*time.Second
				}
				if err := b.LoadFrom(ctx, in, 10, 10, warm); err != nil {
					t.Fatal(err)
				}
				if raceEnabled {
					timeout *= 5
				}
				p, res, err := b.Round(ctx, weave.SolveOptions{Timeout: timeout, Verify: true})
				if err != nil {
					t.Fatal(err)
				}
				if bad := in.Check(p, 10); len(bad) > 0 {
					t.Fatalf("invalid placement: %v", bad)
				}
				glo, ghi := in.Range(g)
				lo, hi := in.Range(p)
				t.Logf("%s: greedy %d-%d (%d bp), weave %d-%d (%d bp), %d migrations, soft %v", res.Status, glo, ghi, ghi-glo, lo, hi, hi-lo, len(in.Migrations(p)), res.Soft)
				if raceEnabled && (start == "cold" || hi-lo <= ghi-glo) {
					// The race detector slows the solver down too much to
					// require an improvement (or, cold, greedy's quality).
					return
				}
				if hi-lo >= ghi-glo {
					t.Errorf("weave's range %d bp is not tighter than greedy's %d bp", hi-lo, ghi-glo)
				}
				if hi-lo >= 1200 {
					t.Errorf("range %s%%-%s%% is not tighter than the paper's 51%%-63%%", pct(lo), pct(hi))
				}
			})
		}
	}
}

// TestColdStart solves from the current placement (no warm start): the
// solution must be valid and within the migration budget.
func TestColdStart(t *testing.T) {
	in := Generate(1, 524, 39, 85)
	p, res, err := Balance(context.Background(), in, 10, 10, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if bad := in.Check(p, 10); len(bad) > 0 {
		t.Fatalf("invalid placement: %v", bad)
	}
	lo, hi := in.Range(p)
	t.Logf("%s: %d-%d, %d migrations", res.Status, lo, hi, len(in.Migrations(p)))
}

// TestTightBudget: with K = 0 the only solution is the current placement.
func TestTightBudget(t *testing.T) {
	in := Generate(2, 524, 39, 85)
	p, _, err := Balance(context.Background(), in, 0, 10, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if m := in.Migrations(p); len(m) != 0 {
		t.Fatalf("%d migrations with K = 0", len(m))
	}
}

// TestRulesBind breaks the initial state on purpose: a VM pinned away
// from its current host must migrate, and its anti-affine partner must
// not follow it.
func TestRulesBind(t *testing.T) {
	in := Generate(3, 524, 39, 85)
	v := in.VMs[0]
	var other string
	for _, h := range in.Hosts {
		if h.Name != v.Host {
			other = h.Name
			break
		}
	}
	in.Must[v.Name] = []string{other}
	var partner string
	for _, w := range in.VMs {
		if w.Host == other && len(in.rulesOf(w.Name)) == 0 {
			partner = w.Name
			break
		}
	}
	in.VMRules = append(in.VMRules, VMRule{VM1: v.Name, VM2: partner, Together: false})
	p, _, err := Balance(context.Background(), in, 10, 10, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if bad := in.Check(p, 10); len(bad) > 0 {
		t.Fatalf("invalid placement: %v", bad)
	}
	if p[v.Name] != other || p[partner] == other {
		t.Fatalf("%s on %s (want %s), %s on %s", v.Name, p[v.Name], other, partner, p[partner])
	}
}

func TestFigure(t *testing.T) {
	in := Generate(1, 524, 39, 85)
	dir := t.TempDir()
	files, err := WriteFigure(dir, "fig", in, Greedy(in, 10))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"fig.png", "fig.svg"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil || st.Size() < 1000 {
			t.Fatalf("%s: %v (%v)", f, err, files)
		}
	}
}

func TestRunOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("solves for 2s")
	}
	if err := run(2, 10, 10, 2*time.Second, "greedy", t.TempDir()); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkRound is the solve time per balancing round (the solver runs
// to its time limit unless it proves optimality) with the quality reached:
// range in basis points and migrations, for each start.
func BenchmarkRound(b *testing.B) {
	for _, start := range []string{"greedy", "current"} {
		b.Run(start, func(b *testing.B) {
			in := Generate(1, 524, 39, 85)
			var warm Placement
			if start == "greedy" {
				warm = Greedy(in, 10)
			}
			ctx := context.Background()
			bal, err := NewBalancer(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer bal.Close()
			if err := bal.LoadFrom(ctx, in, 10, 10, warm); err != nil {
				b.Fatal(err)
			}
			var rng, migr int64
			for i := 0; i < b.N; i++ {
				p, _, err := bal.Round(ctx, weave.SolveOptions{Timeout: 4 * time.Second})
				if err != nil {
					b.Fatal(err)
				}
				lo, hi := in.Range(p)
				rng, migr = hi-lo, int64(len(in.Migrations(p)))
			}
			b.ReportMetric(float64(rng), "range_bp")
			b.ReportMetric(float64(migr), "migrations")
		})
	}
}

// BenchmarkVsGreedy compares Weave (4 s, warm start from greedy's plan,
// and cold from the current placement) with the greedy baseline on every
// shipped seed: range in basis points and migrations.
func BenchmarkVsGreedy(b *testing.B) {
	for _, seed := range shippedSeeds {
		b.Run(fmt.Sprint("seed", seed), func(b *testing.B) {
			in := Generate(seed, 524, 39, 85)
			for i := 0; i < b.N; i++ {
				g := Greedy(in, 10)
				glo, ghi := in.Range(g)
				ctx := context.Background()
				bal, err := NewBalancer(ctx)
				if err != nil {
					b.Fatal(err)
				}
				report := func(name string, warm Placement) {
					if err := bal.LoadFrom(ctx, in, 10, 10, warm); err != nil {
						b.Fatal(err)
					}
					p, _, err := bal.Round(ctx, weave.SolveOptions{Timeout: 4 * time.Second})
					if err != nil {
						b.Fatal(err)
					}
					lo, hi := in.Range(p)
					b.ReportMetric(float64(hi-lo), name+"_range_bp")
					b.ReportMetric(float64(len(in.Migrations(p))), name+"_migrations")
				}
				report("weave", g)
				report("cold", nil)
				bal.Close()
				b.ReportMetric(float64(ghi-glo), "greedy_range_bp")
				b.ReportMetric(float64(len(in.Migrations(g))), "greedy_migrations")
			}
		})
	}
}
