package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weavesql/weave"
)

// TestSolveJSON checks the JSON contract on the quickstart example: one
// object with the documented keys and types, every pod placed on a
// schedulable node that satisfies its affinity.
func TestSolveJSON(t *testing.T) {
	for _, extra := range [][]string{nil, {"--verify"}} {
		t.Run(strings.Join(append([]string{"flags"}, extra...), " "), func(t *testing.T) {
			args := append([]string{"solve", "--schema", quickPolicy, "--data", quickState, "--timeout", "2s", "--format", "json"}, extra...)
			code, stdout, stderr := runCmd(t, args...)
			if code != exitOK {
				t.Fatalf("exit %d, stderr:\n%s", code, stderr)
			}
			dec := json.NewDecoder(strings.NewReader(stdout))
			dec.UseNumber()
			var out map[string]any
			if err := dec.Decode(&out); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
			}
			if dec.More() {
				t.Fatalf("stdout holds more than one JSON value:\n%s", stdout)
			}
			wantKeys := []string{"status", "objective", "soft_constraints", "tables", "stats"}
			if len(out) != len(wantKeys) {
				t.Errorf("top-level keys %v, want exactly %v", keys(out), wantKeys)
			}
			status, _ := out["status"].(string)
			if status != "OPTIMAL" && status != "FEASIBLE" {
				t.Errorf("status = %v, want OPTIMAL or FEASIBLE", out["status"])
			}
			obj := isInt(t, "objective", out["objective"])
			soft, ok := out["soft_constraints"].(map[string]any)
			if !ok || len(soft) != 1 {
				t.Fatalf("soft_constraints = %v, want one entry", out["soft_constraints"])
			}
			if v := isInt(t, "soft_constraints.constraint_load_balance_cpu", soft["constraint_load_balance_cpu"]); v != obj {
				t.Errorf("soft value %d != objective %d", v, obj)
			}
			// node-e must take the "metrics" pod (250 of 2000), so the
			// smallest spare capacity is at most 1750, which is optimal.
			if obj > 1750 || (status == "OPTIMAL" && obj != 1750) {
				t.Errorf("objective %d with status %s, the optimum is 1750", obj, status)
			}

			tables, ok := out["tables"].(map[string]any)
			if !ok {
				t.Fatalf("tables = %T, want object", out["tables"])
			}
			rows, ok := tables["pending_pod"].([]any)
			if !ok || len(rows) != 12 {
				t.Fatalf("tables.pending_pod = %v, want 12 rows", tables["pending_pod"])
			}
			affinity := map[string]map[string]bool{
				"cache-1": {"node-a": true, "node-c": true},
				"db-1":    {"node-d": true},
				"metrics": {"node-e": true},
			}
			seen := map[string]bool{}
			for _, r := range rows {
				row, ok := r.(map[string]any)
				if !ok {
					t.Fatalf("row %v is not an object", r)
				}
				if len(row) != 6 {
					t.Errorf("row %v has %d columns, want 6", row, len(row))
				}
				pod, _ := row["pod_name"].(string)
				node, _ := row["node_name"].(string)
				seen[pod] = true
				if !schedulable[node] {
					t.Errorf("pod %s placed on %v, not a schedulable node", pod, row["node_name"])
				}
				if ok := affinity[pod]; ok != nil && !ok[node] {
					t.Errorf("pod %s placed on %s, outside its affinity %v", pod, node, ok)
				}
				if _, ok := row["has_requested_node_affinity"].(bool); !ok {
					t.Errorf("has_requested_node_affinity = %T, want bool", row["has_requested_node_affinity"])
				}
				isInt(t, "cpu_request", row["cpu_request"])
			}
			if len(seen) != 12 {
				t.Errorf("%d distinct pods, want 12", len(seen))
			}
			// Rows are objects whose keys follow the schema's column order.
			first := stdout[strings.Index(stdout, `"pending_pod"`):]
			order := []string{`"pod_name"`, `"status"`, `"namespace"`, `"node_name"`, `"cpu_request"`, `"has_requested_node_affinity"`}
			for i := 1; i < len(order); i++ {
				if strings.Index(first, order[i-1]) > strings.Index(first, order[i]) {
					t.Errorf("column %s comes after %s in the JSON row", order[i-1], order[i])
				}
			}

			stats, ok := out["stats"].(map[string]any)
			if !ok {
				t.Fatalf("stats = %T, want object", out["stats"])
			}
			if v := isInt(t, "stats.variables", stats["variables"]); v <= 0 {
				t.Errorf("stats.variables = %d, want > 0", v)
			}
			if v := isInt(t, "stats.constraints", stats["constraints"]); v <= 0 {
				t.Errorf("stats.constraints = %d, want > 0", v)
			}
			for _, k := range []string{"constraints_by_kind", "constraints_by_view", "rows_read"} {
				m, ok := stats[k].(map[string]any)
				if !ok || len(m) == 0 {
					t.Errorf("stats.%s = %v, want a non-empty object", k, stats[k])
				}
				for name, v := range m {
					isInt(t, "stats."+k+"."+name, v)
				}
			}
			if rr, _ := stats["rows_read"].(map[string]any); rr != nil {
				if n := isInt(t, "rows_read.pending_pod", rr["pending_pod"]); n != 12 {
					t.Errorf("rows_read.pending_pod = %d, want 12", n)
				}
			}
			for _, k := range []string{"fetch_ms", "ground_ms", "solve_ms", "extract_ms", "verify_ms"} {
				n, ok := stats[k].(json.Number)
				if !ok {
					t.Errorf("stats.%s = %T, want a number", k, stats[k])
					continue
				}
				f, err := n.Float64()
				if err != nil || f < 0 {
					t.Errorf("stats.%s = %v, want a non-negative number", k, n)
				}
				if k == "verify_ms" && len(extra) > 0 && f <= 0 {
					t.Errorf("stats.verify_ms = %v with --verify, want > 0", f)
				}
			}
			if views, _ := stats["views"].(map[string]any); views["constraint_node_predicates"] == nil {
				t.Errorf("stats.views lacks the hard view constraint_node_predicates: %v", stats["views"])
			}
			if len(stats) != 11 {
				t.Errorf("stats keys %v, want the 11 documented ones", keys(stats))
			}
		})
	}
}

