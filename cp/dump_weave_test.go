//go:build cpdump

package cp_test

// Dumps real grounded Weave models into cp/testdata for the cp benchmarks:
//
//	go test -tags cpdump -run TestDumpWeaveModels ./cp
//
// (the normal build never compiles this file, so cp's tests do not depend
// on the rest of the repository).

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/weavesql/weave"
	"github.com/weavesql/weave/cp"
	_ "modernc.org/sqlite"
)

type dumpBackend struct{ path string }

func (dumpBackend) Name() string { return "dump" }

func (d dumpBackend) Solve(ctx context.Context, m *cp.Model, p cp.Params) (*cp.Response, error) {
	if err := cp.DumpModelForTest(m, d.path); err != nil {
		return nil, err
	}
	return m.Solve(ctx, p)
}

func openDB(t *testing.T) *sql.DB {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func dumpPlacement(t *testing.T, nodes, pods int, path string) {
	src, err := os.ReadFile("../testdata/bench/placement.sql")
	if err != nil {
		t.Fatal(err)
	}
	m, err := weave.Compile(string(src))
	if err != nil {
		t.Fatal(err)
	}
	db := openDB(t)
	if err := m.CreateSchema(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < nodes; i++ {
		if _, err := db.Exec("insert into node values ($1, $2, $3, $4, $5, $6)",
			fmt.Sprintf("node-%05d", i), 16+rng.Intn(49), 64+rng.Intn(193), rng.Intn(50) == 0, rng.Intn(100) != 0, fmt.Sprintf("z%d", i%3)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < pods; i++ {
		app := i % 10
		if _, err := db.Exec("insert into pending_pod values ($1, $2, $3, $4, $5, null)",
			fmt.Sprintf("pod-%04d", i), fmt.Sprintf("app-%d", app), app%2 == 0,
			1+int(rng.ExpFloat64()*3), 1+int(rng.ExpFloat64()*8)); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Connect(db); err != nil {
		t.Fatal(err)
	}
	res, err := m.Solve(context.Background(), weave.SolveOptions{Timeout: time.Second, Seed: 1, Backend: dumpBackend{path}, NoExplain: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(path, res.Status)
}

func dumpDiff(t *testing.T, policy string, seed int, path string) {
	base, err := os.ReadFile("../testdata/diff/base.sql")
	if err != nil {
		t.Fatal(err)
	}
	pol, err := os.ReadFile("../testdata/diff/" + policy)
	if err != nil {
		t.Fatal(err)
	}
	vars, fk := "node", ""
	for _, line := range strings.Split(string(pol), "\n") {
		if v, ok := strings.CutPrefix(line, "-- vars: "); ok {
			vars = v
		}
		if line == "-- fk: yes" {
			fk = "references node(name)"
		}
	}
	s := strings.ReplaceAll(string(base), "{{VARS}}", vars)
	s = strings.ReplaceAll(s, "{{FK}}", fk) + "\n" + string(pol)
	m, err := weave.Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	db := openDB(t)
	if err := m.CreateSchema(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	// Same generator as the root differential test's randomState.
	rng := rand.New(rand.NewSource(int64(seed*7919 + len("testdata/diff/"+policy))))
	for i := 0; i < 3; i++ {
		db.Exec(fmt.Sprintf("insert into node values ('n%d', %d, 'z%d', %v)", i, 2+rng.Intn(4), rng.Intn(2), rng.Intn(5) > 0))
		if rng.Intn(3) == 0 {
			db.Exec(fmt.Sprintf("insert into label values ('n%d', 'gpu', 'yes')", i))
		}
		if rng.Intn(5) == 0 {
			db.Exec(fmt.Sprintf("insert into label values ('n%d', 'bad', 'yes')", i))
		}
	}
	for i := 0; i < 4; i++ {
		node := "null"
		if rng.Intn(2) == 0 {
			node = fmt.Sprintf("'n%d'", rng.Intn(3))
		}
		db.Exec(fmt.Sprintf("insert into pod values ('p%d', 'a%d', %d, %d, %s, %v)", i, rng.Intn(2), 1+rng.Intn(3), 1+rng.Intn(9), node, rng.Intn(2) == 0))
	}
	if err := m.Connect(db); err != nil {
		t.Fatal(err)
	}
	res, err := m.Solve(context.Background(), weave.SolveOptions{Timeout: 5 * time.Second, Seed: int64(seed), Backend: dumpBackend{path}, NoExplain: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(path, res.Status)
}

func TestDumpWeaveModels(t *testing.T) {
	dumpPlacement(t, 500, 100, "testdata/placement500.json.gz")
	dumpPlacement(t, 5000, 100, "testdata/placement5000.json.gz")
	dumpPlacement(t, 10000, 100, "testdata/placement10000.json.gz")
	for seed := 0; seed < 4; seed++ {
		dumpDiff(t, "08_division_between.sql", seed, fmt.Sprintf("testdata/diff08_seed%d.json.gz", seed))
	}
}
