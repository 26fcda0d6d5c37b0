package scheduler

import (
	"strings"
	"testing"
)

// TestPolicyFiles: every file is registered, states what it enforces and
// which plugin it mirrors in its header, and stays under 20 lines of SQL.
func TestPolicyFiles(t *testing.T) {
	reg := map[string]bool{}
	for _, p := range Policies {
		reg[p.File] = true
		if n := p.Lines(); n >= 20 {
			t.Errorf("%s has %d lines of SQL", p.File, n)
		}
		if !strings.HasPrefix(p.Source(), "-- "+p.ID+" (") {
			t.Errorf("%s: header should start with -- %s (plugin)", p.File, p.ID)
		}
	}
	for _, f := range policyFiles() {
		if !reg[f] {
			t.Errorf("%s is not in the registry", f)
		}
	}
}

// TestPlacementModelReadsTheBatch: the placement model reads the pending
// pods of the batch and per-node views, never the pod table.
func TestPlacementModelReadsTheBatch(t *testing.T) {
	s := newTest(t, Config{})
	addNodes(t, s, Node{Name: "n1", CPU: 4000, Memory: 4000})
	for i := 0; i < 30; i++ {
		addPods(t, s, Pod{Name: "r" + string(rune('a'+i)), CPU: 10, NodeName: "n1", Phase: PhaseRunning})
	}
	addPods(t, s, Pod{Name: "p", CPU: 10})
	schedule(t, s)
	rows := s.LastStats().Rows
	if _, ok := rows["pod"]; ok {
		t.Errorf("the placement model reads the pod table: %v", rows)
	}
	if rows["pending_pod"] != 1 || rows["node_free"] != 1 {
		t.Errorf("rows read %v", rows)
	}
}
