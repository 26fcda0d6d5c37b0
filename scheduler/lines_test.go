package scheduler

import (
	"fmt"
	"os"
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

// TestDocPolicyTable: the policies table of docs/scheduler.md has a row
// per registered policy, and its plugin, kind, file, count of SQL lines
// and models are the registry's and the file's.
func TestDocPolicyTable(t *testing.T) {
	const page = "../docs/scheduler.md"
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Split(line, " | "); len(f) == 6 && strings.HasPrefix(f[3], "`sql/policies/") {
			rows[strings.Trim(f[3], "`")] = line
		}
	}
	for _, p := range Policies {
		kind := "soft"
		if p.Hard {
			kind = "hard"
		}
		models := make([]string, len(p.Models))
		for i, m := range p.Models {
			models[i] = string(m)
		}
		want := fmt.Sprintf("| %s | %s | %s | `sql/policies/%s` | %d | %s |", p.ID, p.Plugin, kind, p.File, p.Lines(), strings.Join(models, ", "))
		if got, ok := rows["sql/policies/"+p.File]; !ok {
			t.Errorf("%s has no row for %s; want\n%s", page, p.File, want)
		} else if got != want {
			t.Errorf("%s: the row for %s:\n%s\nwant\n%s", page, p.File, got, want)
		}
		delete(rows, "sql/policies/"+p.File)
	}
	for f := range rows {
		t.Errorf("%s has a row for %s, which is not registered", page, f)
	}
}

// TestPlacementModelReadsTheBatch: the placement model reads the pending
// pods of the batch and per-node views, never the pod table nor the tables
// of every pod's terms and selections.
func TestPlacementModelReadsTheBatch(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{})
	addNodes(t, s, Node{Name: "n1", CPU: 4000, Memory: 4000})
	web := SelectLabels(map[string]string{"app": "web"})
	for i := 0; i < 30; i++ {
		addPods(t, s, Pod{Name: "r" + string(rune('a'+i)), CPU: 10, NodeName: "n1", Phase: PhaseRunning, Labels: map[string]string{"app": "web"},
			Affinity: []PodAffinityTerm{{Anti: true, Required: true, Selector: web, TopologyKey: LabelZone}},
			Spread:   []SpreadConstraint{{TopologyKey: LabelHostname, MaxSkew: 1, Hard: true, Selector: web}}})
	}
	addPods(t, s, Pod{Name: "p", CPU: 10, Labels: map[string]string{"app": "db"},
		Spread: []SpreadConstraint{{TopologyKey: LabelHostname, MaxSkew: 1, Hard: true, Selector: web}}})
	schedule(t, s)
	rows := s.LastStats().Rows
	for _, table := range []string{"pod", "pod_match", "pod_affinity_term", "pod_spread_constraint", "pod_label"} {
		if _, ok := rows[table]; ok {
			t.Errorf("the placement model reads the table %s: %v", table, rows)
		}
	}
	if rows["pending_pod"] != 1 || rows["node_free"] != 1 {
		t.Errorf("rows read %v", rows)
	}
}
