package weave

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
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
func OpenSQLite(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// PostgresDSN returns the DSN of the test PostgreSQL server, or skips the
// test (fails it under CI=true) when there is none.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("WEAVE_TEST_POSTGRES")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but WEAVE_TEST_POSTGRES is not set: the PostgreSQL tests must run in CI (.ci/run starts a server)")
		}
		t.Skip("PostgreSQL tests skipped: set WEAVE_TEST_POSTGRES=postgres://user@host:port/db?sslmode=disable to run them")
	}
	return dsn
}

// OpenPostgres opens the test PostgreSQL server in a fresh schema (the
// connection's search_path), dropped when the test ends.
func OpenPostgres(t testing.TB) *sql.DB {
	t.Helper()
	dsn := PostgresDSN(t)
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	var b [6]byte
	rand.Read(b[:])
	schema := "weave_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec("create schema " + schema); err != nil {
		t.Fatalf("creating the test schema on %s: %v", dsn, err)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("WEAVE_TEST_POSTGRES: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		if _, err := admin.ExecContext(context.Background(), "drop schema "+schema+" cascade"); err != nil {
			t.Errorf("dropping the test schema: %v", err)
		}
	})
	return db
}
