package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"
)

// postgresDB returns the DSN of a fresh schema on the test PostgreSQL
// server (WEAVE_TEST_POSTGRES) and the database, or skips (fails under
// CI=true) without one.
func postgresDB(t *testing.T) (string, *sql.DB) {
	t.Helper()
	dsn := os.Getenv("WEAVE_TEST_POSTGRES")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but WEAVE_TEST_POSTGRES is not set: the PostgreSQL tests must run in CI")
		}
		t.Skip("PostgreSQL tests skipped: set WEAVE_TEST_POSTGRES=postgres://user@host:port/db?sslmode=disable to run them")
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "weave_cli_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec("create schema " + schema); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
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
		admin.Exec("drop schema " + schema + " cascade")
		admin.Close()
	})
	return u.String(), db
}

// TestSolvePostgres solves the quickstart cluster kept in PostgreSQL.
func TestSolvePostgres(t *testing.T) {
	dsn, db := postgresDB(t)
	model, err := compileFile(quickPolicy)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := model.CreateSchema(ctx, db); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(quickState)
	if err != nil {
		t.Fatal(err)
	}
	if err := runScript(ctx, db, quickState, string(src)); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(t, "solve", "--schema", quickPolicy, "--db", dsn, "--timeout", "2s", "--format", "json", "--verify")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var out struct {
		Status string                      `json:"status"`
		Tables map[string][]map[string]any `json:"tables"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Tables["pending_pod"]) != 12 {
		t.Fatalf("want 12 pods, got %v", out.Tables)
	}
	for _, r := range out.Tables["pending_pod"] {
		if r["node_name"] == nil {
			t.Errorf("pod %v not placed", r["pod_name"])
		}
	}

	// A table the schema declares but the database lacks is named.
	if _, err := db.Exec("drop table pending_pod"); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCmd(t, "solve", "--schema", quickPolicy, "--db", dsn, "--timeout", "2s")
	if code != exitError || !strings.Contains(stderr, "schema mismatch") || !strings.Contains(stderr, "pending_pod") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}
