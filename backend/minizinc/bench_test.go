package minizinc

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weavesql/weave/backend/minizinc/mzntest"
	"github.com/weavesql/weave/cp"
)

// maxMinModel is the max-min two-resource bin-packing benchmark of
// cp/bench_test.go (copied: test files cannot be imported): items with
// exponential sizes (mean 100, tail clipped at 150) onto bins at 85% load,
// conflict pairs as x_i != x_j, maximise the minimum spare capacity over
// bins and resources. One change: spare's upper bound is the largest
// capacity instead of math.MaxInt32, which Gecode's 32-bit integers
// (limit 2^31-2) cannot represent; the constraints spare <= capacity -
// load imply it, so the model is equivalent. It returns the trivial upper
// bound min_r floor((total capacity_r - total size_r) / bins).
func maxMinModel(items, bins, conflicts int, seed uint64) (*cp.Model, int64) {
	const loadFactor = 0.85
	rng := rand.New(rand.NewPCG(seed, 11))
	m := cp.NewModel()
	x := make([]cp.IntVar, items)
	for i := range x {
		x[i] = m.NewIntVar(0, int64(bins-1), "x")
	}
	binVals := make([]int64, bins)
	for j := range binVals {
		binVals[j] = int64(j)
	}
	type resource struct {
		sizes    []int64
		capacity int64
	}
	var res [2]resource
	var maxCap int64
	bound := int64(math.MaxInt64)
	for r := range res {
		sizes := make([]int64, items)
		var total int64
		for i := range sizes {
			sizes[i] = min(1+int64(rng.ExpFloat64()*100), 150)
			total += sizes[i]
		}
		capacity := int64(math.Ceil(float64(total) / (loadFactor * float64(bins))))
		res[r] = resource{sizes, capacity}
		maxCap = max(maxCap, capacity)
		bound = min(bound, (capacity*int64(bins)-total)/int64(bins))
	}
	spare := m.NewIntVar(0, maxCap, "spare")
	for _, r := range res {
		loads := make([]cp.IntVar, bins)
		for j := range loads {
			loads[j] = m.NewIntVar(0, r.capacity, "load")
			m.AddLessOrEqual(cp.LinearExpr{Vars: []cp.IntVar{spare, loads[j]}, Coeffs: []int64{1, 1}}, r.capacity)
		}
		m.AddBinPacking(x, r.sizes, binVals, loads).WithName("capacity")
	}
	for k := 0; k < conflicts; k++ {
		i, j := rng.IntN(items), rng.IntN(items)
		if i != j {
			m.AddNotEqual(cp.LinearExpr{Vars: []cp.IntVar{x[i], x[j]}, Coeffs: []int64{1, -1}}, 0).WithName("anti_affinity")
		}
	}
	m.Maximize(cp.LinearExpr{Vars: []cp.IntVar{spare}, Coeffs: []int64{1}})
	return m, bound
}

// BenchmarkBinPackingMaxMin compares cp and Gecode on the max-min
// bin-packing instance (100 items, 50 bins, 20 conflicts) and reports the
// objective each reaches within 1 s and 10 s (metric "spare"; higher is
// better, "trivial_bound" is an upper bound). Run with -benchtime=1x:
//
//	go test ./backend/minizinc -run '^$' -bench BinPackingMaxMin -benchtime=1x
func BenchmarkBinPackingMaxMin(b *testing.B) {
	mzntest.Require(b)
	for _, limit := range []time.Duration{time.Second, 10 * time.Second} {
		for _, solver := range []string{"cp", "gecode"} {
			b.Run(solver+"/"+limit.String(), func(b *testing.B) {
				for b.Loop() {
					m, bound := maxMinModel(100, 50, 20, 1)
					p := cp.Params{TimeLimit: limit, Seed: 1}
					var r *cp.Response
					var err error
					if solver == "cp" {
						r, err = m.Solve(context.Background(), p)
					} else {
						r, err = Backend{}.Solve(context.Background(), m, p)
					}
					if err != nil {
						b.Fatal(err)
					}
					if r.HasSolution() {
						if err := m.Verify(r); err != nil {
							b.Fatal(err)
						}
					} else {
						b.Logf("%s: no solution (%v)", solver, r.Status)
					}
					b.ReportMetric(float64(r.Objective), "spare")
					b.ReportMetric(float64(bound), "trivial_bound")
					b.ReportMetric(float64(r.Stats.Solutions), "solutions")
				}
			})
		}
	}
}
