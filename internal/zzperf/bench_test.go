package zzperf

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"testing"
	"time"

	"github.com/weavesql/weave"
)

// placementCluster loads nodes and a batch of pending pods for
// testdata/bench/placement.sql: nodes with 16-64 free CPUs, pods of 10
// apps (half of them anti-affine), exponential-ish demands.
func placementCluster(b testing.TB, db *sql.DB, nodes, pods int, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < nodes; i++ {
		_, err := tx.Exec("insert into node values ($1, $2, $3, $4, $5, $6)",
			fmt.Sprintf("node-%05d", i), 16+rng.Intn(49), 64+rng.Intn(193), rng.Intn(50) == 0, rng.Intn(100) != 0, fmt.Sprintf("z%d", i%3))
		if err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < pods; i++ {
		app := i % 10
		_, err := tx.Exec("insert into pending_pod values ($1, $2, $3, $4, $5, null)",
			fmt.Sprintf("pod-%04d", i), fmt.Sprintf("app-%d", app), app%2 == 0,
			1+int(rng.ExpFloat64()*3), 1+int(rng.ExpFloat64()*8))
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

func placementModel(b testing.TB, nodes, pods int) *weave.Model {
	src, err := os.ReadFile("../../testdata/bench/placement.sql")
	if err != nil {
		b.Fatal(err)
	}
	m, err := weave.Compile(string(src))
	if err != nil {
		b.Fatal(err)
	}
	db := memoryDB(b)
	if err := m.CreateSchema(context.Background(), db); err != nil {
		b.Fatal(err)
	}
	placementCluster(b, db, nodes, pods, 1)
	if err := m.Connect(db); err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkPlacement solves a batch of 100 pods; it reports the time per
// phase and the objective reached under a 1 s limit.
func BenchmarkPlacement(b *testing.B) {
	for _, nodes := range []int{500, 5000} {
		b.Run(fmt.Sprintf("pods=100/nodes=%d", nodes), func(b *testing.B) {
			m := placementModel(b, nodes, 100)
			var st weave.Stats
			var obj int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := m.Solve(context.Background(), weave.SolveOptions{Timeout: time.Second, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				if !res.Status.HasSolution() {
					b.Fatalf("status %s", res.Status)
				}
				st = res.Stats
				obj = *res.Objective
			}
			b.ReportMetric(float64(st.Fetch.Microseconds())/1000, "fetch-ms")
			b.ReportMetric(float64(st.Ground.Microseconds())/1000, "ground-ms")
			b.ReportMetric(float64(st.Solve.Microseconds())/1000, "solve-ms")
			b.ReportMetric(float64(obj), "objective")
			b.ReportMetric(float64(st.Variables), "vars")
			b.ReportMetric(float64(st.Constraints), "constraints")
		})
	}
}
