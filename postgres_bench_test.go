package weave_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/weavesql/weave"
)

// BenchmarkPlacementDB is BenchmarkPlacement on each database: the same
// model (testdata/bench/placement.sql) and cluster, kept in SQLite in
// memory and in PostgreSQL (WEAVE_TEST_POSTGRES). It reports the snapshot
// read (fetch-ms), the search (solve-ms) and the whole Solve call
// (total-ms: fetch, ground, solve, extract) under a 1 s search limit,
// and the share of runs that found a solution (solved).
//
//	WEAVE_TEST_POSTGRES=postgres://... go test -run '^$' -bench PlacementDB -benchtime 5x .
func BenchmarkPlacementDB(b *testing.B) {
	src, err := os.ReadFile("testdata/bench/placement.sql")
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range weave.Databases() {
		for _, nodes := range []int{500, 5000} {
			b.Run(fmt.Sprintf("%s/pods=100/nodes=%d", d.Name, nodes), func(b *testing.B) {
				db := d.Open(b)
				m, err := weave.Compile(string(src))
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				if err := m.CreateSchema(ctx, db); err != nil {
					b.Fatal(err)
				}
				placementCluster(b, db, nodes, 100, 1)
				if err := m.Connect(db); err != nil {
					b.Fatal(err)
				}
				var fetch, solve, total time.Duration
				solved := 0
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t0 := time.Now()
					res, err := m.Solve(ctx, weave.SolveOptions{Timeout: time.Second, Seed: 1})
					if err != nil {
						b.Fatal(err)
					}
					if res.Status.HasSolution() {
						solved++
					}
					total += time.Since(t0)
					fetch += res.Stats.Fetch
					solve += res.Stats.Solve
				}
				n := float64(b.N)
				b.ReportMetric(float64(fetch.Microseconds())/1000/n, "fetch-ms")
				b.ReportMetric(float64(solve.Microseconds())/1000/n, "solve-ms")
				b.ReportMetric(float64(total.Microseconds())/1000/n, "total-ms")
				// The search is the same on both databases; only whether
				// it found a solution within 1 s is reported.
				b.ReportMetric(float64(solved)/n, "solved")
			})
		}
	}
}
