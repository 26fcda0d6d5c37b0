package main

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weavesql/weave/internal/testdb"
)

// The paper's workflow on a database the user owns: the whole policy file
// (tables and views) is loaded with the database's own client, psql -f or
// sqlite3, the state inserted, and weave solve --db ... --verify solves it
// without writing to it.

const paperPolicy = "../../testdata/paper.sql"

// The paper's capacity constraint in its own style: a hard filter over the
// grouped view testdata/paper.sql defines, and the same as a having clause.
// The paper's capacity constraint in its two forms, shared with the root
// package's tests (testdata).
var (
	paperCapacityFilter = mustRead("../../testdata/paper_capacity_filter.sql")
	paperCapacityHaving = mustRead("../../testdata/paper_capacity_having.sql")
)

// mustRead returns a test file's text; a missing file is a broken checkout.
func mustRead(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// paperPolicies are testdata/paper.sql and the paper's policy with its
// capacity constraint, as files.
func paperPolicies(t *testing.T) map[string]string {
	t.Helper()
	src, err := os.ReadFile(paperPolicy)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"paper":          paperPolicy,
		"paper+capacity": writeFile(t, "capacity.sql", string(src)+paperCapacityFilter),
	}
}

// needClient returns the path of a database client, or skips the test
// without it (fails under CI=true: .ci/run installs it).
func needClient(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but %s is not installed (.ci/run installs it)", name)
		}
		t.Skipf("%s not installed", name)
	}
	return path
}

// runClient runs a database client, failing the test with its output if
// it fails.
func runClient(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out.String())
	}
}

// solveResult is the part of weave solve --format json the tests read.
type solveResult struct {
	Status    string                      `json:"status"`
	Objective *int64                      `json:"objective"`
	Tables    map[string][]map[string]any `json:"tables"`
}

