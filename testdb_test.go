package weave

import (
	"context"
	"database/sql"
	"sort"
	"testing"

	"github.com/weavesql/weave/internal/testdb"
)

// The tests run on every database Weave supports. SQLite (in memory) is
// always there; PostgreSQL when WEAVE_TEST_POSTGRES holds a DSN
// (postgres://user@host:port/db?sslmode=disable), each test in a fresh
// schema of its own. Without a DSN the PostgreSQL subtests skip, except
// under CI=true, where they fail: CI must not skip them.

// TestDatabase is one database the tests run on.
type TestDatabase struct {
	// Name is the subtest name: "sqlite" or "postgres".
	Name string
	open func(t testing.TB) *sql.DB
}

// Open returns a fresh, empty database, closed (and dropped) when the test
// ends, or skips the test when the database is not available.
func (d TestDatabase) Open(t testing.TB) *sql.DB {
	t.Helper()
	return d.open(t)
}

// Postgres reports whether d is PostgreSQL.
func (d TestDatabase) Postgres() bool { return d.Name == "postgres" }

// Databases lists the databases the tests run on.
func Databases() []TestDatabase {
	return []TestDatabase{{Name: "sqlite", open: OpenSQLite}, {Name: "postgres", open: OpenPostgres}}
}

// OpenSQLite opens a fresh in-memory SQLite database.
func OpenSQLite(t testing.TB) *sql.DB { return testdb.OpenSQLite(t) }

// PostgresDSN returns the DSN of the test PostgreSQL server, or skips the
// test (fails it under CI=true) when there is none.
func PostgresDSN(t testing.TB) string { return testdb.PostgresDSN(t) }

// OpenPostgres opens the test PostgreSQL server in a fresh schema (the
// connection's search_path), dropped when the test ends.
func OpenPostgres(t testing.TB) *sql.DB { return testdb.OpenPostgres(t, "weave_test_") }

// solveVerified creates m's schema in db, runs the inserts, connects m
// and solves with Verify, failing the test on any error.
func solveVerified(t testing.TB, m *Model, db *sql.DB, inserts ...string) *Result {
	t.Helper()
	ctx := context.Background()
	if err := m.CreateSchema(ctx, db); err != nil {
		t.Fatal(err)
	}
	for _, s := range inserts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Connect(db); err != nil {
		t.Fatal(err)
	}
	res, err := m.Solve(ctx, SolveOptions{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// compileAndPlace compiles schema, solves it on db after the inserts
// (solveVerified) and returns, sorted, the node column of the pod table's
// rows that have one (the pods placed).
func compileAndPlace(t testing.TB, schema string, db *sql.DB, inserts ...string) []string {
	t.Helper()
	m, err := Compile(schema)
	if err != nil {
		t.Fatal(err)
	}
	var on []string
	for _, r := range solveVerified(t, m, db, inserts...).Table("pod").Rows {
		if n, ok := r["node"].(string); ok {
			on = append(on, n)
		}
	}
	sort.Strings(on)
	return on
}
