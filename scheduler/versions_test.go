package scheduler

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
)

func TestWrittenTable(t *testing.T) {
	for _, c := range []struct {
		q     string
		table string
	}{
		{"insert into pod_label values ($1, $2, $3)", "pod_label"},
		{"insert into node_usage (node_name, cpu_request) select ...", "node_usage"},
		{"insert into node_sample_node(node_name) values ($1)", "node_sample_node"},
		{"delete from node where name = $1", "node"},
		{"delete from batch_pod", "batch_pod"},
		{"update pod set phase = $1 where name = $2", "pod"},
		{"INSERT INTO Node_Label VALUES ($1)", "node_label"},
		{"\n  insert\n\tinto  pod_toleration\nvalues ($1)", "pod_toleration"},
		{"delete from", ""},
		{`insert into "pod" values ($1)`, ""},
		{"insert into weave.pod values ($1)", ""},
		{"with x as (select 1) insert into pod select * from x", ""},
		{"analyze", ""},
		{"", ""},
	} {
		got, ok := writtenTable(c.q)
		if ok != (c.table != "") || got != c.table {
			t.Errorf("writtenTable(%q) = %q, %v; want %q", c.q, got, ok, c.table)
		}
	}
}

// A scheduler that takes unchanged tables from its last solve
// (weave.SolveOptions.TableVersions) places every batch as one that reads
// every table, while nodes change between batches: labels, taints,
// cordons, nodes added and deleted. The pods ask for those labels
// (nodeSelector), tolerate or not the taints, spread over zones, stay in
// their app's zone and take
// room, so a stale node or node_label table would place one elsewhere or
// where it does not fit. The reusing scheduler must have reused node tables.
func TestTableReusePlacesAsRereading(t *testing.T) {
	ctx := context.Background()
	reread := newTest(t, Config{})
	reread.rereadTables = true
	reusing := newTest(t, Config{})
	both := func(f func(s *Scheduler)) { f(reread); f(reusing) }
	rng := rand.New(rand.NewSource(11))
	node := func(i int) Node {
		n := Node{Name: fmt.Sprintf("n%02d", i), Zone: fmt.Sprintf("z%d", i%3), CPU: int64(2000 + 500*rng.Intn(4)), Memory: 8192,
			Labels: map[string]string{"disk": []string{"ssd", "hdd"}[rng.Intn(2)]}}
		if rng.Intn(4) == 0 {
			n.Taints = []Taint{{Key: "dedicated", Value: "batch", Effect: "NoSchedule"}}
		}
		n.Unschedulable = rng.Intn(8) == 0
		return n
	}
	for i := range 10 {
		n := node(i)
		both(func(s *Scheduler) { addNodes(t, s, n) })
	}
	steps, reused := 30, map[string]int{}
	if raceDetector {
		steps = 8 // race_on_test.go
	}
	for step := range steps {
		switch rng.Intn(6) {
		case 0: // a node's labels, taints or cordon change, or it is replaced
			n := node(rng.Intn(12))
			both(func(s *Scheduler) { addNodes(t, s, n) })
		case 1:
			name := fmt.Sprintf("n%02d", rng.Intn(12))
			both(func(s *Scheduler) {
				if s.State().Nodes[name] != nil {
					if err := s.DeleteNode(ctx, name); err != nil {
						t.Fatal(err)
					}
				}
			})
		}
		for i := range 1 + rng.Intn(3) {
			p := Pod{Name: fmt.Sprintf("p%d-%d", step, i), CPU: int64(100 + 100*rng.Intn(8)), Memory: 256,
				NodeSelector: map[string]string{"disk": []string{"ssd", "hdd"}[rng.Intn(2)]}}
			if rng.Intn(2) == 0 { // node_label is read for the terms' domains
				app := map[string]string{"app": fmt.Sprint("a", rng.Intn(3))}
				p.Labels = app
				p.Spread = []SpreadConstraint{{TopologyKey: LabelZone, MaxSkew: 1, Hard: true, Selector: &LabelSelector{MatchLabels: app}}}
				p.Affinity = []PodAffinityTerm{{Required: true, Selector: &LabelSelector{MatchLabels: app}, TopologyKey: LabelZone}}
			}
			if rng.Intn(3) == 0 {
				p.Tolerations = []Toleration{{Key: "dedicated", Operator: "Equal", Value: "batch", Effect: "NoSchedule"}}
			}
			both(func(s *Scheduler) { addPods(t, s, p) })
		}
		a, ua := schedule(t, reread)
		b, ub := schedule(t, reusing)
		if fmt.Sprint(a, ua) != fmt.Sprint(b, ub) {
			t.Fatalf("step %d: reading every table placed %v (unschedulable %v), reusing tables %v (%v)", step, a, ua, b, ub)
		}
		if len(reread.LastStats().Reused) != 0 {
			t.Fatalf("step %d: the scheduler reading every table reused %v", step, reread.LastStats().Reused)
		}
		for _, table := range reusing.LastStats().Reused {
			reused[table]++
		}
	}
	if reused["node"] == 0 || reused["node_label"] == 0 {
		t.Fatalf("reused %v: the test compares nothing", reused)
	}
	t.Logf("batches reusing each table, of %d: %v", steps, reused)
}