// TestSolveJSONNoSolution checks the JSON of an infeasible solve: the
// same keys, a null objective, no tables.
func TestSolveJSONNoSolution(t *testing.T) {
	code, stdout, stderr := runCmd(t, "solve", "--schema", quickPolicy, "--data", quickInfeasible, "--timeout", "2s", "--format", "json")
	if code != exitInfeasible {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitInfeasible, stderr)
	}
	var out struct {
		Status    *string                     `json:"status"`
		Objective json.RawMessage             `json:"objective"`
		Soft      map[string]int64            `json:"soft_constraints"`
		Tables    map[string][]map[string]any `json:"tables"`
		Stats     map[string]any              `json:"stats"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if out.Status == nil || *out.Status != "INFEASIBLE" {
		t.Errorf("status = %v, want INFEASIBLE", out.Status)
	}
	if string(out.Objective) != "null" {
		t.Errorf("objective = %s, want null", out.Objective)
	}
	if out.Soft == nil || len(out.Soft) != 0 || out.Tables == nil || len(out.Tables) != 0 {
		t.Errorf("soft_constraints = %v, tables = %v, want empty objects", out.Soft, out.Tables)
	}
	if out.Stats["variables"] == nil {
		t.Errorf("stats = %v, want the model size", out.Stats)
	}
}

// TestExitCodes produces every exit status with a real case.
func TestExitCodes(t *testing.T) {
	badSQL := writeFile(t, "bad.sql", "create table node (name varchar(10) not null primary key);\ncreate view v as selec 1;\n")
	badData := writeFile(t, "state.sql", "insert into node values ('a', false, false, false, true, 10);\ninsert into nod values ('b');\n")
	pack := writeFile(t, "pack.sql", packPolicy)
	packState := writeFile(t, "pack-state.sql", packData(12))
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // substring of stdout
		stderr string // substring of stderr
	}{
		{"solution", []string{"--schema", quickPolicy, "--data", quickState}, exitOK, "status: OPTIMAL", ""},
		{"infeasible", []string{"--schema", quickPolicy, "--data", quickInfeasible}, exitInfeasible, "status: INFEASIBLE", ""},
		// A perfect bin packing of ~100 pods on 12 nodes: the solver checks
		// its deadline every 256 search steps, and no search finds a
		// perfect packing that fast, nor can it prove there is none (there
		// is one by construction). So the 1ns limit always ends the search
		// without a solution.
		{"unknown", []string{"--schema", pack, "--data", packState, "--timeout", "1ns"}, exitUnknown, "status: UNKNOWN", ""},
		{"unknown json", []string{"--schema", pack, "--data", packState, "--timeout", "1ns", "--format", "json"}, exitUnknown, `"status": "UNKNOWN"`, ""},
		{"bad sql", []string{"--schema", badSQL, "--data", quickState}, exitError, "", badSQL + ":2:18: v: "},
		{"bad data", []string{"--schema", quickPolicy, "--data", badData}, exitError, "", badData + ":2:1: "},
		{"missing schema file", []string{"--schema", "no/such/policy.sql", "--data", quickState}, exitError, "", "no/such/policy.sql"},
		{"missing data file", []string{"--schema", quickPolicy, "--data", "no/such/state.sql"}, exitError, "", "no/such/state.sql"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"solve", "--timeout", "2s"}, tc.args...)
			code, stdout, stderr := runCmd(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tc.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.stdout, stdout)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr)
			}
			if (code == exitError) != (stderr != "") {
				t.Errorf("exit %d with stderr %q: errors, and only errors, go to stderr", code, stderr)
			}
			if code == exitError && stdout != "" {
				t.Errorf("exit 1 with output on stdout:\n%s", stdout)
			}
		})
	}
}

// TestExitCodeMapping checks the status-to-exit-status table itself.
func TestExitCodeMapping(t *testing.T) {
	for _, tc := range []struct {
		s    weave.Status
		want int
	}{
		{weave.Optimal, 0}, {weave.Feasible, 0}, {weave.Infeasible, 2}, {weave.Unknown, 3}, {weave.Status(42), 1},
	} {
		if got := exitCode(tc.s); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

var positioned = regexp.MustCompile(`^(.+\.sql):(\d+):(\d+): (\w+: )?\S`)

// TestCompileErrors checks that every positioned compile error is printed
// on its own line as file:line:col: view: message.
func TestCompileErrors(t *testing.T) {
	schema := writeFile(t, "policy.sql", `create table node (name varchar(10) not null primary key);

-- @variable_columns (node_name)
create table pod (name varchar(10) not null primary key, node_name varchar(10));

-- @hard_constraint
create view c1 as select * from pod where pod.nodename = 'x';

-- @hard_constraint
create view c2 as select * from pod where pod.name = 1 + 'a' and pod.node_name = node.name;
`)
	for _, cmd := range [][]string{
		{"check", "--schema", schema},
		{"solve", "--schema", schema, "--data", quickState, "--timeout", "2s"},
	} {
		t.Run(cmd[0], func(t *testing.T) {
			code, stdout, stderr := runCmd(t, cmd...)
			if code != exitError {
				t.Fatalf("exit %d, want 1", code)
			}
			if stdout != "" {
				t.Errorf("stdout not empty:\n%s", stdout)
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if len(lines) < 2 {
				t.Fatalf("want at least 2 errors, one per line, got:\n%s", stderr)
			}
			for _, l := range lines {
				m := positioned.FindStringSubmatch(l)
				if m == nil || m[1] != schema {
					t.Errorf("line %q is not %s:line:col: view: message", l, schema)
				}
			}
			if !strings.HasPrefix(lines[0], schema+":7:") || !strings.Contains(lines[0], " c1: ") || !strings.Contains(lines[0], "nodename") {
				t.Errorf("first error %q, want line 7, view c1, naming nodename", lines[0])
			}
			if !strings.Contains(stderr, ":10:") || !strings.Contains(stderr, " c2: ") {
				t.Errorf("no error for view c2 on line 10:\n%s", stderr)
			}
		})
	}
}

// TestDataScriptError checks that a failing data statement exits 1 with
// the database's message and the statement's position.
func TestDataScriptError(t *testing.T) {
	tests := []struct {
		name, script, want string
	}{
		{"syntax", "-- header\ninsert into node values ('a', false, false, false, true, 10);\n\n  insert into node valuez ('b', false, false, false, true, 10);\n", ":4:3: "},
		{"syntax message", "insert into node values ('a', false, false, false, true, 10);\ninsert into node valuez ('b');", "syntax error"},
		{"no such table", "insert into nodes values ('a');", "no such table: nodes"},
		{"constraint", "insert into node values ('a', false, false, false, true, null);", "NOT NULL"},
		{"unterminated string", "insert into node values ('a, false);", ":1:26: unterminated string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := writeFile(t, "state.sql", tc.script)
			code, stdout, stderr := runCmd(t, "solve", "--schema", quickPolicy, "--data", data, "--timeout", "2s")
			if code != exitError {
				t.Fatalf("exit %d, want 1; stdout:\n%s", code, stdout)
			}
			if !strings.Contains(stderr, data) || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr lacks %q (and the file name):\n%s", tc.want, stderr)
			}
		})
	}
}

// TestDataScriptQuoting loads a script whose strings hold semicolons,
// quotes and comment markers, and checks they reach the solved table.
func TestDataScriptQuoting(t *testing.T) {
	base, err := os.ReadFile(quickState)
	if err != nil {
		t.Fatal(err)
	}
	script := string(base) + `
/* a block comment; with a semicolon and a 'quote */
insert into pending_pod values ('odd;name', 'Pending', 'it''s -- not a comment; really', null, 10, false); -- trailing; comment
`
	data := writeFile(t, "state.sql", script)
	code, stdout, stderr := runCmd(t, "solve", "--schema", quickPolicy, "--data", data, "--timeout", "2s", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var out struct {
		Tables map[string][]map[string]any `json:"tables"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	rows := out.Tables["pending_pod"]
	if len(rows) != 13 {
		t.Fatalf("%d pods, want 13", len(rows))
	}
	found := false
	for _, r := range rows {
		if r["pod_name"] == "odd;name" {
			found = true
			if r["namespace"] != "it's -- not a comment; really" {
				t.Errorf("namespace = %q", r["namespace"])
			}
		}
	}
	if !found {
		t.Errorf("pod odd;name missing: %v", rows)
	}
}

