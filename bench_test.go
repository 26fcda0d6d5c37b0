package weave_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"testing"
	"time"

	"github.com/weavesql/weave"
	"github.com/weavesql/weave/internal/testdb"
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
	m, _ := placementModelDB(b, nodes, pods)
	return m
}

// placementModelDB is placementModel with its database.
func placementModelDB(b testing.TB, nodes, pods int) (*weave.Model, *sql.DB) {
	src, err := os.ReadFile("testdata/bench/placement.sql")
	if err != nil {
		b.Fatal(err)
	}
	m, err := weave.Compile(string(src))
	if err != nil {
		b.Fatal(err)
	}
	db := testdb.OpenSQLite(b)
	if err := m.CreateSchema(context.Background(), db); err != nil {
		b.Fatal(err)
	}
	placementCluster(b, db, nodes, pods, 1)
	if err := m.Connect(db); err != nil {
		b.Fatal(err)
	}
	return m, db
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

// BenchmarkExplain measures the explanation of an infeasible batch: 100
// pods on 500 nodes of which only 5 are schedulable, while the 10 pods of
// an anti-affine app need 10 distinct nodes.
func BenchmarkExplain(b *testing.B) {
	m, db := placementModelDB(b, 500, 100)
	if _, err := db.Exec("update node set unschedulable = true where name > 'node-00004'"); err != nil {
		b.Fatal(err)
	}
	var res *weave.Result
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		res, err = m.Solve(context.Background(), weave.SolveOptions{Timeout: 5 * time.Second, ExplainTimeout: 5 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
	}
	if res.Status != weave.Infeasible || res.Explanation == nil {
		b.Fatalf("status %s, explanation %v", res.Status, res.Explanation)
	}
	b.ReportMetric(float64(res.Stats.Explain.Microseconds())/1000, "explain-ms")
	b.ReportMetric(float64(len(res.Explanation.Constraints)), "views")
	if res.Explanation.Minimal {
		b.ReportMetric(1, "minimal")
	} else {
		b.ReportMetric(0, "minimal")
	}
}
