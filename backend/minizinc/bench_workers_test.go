package minizinc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weavesql/weave/cp"
)

// BenchmarkWorkersMaxMin compares cp with one worker and with a
// portfolio of two (Params.Workers) on the max-min bin packing of
// genMaxMin (85% load) at 100x50 and 1,000x500 items x bins, with 1 s
// and 10 s limits; workers=1 and workers=2 of a size and limit run one
// after the other. Metrics as in BenchmarkMaxMinVsGecode: spare (higher
// is better, -1 without a solution), bound, status, first-ms, solve-ms
// and solve-cpu-ms (a portfolio of two uses about twice the CPU time of
// one worker). Every solution is checked with cp.Verify. The machine's
// cores bound what a portfolio can gain: read solve-cpu-ms / solve-ms.
// Repeat the run (a loop over the test binary, -count=1) and compare
// medians:
//
//	go test -c -o mzn.test ./backend/minizinc
//	./mzn.test -test.run '^$' -test.bench WorkersMaxMin -test.benchtime 1x
func BenchmarkWorkersMaxMin(b *testing.B) {
	sizes := []struct{ items, bins int }{{100, 50}, {1000, 500}}
	for _, sz := range sizes {
		for _, seed := range benchSeeds(2) {
			for _, limit := range []time.Duration{time.Second, 10 * time.Second} {
				for _, workers := range []int{1, 2} {
					name := fmt.Sprintf("%dx%d/seed=%d/%v/workers=%d", sz.items, sz.bins, seed, limit, workers)
					b.Run(name, func(b *testing.B) {
						for b.Loop() {
							in := genMaxMin(sz.items, sz.bins, sz.items/5, 0.85, seed)
							p := cp.Params{TimeLimit: limit, Seed: 1, Workers: workers}
							t0, c0 := time.Now(), cpuTime()
							r, err := in.m.Solve(context.Background(), p)
							wall, cpu := time.Since(t0), cpuTime()-c0
							if err != nil {
								b.Fatal(err)
							}
							spare := float64(-1)
							if r.HasSolution() {
								if err := in.m.Verify(r); err != nil {
									b.Fatal(err)
								}
								spare = float64(r.Objective)
							}
							b.ReportMetric(spare, "spare")
							b.ReportMetric(float64(r.Bound), "bound")
							b.ReportMetric(float64(r.Status), "status")
							b.ReportMetric(float64(r.Stats.FirstSolution.Microseconds())/1000, "first-ms")
							b.ReportMetric(float64(wall.Microseconds())/1000, "solve-ms")
							b.ReportMetric(float64(cpu.Microseconds())/1000, "solve-cpu-ms")
						}
					})
				}
			}
		}
	}
}

// BenchmarkWorkersTightFeasibility compares one worker with a portfolio
// of two on the tight feasible packings of BenchmarkTightFeasibility
// (genTight: 50 bins, 20 instances) at 97%, 98% and 99% load within 1 s:
// metric "solved" is the fraction solved (verified; an "infeasible"
// answer fails the benchmark).
//
//	./mzn.test -test.run '^$' -test.bench WorkersTightFeasibility -test.benchtime 1x
func BenchmarkWorkersTightFeasibility(b *testing.B) {
	const instances = 20
	for _, load := range []float64{0.97, 0.98, 0.99} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("load=%.2f/workers=%d", load, workers), func(b *testing.B) {
				for b.Loop() {
					solved := 0
					var total time.Duration
					for seed := uint64(1); seed <= instances; seed++ {
						m, _ := genTight(50, load, seed)
						start := time.Now()
						r, err := m.Solve(context.Background(), cp.Params{TimeLimit: time.Second, Seed: 1, Workers: workers})
						total += time.Since(start)
						if err != nil {
							b.Fatal(err)
						}
						if r.Status == cp.Infeasible {
							b.Fatalf("seed %d: feasible by construction, %d workers say infeasible", seed, workers)
						}
						if r.HasSolution() {
							if err := m.Verify(r); err != nil {
								b.Fatal(err)
							}
							solved++
						}
					}
					b.ReportMetric(float64(solved)/instances, "solved")
					b.ReportMetric(float64(total.Milliseconds())/instances, "ms/instance")
				}
			})
		}
	}
}
