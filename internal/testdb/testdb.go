// Package testdb opens the databases Weave's tests run on: an in-memory
// SQLite database, always; PostgreSQL when WEAVE_TEST_POSTGRES holds a DSN
// (postgres://user@host:port/db?sslmode=disable), each test in a fresh
// schema of its own. Without a DSN the PostgreSQL tests skip, except under
// CI=true, where they fail: CI must not skip them (.ci/run starts a server).
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // PostgreSQL
	_ "modernc.org/sqlite"             // SQLite
)

// OpenSQLite opens a fresh in-memory SQLite database, closed when the test
// ends. One connection: an in-memory database is per connection.
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

// PostgresAdmin opens the test server with its default search_path,
// closed when the test ends.
func PostgresAdmin(t testing.TB) *sql.DB {
	t.Helper()
	admin, err := sql.Open("pgx", PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	return admin
}

// NewSchema creates a schema named prefix plus random hex through admin,
// dropped (cascade) when the test ends.
func NewSchema(t testing.TB, admin *sql.DB, prefix string) string {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	schema := prefix + hex.EncodeToString(b[:])
	if _, err := admin.Exec("create schema " + schema); err != nil {
		t.Fatalf("creating the test schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), "drop schema "+schema+" cascade"); err != nil {
			t.Errorf("dropping the test schema: %v", err)
		}
	})
	return schema
}

// SchemaDSN returns the DSN of the test server with search_path set to
// schema (for a program under test that opens the database itself).
func SchemaDSN(t testing.TB, schema string) string {
	t.Helper()
	u, err := url.Parse(PostgresDSN(t))
	if err != nil {
		t.Fatalf("WEAVE_TEST_POSTGRES: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// OpenIn opens the test server with search_path set to schema, closed when
// the test ends (before a schema made by NewSchema earlier is dropped).
func OpenIn(t testing.TB, schema string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", SchemaDSN(t, schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// OpenPostgres opens the test server in a fresh schema named after prefix,
// dropped when the test ends.
func OpenPostgres(t testing.TB, prefix string) *sql.DB {
	t.Helper()
	return OpenIn(t, NewSchema(t, PostgresAdmin(t), prefix))
}
