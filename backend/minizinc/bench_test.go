package minizinc

import (
	"context"
	"testing"
	"time"

	"github.com/weavesql/weave/backend/minizinc/mzntest"
	"github.com/weavesql/weave/cp"
)

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
					in := genMaxMin(100, 50, 20, 0.85, 1)
					m, bound := in.m, in.trivial
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