// TestDataStdin reads the data script from stdin with --data -.
func TestDataStdin(t *testing.T) {
	state, err := os.ReadFile(quickState)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runStdin(t, string(state), "solve", "--schema", quickPolicy, "--data", "-", "--timeout", "2s")
	if code != exitOK || !strings.Contains(stdout, "pending_pod (12 rows)") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, _, stderr = runStdin(t, "insert into node values (1);\ninsert into nowhere values (1);", "solve", "--schema", quickPolicy, "--data", "-", "--timeout", "2s")
	if code != exitError || !strings.Contains(stderr, "<stdin>:1:1: ") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

// makeDB creates a SQLite file holding the quickstart schema and state.
func makeDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cluster.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
	return path
}

// TestSolveDB solves against an existing SQLite file.
func TestSolveDB(t *testing.T) {
	path := makeDB(t)
	empty := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.db")
	notDB := writeFile(t, "not.db", strings.Repeat("this is not a database\n", 100))
	tests := []struct {
		name   string
		dsn    string
		code   int
		stderr string
	}{
		{"sqlite: prefix", "sqlite:" + path, exitOK, ""},
		{"sqlite:// prefix", "sqlite://" + path, exitOK, ""},
		{"plain path", path, exitOK, ""},
		{"empty database", empty, exitError, "schema mismatch"},
		{"missing file", missing, exitError, "missing.db"},
		{"not a database", notDB, exitError, "not a database"},
		{"postgres unreachable", "postgres://user@127.0.0.1:1/cluster?connect_timeout=2", exitError, "opening the database"},
		{"postgresql unreachable", "postgresql://127.0.0.1:1/cluster?sslmode=disable&connect_timeout=2", exitError, "opening the database"},
		{"other scheme", "mysql://localhost/cluster", exitError, "unsupported database"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, "solve", "--schema", quickPolicy, "--db", tc.dsn, "--timeout", "2s", "--format", "json", "--verify")
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr)
			}
			if code != exitOK {
				return
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
				if node, _ := r["node_name"].(string); !schedulable[node] {
					t.Errorf("pod %v on %v, not schedulable", r["pod_name"], r["node_name"])
				}
			}
		})
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("--db on a missing file created it (stat: %v)", err)
	}
	// The database is left as it was: verification rolls back, and the
	// decision column is still NULL.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("select count(*) from pending_pod where node_name is not null").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d pods have a node_name in the database after solving", n)
	}
}

