package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/weavesql/weave/backend/minizinc/mzntest"
)

func TestExplainCommand(t *testing.T) {
	code, stdout, stderr := runCmd(t, "explain", "--schema", quickPolicy, "--data", quickState, "--timeout", "2s")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"constraint_node_predicates", "hard", "candidate_nodes_for_pods", "pushdown", "evaluated by the database",
		"spare_capacity_per_node", "intermediate", "after presolve:", "model:", "after presolve  by kind"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("explain output lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, _ = runCmd(t, "explain", "--schema", quickPolicy, "--data", quickState, "--timeout", "2s", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var r report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, v := range r.Views {
		total += v.Constraints
		if v.Role == "pushdown" && v.Constraints != 0 {
			t.Errorf("pushed-down view %s contributed %d constraints", v.View, v.Constraints)
		}
		if v.Presolved > v.Constraints {
			t.Errorf("view %s: %d constraints after presolve, %d before", v.View, v.Presolved, v.Constraints)
		}
	}
	if total == 0 || total > r.Constraints {
		t.Errorf("per-view constraints sum to %d, model has %d", total, r.Constraints)
	}
	if r.Presolved.Constraints > r.Constraints || r.Presolved.Variables > r.Variables {
		t.Errorf("presolve grew the model: %+v", r)
	}
}

func TestBackendFlag(t *testing.T) {
	code, _, stderr := runCmd(t, "solve", "--schema", quickPolicy, "--data", quickState, "--backend", "bogus")
	if code != exitError || !strings.Contains(stderr, "unknown --backend") {
		t.Fatalf("bogus backend: exit %d, stderr %s", code, stderr)
	}
	mzntest.Require(t)
	native, nout, _ := runCmd(t, "solve", "--schema", quickPolicy, "--data", quickState, "--timeout", "5s", "--format", "json")
	mzn, mout, merr := runCmd(t, "solve", "--schema", quickPolicy, "--data", quickState, "--timeout", "10s", "--format", "json", "--backend", "minizinc", "--verify")
	if native != exitOK || mzn != exitOK {
		t.Fatalf("exit native %d, minizinc %d: %s", native, mzn, merr)
	}
	var a, b struct {
		Status    string `json:"status"`
		Objective int64  `json:"objective"`
	}
	json.Unmarshal([]byte(nout), &a)
	json.Unmarshal([]byte(mout), &b)
	if a.Status == "OPTIMAL" && b.Status == "OPTIMAL" && a.Objective != b.Objective {
		t.Errorf("both backends prove optimality but disagree: native %d, minizinc %d", a.Objective, b.Objective)
	}
}
