package main

import (
	"encoding/json"
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