// TestSolveText checks the text format: status, objective, soft values,
// the table aligned in schema column order, a stats line.
func TestSolveText(t *testing.T) {
	code, stdout, stderr := runCmd(t, "solve", "--schema", quickPolicy, "--data", quickState, "--timeout", "2s", "--seed", "3")
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	checks := []struct {
		line int
		re   string
	}{
		{0, `^status: (OPTIMAL|FEASIBLE)$`},
		{1, `^objective: \d+$`},
		{2, `^soft constraint_load_balance_cpu: \d+$`},
		{3, `^$`},
		{4, `^pending_pod \(12 rows\)$`},
		{5, `^pod_name +status +namespace +node_name +cpu_request +has_requested_node_affinity$`},
		{len(lines) - 1, `^stats: \d+ variables, \d+ constraints, 24 rows read; fetch \S+, ground \S+, solve \S+, extract \S+$`},
	}
	for _, c := range checks {
		if c.line >= len(lines) || !regexp.MustCompile(c.re).MatchString(lines[c.line]) {
			t.Errorf("line %d does not match %s:\n%s", c.line, c.re, stdout)
		}
	}
	header := lines[5]
	col := strings.Index(header, "node_name")
	rows := lines[6:18]
	for _, r := range rows {
		f := strings.Fields(r)
		if len(f) != 6 {
			t.Errorf("row %q has %d cells, want 6", r, len(f))
			continue
		}
		if !schedulable[f[3]] {
			t.Errorf("row %q: node %q not schedulable", r, f[3])
		}
		if !strings.HasPrefix(r[col:], f[3]) {
			t.Errorf("row %q: node_name not aligned under its header", r)
		}
	}
	if lines[18] != "" {
		t.Errorf("want a blank line after the 12 rows, got %q", lines[18])
	}
	// Same seed, same data: same output, stats aside.
	_, again, _ := runCmd(t, "solve", "--schema", quickPolicy, "--data", quickState, "--timeout", "2s", "--seed", "3")
	strip := func(s string) string { return s[:strings.LastIndex(s, "stats:")] }
	if strings.HasPrefix(stdout, "status: OPTIMAL") && strip(again) != strip(stdout) {
		t.Errorf("two solves with --seed 3 differ:\n%s\n---\n%s", stdout, again)
	}
}

