package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestCheck checks that check lists every view with its role and the
// decision columns.
func TestCheck(t *testing.T) {
	wantRoles := []struct{ view, role string }{
		{"candidate_nodes_for_pods", "pushdown"},
		{"constraint_node_predicates", "hard"},
		{"spare_capacity_per_node", "intermediate"},
		{"constraint_load_balance_cpu", "soft"},
		{"constraint_node_affinity", "hard"},
	}
	t.Run("text", func(t *testing.T) {
		code, stdout, stderr := runCmd(t, "check", "--schema", quickPolicy)
		if code != exitOK {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		last := -1
		for _, w := range wantRoles {
			re := regexp.MustCompile(`(?m)^` + w.view + ` +` + w.role + ` +\d+$`)
			loc := re.FindStringIndex(stdout)
			if loc == nil {
				t.Errorf("no line %q with role %q:\n%s", w.view, w.role, stdout)
				continue
			}
			if loc[0] < last {
				t.Errorf("view %s out of schema order", w.view)
			}
			last = loc[0]
		}
		if !regexp.MustCompile(`(?m)^decision columns:\n  pending_pod\.node_name\n$`).MatchString(stdout) {
			t.Errorf("decision columns not listed:\n%s", stdout)
		}
	})
	t.Run("json", func(t *testing.T) {
		code, stdout, stderr := runCmd(t, "check", "--schema", quickPolicy, "--format", "json")
		if code != exitOK {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		var out struct {
			Views []struct {
				Name, Role string
				Line       int
			} `json:"views"`
			VariableColumns []string `json:"variable_columns"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatalf("%v\n%s", err, stdout)
		}
		if len(out.Views) != len(wantRoles) {
			t.Fatalf("views %v, want %v", out.Views, wantRoles)
		}
		for i, w := range wantRoles {
			if out.Views[i].Name != w.view || out.Views[i].Role != w.role || out.Views[i].Line <= 0 {
				t.Errorf("view %d = %+v, want %s %s", i, out.Views[i], w.view, w.role)
			}
		}
		if strings.Join(out.VariableColumns, ",") != "pending_pod.node_name" {
			t.Errorf("variable_columns = %v", out.VariableColumns)
		}
	})
	t.Run("no decision columns", func(t *testing.T) {
		schema := writeFile(t, "p.sql", "create table node (name varchar(10) not null primary key);\ncreate view names as select name from node;\n")
		code, stdout, _ := runCmd(t, "check", "--schema", schema)
		if code != exitOK || !strings.Contains(stdout, "names") || !strings.Contains(stdout, "pushdown") || !strings.Contains(stdout, "(none") {
			t.Errorf("exit %d:\n%s", code, stdout)
		}
	})
}
