package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/weavesql/weave/internal/testdb"
)

// postgresDB returns the DSN of a fresh schema on the test PostgreSQL
// server (WEAVE_TEST_POSTGRES) and the database, or skips (fails under
// CI=true) without one.
func postgresDB(t *testing.T) (string, *sql.DB) {
	t.Helper()
	schema := testdb.NewSchema(t, testdb.PostgresAdmin(t), "weave_cli_")
	return testdb.SchemaDSN(t, schema), testdb.OpenIn(t, schema)
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