// TestUsage checks help, bad commands, bad flags and flag combinations.
func TestUsage(t *testing.T) {
	tests := []struct {
		name         string
		args         []string
		code         int
		stdout, errs string
	}{
		{"help", []string{"help"}, 0, "Usage:", ""},
		{"-h", []string{"-h"}, 0, "Usage:", ""},
		{"--help", []string{"--help"}, 0, "Usage:", ""},
		{"solve -h", []string{"solve", "-h"}, 0, "Usage:", ""},
		{"check -h", []string{"check", "-h"}, 0, "Usage:", ""},
		{"no command", nil, 1, "", "Usage:"},
		{"unknown command", []string{"frobnicate"}, 1, "", `unknown command "frobnicate"`},
		{"unknown flag", []string{"solve", "--frob"}, 1, "", "flag provided but not defined: -frob"},
		{"unknown check flag", []string{"check", "--data", "x"}, 1, "", "flag provided but not defined: -data"},
		{"bad timeout", []string{"solve", "--schema", quickPolicy, "--data", quickState, "--timeout", "soon"}, 1, "", "invalid value"},
		{"negative timeout", []string{"solve", "--schema", quickPolicy, "--data", quickState, "--timeout", "-1s"}, 1, "", "negative"},
		{"bad format", []string{"solve", "--schema", quickPolicy, "--data", quickState, "--format", "xml"}, 1, "", "--format"},
		{"no schema", []string{"solve", "--data", quickState}, 1, "", "--schema is required"},
		{"no state", []string{"solve", "--schema", quickPolicy}, 1, "", "one of --data or --db is required"},
		{"data and db", []string{"solve", "--schema", quickPolicy, "--data", quickState, "--db", "x.db"}, 1, "", "mutually exclusive"},
		{"stray argument", []string{"solve", "--schema", quickPolicy, "--data", quickState, "extra"}, 1, "", `unexpected argument "extra"`},
		{"check no schema", []string{"check"}, 1, "", "--schema is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", code, tc.code, stderr)
			}
			if tc.stdout != "" && !strings.Contains(stdout, tc.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.stdout, stdout)
			}
			if tc.errs != "" && !strings.Contains(stderr, tc.errs) {
				t.Errorf("stderr lacks %q:\n%s", tc.errs, stderr)
			}
			if code == exitError && !strings.Contains(stderr, "Usage:") {
				t.Errorf("usage error without the usage on stderr:\n%s", stderr)
			}
			if code == exitOK && stderr != "" {
				t.Errorf("stderr not empty:\n%s", stderr)
			}
		})
	}
}

func keys(m map[string]any) []string { return sortedKeys(m) }

// isInt asserts that v is a JSON integer and returns it.
func isInt(t *testing.T, what string, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Errorf("%s = %v (%T), want an integer", what, v, v)
		return 0
	}
	i, err := n.Int64()
	if err != nil {
		t.Errorf("%s = %v, want an integer", what, n)
	}
	return i
}
