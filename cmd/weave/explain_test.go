package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// An infeasible solve explains itself: in JSON under "explanation", in
// text after the status, and exits 2.
func TestInfeasibleExplanation(t *testing.T) {
	code, stdout, stderr := runCmd(t, "solve", "--schema", quickPolicy, "--data", quickInfeasible, "--timeout", "2s", "--format", "json")
	if code != exitInfeasible {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitInfeasible, stderr)
	}
	var out struct {
		Explanation struct {
			Minimal     bool `json:"minimal"`
			Constraints []struct {
				View string `json:"view"`
				Rows []struct {
					Table string         `json:"table"`
					Row   map[string]any `json:"row"`
				} `json:"rows"`
			} `json:"constraints"`
		} `json:"explanation"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	e := out.Explanation
	if !e.Minimal || len(e.Constraints) == 0 {
		t.Fatalf("explanation %+v", e)
	}
	named := false
	for _, c := range e.Constraints {
		for _, r := range c.Rows {
			if r.Table == "pending_pod" && r.Row["pod_name"] == "gpu-job" {
				named = true
			}
		}
	}
	if !named {
		t.Errorf("the explanation does not name the gpu-job pod: %s", stdout)
	}
	code, stdout, _ = runCmd(t, "solve", "--schema", quickPolicy, "--data", quickInfeasible, "--timeout", "2s")
	if code != exitInfeasible || !strings.Contains(stdout, "no solution: these constraints conflict") || !strings.Contains(stdout, "gpu-job") {
		t.Errorf("text explanation missing:\n%s", stdout)
	}
}

// The paper's capacity style (a hard filter over the grouped view
// spare_capacity_per_node), infeasible: weave solve prints one conflict a
// line, naming the node (the group key) and the pods, and the JSON form
// carries the same items; with the state in a file (SQLite) and in
// PostgreSQL.
func TestInfeasibleExplanationOneConflictPerLine(t *testing.T) {
	policy, line := paperCapacityPolicy(t)
	data := writeFile(t, "state.sql", paperCapacityInfeasible)
	oneConflictPerLine(t, line, "--schema", policy, "--data", data)
}

func TestInfeasibleExplanationOneConflictPerLinePostgres(t *testing.T) {
	dsn, db := postgresDB(t)
	policy, line := paperCapacityPolicy(t)
	model, err := compileFile(policy)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := model.CreateSchema(ctx, db); err != nil {
		t.Fatal(err)
	}
	if err := runScript(ctx, db, "state.sql", paperCapacityInfeasible); err != nil {
		t.Fatal(err)
	}
	oneConflictPerLine(t, line, "--schema", policy, "--db", dsn)
}

// paperCapacityInfeasible puts three 3-cpu pods on two 4-cpu nodes.
const paperCapacityInfeasible = `
insert into node values ('n1', false, false, false, true, 4), ('n2', false, false, false, true, 4);
insert into pending_pod values ('p1', 'Pending', 'default', null, 3, false), ('p2', 'Pending', 'default', null, 3, false),
  ('p3', 'Pending', 'default', null, 3, false);
`

// paperCapacityPolicy writes testdata/paper.sql with the capacity filter
// and returns its path and the line of constraint_capacity.
func paperCapacityPolicy(t *testing.T) (string, int) {
	src, err := os.ReadFile(paperPolicy)
	if err != nil {
		t.Fatal(err)
	}
	text := string(src) + paperCapacityFilter
	line := 0
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "create view constraint_capacity") {
			line = i + 1
		}
	}
	return writeFile(t, "capacity.sql", text), line
}

func oneConflictPerLine(t *testing.T, line int, state ...string) {
	args := append([]string{"solve", "--timeout", "2s"}, state...)
	code, stdout, stderr := runCmd(t, args...)
	if code != exitInfeasible {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitInfeasible, stderr)
	}
	lines := strings.Split(stdout, "\n")
	want := []string{
		"status: INFEASIBLE",
		"no solution: these constraints conflict (each one is needed):",
		fmt.Sprintf("  constraint_capacity (line %d) for node n1 (available_cpu_capacity=4) in spare_capacity_per_node: pending_pod p1 (cpu_request=3), p2 (cpu_request=3), p3 (cpu_request=3)", line),
		fmt.Sprintf("  constraint_capacity (line %d) for node n2 (available_cpu_capacity=4) in spare_capacity_per_node: pending_pod p1 (cpu_request=3), p2 (cpu_request=3), p3 (cpu_request=3)", line),
	}
	if len(lines) < len(want)+1 || !slices.Equal(lines[:len(want)], want) || !strings.HasPrefix(lines[len(want)], "stats: ") {
		t.Fatalf("stdout:\n%s\nwant:\n%s\nstats: ...", stdout, strings.Join(want, "\n"))
	}

	code, stdout, stderr = runCmd(t, append(args, "--format", "json")...)
	if code != exitInfeasible {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitInfeasible, stderr)
	}
	var out struct {
		Explanation struct {
			Minimal     bool `json:"minimal"`
			Constraints []struct {
				View  string `json:"view"`
				Line  int    `json:"line"`
				Items []struct {
					Groups []struct {
						View   string         `json:"view"`
						Key    map[string]any `json:"key"`
						Table  string         `json:"table"`
						RowKey string         `json:"row_key"`
					} `json:"groups"`
					Rows []struct {
						Table string         `json:"table"`
						Role  string         `json:"role"`
						Key   string         `json:"key"`
						Row   map[string]any `json:"row"`
						Read  []string       `json:"read"`
					} `json:"rows"`
				} `json:"items"`
			} `json:"constraints"`
		} `json:"explanation"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	e := out.Explanation
	if !e.Minimal || len(e.Constraints) != 1 || e.Constraints[0].View != "constraint_capacity" || e.Constraints[0].Line != line {
		t.Fatalf("explanation %+v", e)
	}
	var got []string
	for _, it := range e.Constraints[0].Items {
		var parts []string
		for _, g := range it.Groups {
			parts = append(parts, fmt.Sprintf("group %s name=%v of %s %s", g.View, g.Key["name"], g.Table, g.RowKey))
		}
		for _, r := range it.Rows {
			parts = append(parts, fmt.Sprintf("%s %s %s %v", r.Role, r.Table, r.Key, r.Read))
		}
		got = append(got, strings.Join(parts, "; "))
	}
	wantItems := []string{
		"group spare_capacity_per_node name=n1 of node n1; data node n1 [available_cpu_capacity]; decision pending_pod p1 [cpu_request]; decision pending_pod p2 [cpu_request]; decision pending_pod p3 [cpu_request]",
		"group spare_capacity_per_node name=n2 of node n2; data node n2 [available_cpu_capacity]; decision pending_pod p1 [cpu_request]; decision pending_pod p2 [cpu_request]; decision pending_pod p3 [cpu_request]",
	}
	if !slices.Equal(got, wantItems) {
		t.Errorf("items:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantItems, "\n"))
	}
}
