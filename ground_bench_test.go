package weave

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"testing"

	"github.com/weavesql/weave/internal/ground"
)

// BenchmarkGround measures grounding alone (no fetch, no solve) of a
// placement batch, as Solve grounds it and as an explanation grounds it
// again (explain mode: an assumption per hard row or group, and where
// each derived row comes from). Allocations are the steady measure on a
// shared machine.
func BenchmarkGround(b *testing.B) {
	src, err := os.ReadFile("testdata/bench/placement.sql")
	if err != nil {
		b.Fatal(err)
	}
	for _, nodes := range []int{500, 5000} {
		m, err := Compile(string(src))
		if err != nil {
			b.Fatal(err)
		}
		db := OpenSQLite(b)
		ctx := context.Background()
		if err := m.CreateSchema(ctx, db); err != nil {
			b.Fatal(err)
		}
		groundCluster(b, db, nodes, 100)
		if err := m.Connect(db); err != nil {
			b.Fatal(err)
		}
		snap, err := m.fetch(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for _, mode := range []struct {
			name    string
			explain bool
		}{{"solve", false}, {"explain", true}} {
			b.Run(fmt.Sprintf("pods=100/nodes=%d/%s", nodes, mode.name), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := ground.Ground(m.prog, snap, m.groundOptions(ground.Options{Explain: mode.explain})); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// groundCluster is the cluster of BenchmarkPlacement (bench_test.go).
func groundCluster(b testing.TB, db *sql.DB, nodes, pods int) {
	rng := rand.New(rand.NewSource(1))
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < nodes; i++ {
		if _, err := tx.Exec("insert into node values ($1, $2, $3, $4, $5, $6)",
			fmt.Sprintf("node-%05d", i), 16+rng.Intn(49), 64+rng.Intn(193), rng.Intn(50) == 0, rng.Intn(100) != 0, fmt.Sprintf("z%d", i%3)); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < pods; i++ {
		app := i % 10
		if _, err := tx.Exec("insert into pending_pod values ($1, $2, $3, $4, $5, null)",
			fmt.Sprintf("pod-%04d", i), fmt.Sprintf("app-%d", app), app%2 == 0,
			1+int(rng.ExpFloat64()*3), 1+int(rng.ExpFloat64()*8)); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}