// solveJSON runs weave solve with --verify and --format json and decodes
// its output, failing the test unless it exits 0.
func solveJSON(t *testing.T, args ...string) solveResult {
	t.Helper()
	args = append([]string{"solve", "--timeout", "5s", "--format", "json", "--verify"}, args...)
	code, stdout, stderr := runCmd(t, args...)
	if code != exitOK {
		t.Fatalf("weave %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
	}
	var r solveResult
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// optimum solves the policy on the quickstart state in a fresh in-memory
// database (--data): the value the user's database must give.
func optimum(t *testing.T, policy string) int64 {
	t.Helper()
	r := solveJSON(t, "--schema", policy, "--data", quickState)
	if r.Status != "OPTIMAL" || r.Objective == nil {
		t.Fatalf("%s on %s: status %s", policy, quickState, r.Status)
	}
	return *r.Objective
}

// checkOptimum solves the policy on the database with --verify and checks
// the status and the objective.
func checkOptimum(t *testing.T, policy, dsn string, want int64) {
	t.Helper()
	r := solveJSON(t, "--schema", policy, "--db", dsn)
	if r.Status != "OPTIMAL" || r.Objective == nil || *r.Objective != want {
		t.Fatalf("--db %s: status %s, objective %v, want OPTIMAL %d", dsn, r.Status, r.Objective, want)
	}
	if n := len(r.Tables["pending_pod"]); n != 12 {
		t.Fatalf("%d pods in the result, want 12", n)
	}
}

// checkAlteredView alters the policy's view constraint_node_affinity by
// hand (alter runs it) and checks that solving reports the view by name,
// with one "weave:" prefix.
func checkAlteredView(t *testing.T, policy, dsn string, alter func()) {
	t.Helper()
	alter()
	code, _, stderr := runCmd(t, "solve", "--schema", policy, "--db", dsn, "--timeout", "2s", "--verify")
	if code != exitError || !strings.Contains(stderr, "schema mismatch") || !strings.Contains(stderr, "view constraint_node_affinity") {
		t.Fatalf("a view altered by hand: exit %d, stderr:\n%s", code, stderr)
	}
	if !strings.HasPrefix(stderr, "weave: ") || strings.Contains(stderr, "weave: weave:") {
		t.Errorf("the error is not prefixed once with weave: %q", stderr)
	}
}

// The altered view keeps the policy's columns (PostgreSQL's create or
// replace view requires it) and drops its condition.
const alteredAffinity = "create view constraint_node_affinity as select * from pending_pod"

// TestUserOwnedSQLite loads each policy into a SQLite file with the sqlite3
// client and solves it there.
func TestUserOwnedSQLite(t *testing.T) {
	sqlite3 := needClient(t, "sqlite3")
	for name, policy := range paperPolicies(t) {
		t.Run(name, func(t *testing.T) {
			want := optimum(t, policy)
			path := filepath.Join(t.TempDir(), "cluster.db")
			runClient(t, exec.Command(sqlite3, "-bail", path, ".read "+policy, ".read "+quickState))
			before := sqliteObjects(t, path)
			checkOptimum(t, policy, path, want)
			checkOptimum(t, policy, "sqlite:"+path, want)
			if after := sqliteObjects(t, path); after != before {
				t.Errorf("weave solve --verify changed the database:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			checkAlteredView(t, policy, path, func() {
				runClient(t, exec.Command(sqlite3, "-bail", path, "drop view constraint_node_affinity", alteredAffinity))
			})
		})
	}
}

// sqliteObjects lists a SQLite file's schema and the placements of its
// pods.
func sqliteObjects(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return listRows(t, db, "select type || ' ' || name || ': ' || coalesce(sql, '') from sqlite_master order by 1",
		"select pod_name || ' ' || coalesce(node_name, '-') from pending_pod order by 1")
}

// listRows runs queries of one text column and returns their rows, one a
// line.
func listRows(t *testing.T, db *sql.DB, queries ...string) string {
	t.Helper()
	var b strings.Builder
	for _, q := range queries {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			b.WriteString(s + "\n")
		}
		rows.Close()
	}
	return b.String()
}

// TestUserOwnedPostgres loads each policy into a schema of its own (not
// public: named by the search_path) with psql -f and solves it there, as
// the schema's owner and as a role with only SELECT on the tables and
// views and TEMP on the database.
func TestUserOwnedPostgres(t *testing.T) {
	psql := needClient(t, "psql")
	admin := testdb.PostgresAdmin(t)
	for name, policy := range paperPolicies(t) {
		t.Run(name, func(t *testing.T) {
			want := optimum(t, policy)
			schema := testdb.NewSchema(t, admin, "weave_user_")
			dsn := testdb.SchemaDSN(t, schema)
			load := func(args ...string) {
				t.Helper()
				cmd := exec.Command(psql, append([]string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", testdb.PostgresDSN(t)}, args...)...)
				cmd.Env = append(os.Environ(), "PGOPTIONS=-c search_path="+schema)
				runClient(t, cmd)
			}
			load("-f", policy, "-f", quickState)
			db := testdb.OpenIn(t, schema)
			objects := func() string {
				return listRows(t, db,
					`select c.relkind::text || ' ' || c.relname::text || ': ' || coalesce(pg_get_viewdef(c.oid), '')
					 from pg_class c where c.relnamespace = current_schema()::regnamespace order by 1`,
					"select pod_name || ' ' || coalesce(node_name, '-') from pending_pod order by 1")
			}
			before := objects()
			checkOptimum(t, policy, dsn, want)
			if after := objects(); after != before {
				t.Errorf("weave solve --verify changed the database:\nbefore:\n%s\nafter:\n%s", before, after)
			}

			// A role that can read the schema and create temporary
			// objects, and nothing else.
			role := readOnlyRole(t, admin, schema)
			checkOptimum(t, policy, role, want)

			checkAlteredView(t, policy, dsn, func() {
				load("-c", "create or replace "+strings.TrimPrefix(alteredAffinity, "create "))
			})
		})
	}
}

// readOnlyRole creates a login role with USAGE on schema, SELECT on its
// tables and views, and TEMP on the database (dropped when the test ends),
// and returns a DSN that connects as it with search_path set to schema.
func readOnlyRole(t *testing.T, admin *sql.DB, schema string) string {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	role := "weave_reader_" + hex.EncodeToString(b[:])
	var db string
	if err := admin.QueryRow("select current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("create role " + role + " login password 'weave'"); err != nil {
		if os.Getenv("CI") != "true" {
			t.Skipf("cannot create a role on the test server: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The schema is dropped after this (cleanups run last first).
		admin.Exec("drop owned by " + role)
		if _, err := admin.Exec("drop role " + role); err != nil {
			t.Errorf("dropping role %s: %v", role, err)
		}
	})
	for _, s := range []string{
		"revoke all on database " + db + " from " + role,
		fmt.Sprintf("grant connect, temporary on database %s to %s", db, role),
		fmt.Sprintf("grant usage on schema %s to %s", schema, role),
		fmt.Sprintf("grant select on all tables in schema %s to %s", schema, role),
	} {
		if _, err := admin.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	u, err := url.Parse(testdb.SchemaDSN(t, schema))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, "weave")
	// The role can read, not write.
	rdb, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	var n int
	if err := rdb.QueryRow("select count(*) from pending_pod").Scan(&n); err != nil {
		t.Fatalf("the role cannot read pending_pod: %v", err)
	}
	if _, err := rdb.Exec("update pending_pod set node_name = null"); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("the role can write to pending_pod: %v", err)
	}
	return u.String()
}

// TestExplainPaperCapacityForms: weave explain on the paper's capacity
// form (a hard filter over the grouped view) shows no literal per node:
// the same variable count as the having form, at 100 pods × 50 nodes.
func TestExplainPaperCapacityForms(t *testing.T) {
	src, err := os.ReadFile(paperPolicy)
	if err != nil {
		t.Fatal(err)
	}
	var state strings.Builder
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&state, "insert into node values ('node-%02d', false, false, false, true, %d);\n", i, 8+i%9)
		fmt.Fprintf(&state, "insert into node_label values ('node-%02d', 'zone', 'z%d');\n", i, i%3)
	}
	for i := 0; i < 100; i++ {
		affinity := i%4 == 0
		fmt.Fprintf(&state, "insert into pending_pod values ('pod-%03d', 'pending', 'default', null, %d, %v);\n", i, 1+i%4, affinity)
		if affinity {
			fmt.Fprintf(&state, "insert into pod_node_selector values ('pod-%03d', 'zone', 'z%d');\n", i, i%3)
		}
	}
	data := writeFile(t, "state.sql", state.String())
	variables := map[string]int{}
	for name, view := range map[string]string{"filter": paperCapacityFilter, "having": paperCapacityHaving} {
		policy := writeFile(t, name+".sql", string(src)+view)
		code, stdout, stderr := runCmd(t, "explain", "--schema", policy, "--data", data, "--timeout", "100ms", "--format", "json")
		if code != exitOK {
			t.Fatalf("%s: exit %d\n%s", name, code, stderr)
		}
		var r report
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatal(err)
		}
		for _, v := range r.Views {
			if v.View == "constraint_capacity" {
				t.Logf("%s: %d variables; constraint_capacity: %d variables, %v", name, r.Variables, v.Variables, v.ByKind)
				if v.Variables != 0 {
					t.Errorf("%s: constraint_capacity adds %d variables, want none (a bound on each node's load)", name, v.Variables)
				}
			}
		}
		variables[name] = r.Variables
	}
	if variables["filter"] != variables["having"] {
		t.Errorf("weave explain: %d variables with the filter form, %d with having", variables["filter"], variables["having"])
	}
}
