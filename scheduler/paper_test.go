package scheduler

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Fig. 2: two nodes, three pods. Greedy (b = 1) with kube-scheduler's
// scoring (without N4, which keeps the roomiest node for large pods) puts
// the first pod on the emptier node and cannot place the third; a batch
// places all three.
func TestFig2GreedyFailsBatchingSucceeds(t *testing.T) {
	t.Parallel()
	run := func(b int) int {
		cfg := Config{BatchSize: b}
		if b == 1 {
			// Greedy fails only if each pod goes where the scores say:
			// the solver waits up to 1 s for a better node, not 5 ms
			// (under -race on a loaded machine it kept the first one).
			cfg.DisabledPolicies, cfg.ImprovementTimeout = []string{"N4"}, time.Second
		}
		s := newTest(t, cfg)
		addNodes(t, s, Node{Name: "n1", CPU: 4000, Memory: 4000}, Node{Name: "n2", CPU: 3000, Memory: 3000})
		addPods(t, s, Pod{Name: "p1", CPU: 2000, Memory: 2000}, Pod{Name: "p2", CPU: 2000, Memory: 2000}, Pod{Name: "p3", CPU: 3000, Memory: 3000})
		placed := 0
		for i := 0; i < 3; i++ {
			got, _ := schedule(t, s)
			placed += len(got)
			if len(s.Pending()) == 0 {
				break
			}
			if b == 1 && len(got) == 0 {
				// Like kube-scheduler, the pod goes back to the queue;
				// drop it so the next one is tried.
				s.DeletePod(context.Background(), s.Pending()[0])
			}
		}
		return placed
	}
	if got := run(1); got != 2 {
		t.Errorf("one pod at a time placed %d pods, want 2 (greedy fails)", got)
	}
	if got := run(3); got != 3 {
		t.Errorf("a batch of 3 placed %d pods, want 3", got)
	}
}

// Fig. 3: pod 1 (high priority) may only go to node 1 (node affinity) and
// is anti-affine in the zone with pod 2 (low priority), which runs on node
// 2 in the same zone. Placing pod 1 needs the eviction of pod 2 on
// another node: cross-node preemption.
// addFig3 adds Fig. 3's cluster to s: three nodes (node1 and node2 in zone
// z1, node1 the only one with disk=ssd), pod2 (priority 1, app=db,
// anti-affine to app=db in its zone) running on node2, another low pod on
// node3, and pending pod1 (priority 10, app=db, same anti-affinity, needs
// disk=ssd).
func addFig3(t testing.TB, s *Scheduler) {
	t.Helper()
	addNodes(t, s,
		Node{Name: "node1", CPU: 4000, Memory: 4000, Zone: "z1", Labels: map[string]string{"disk": "ssd"}},
		Node{Name: "node2", CPU: 4000, Memory: 4000, Zone: "z1"},
		Node{Name: "node3", CPU: 4000, Memory: 4000, Zone: "z2"})
	anti := PodAffinityTerm{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"app": "db"}), TopologyKey: LabelZone}
	addPods(t, s,
		Pod{Name: "pod2", CPU: 1000, Memory: 1000, Priority: 1, NodeName: "node2", Phase: PhaseRunning,
			Labels: map[string]string{"app": "db"}, Affinity: []PodAffinityTerm{anti}},
		Pod{Name: "other", CPU: 1000, Memory: 1000, Priority: 1, NodeName: "node3", Phase: PhaseRunning},
		Pod{Name: "pod1", CPU: 1000, Memory: 1000, Priority: 10, NodeSelector: map[string]string{"disk": "ssd"},
			Labels: map[string]string{"app": "db"}, Affinity: []PodAffinityTerm{anti}})
}

func TestFig3CrossNodePreemption(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{})
	ctx := context.Background()
	addFig3(t, s)
	placed, us := schedule(t, s)
	if len(placed) != 0 || len(us) != 1 {
		t.Fatalf("the placement model should not place pod1: %v %v", placed, us)
	}
	bs, ev, us, err := s.Preempt(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 1 || bs[0] != (Binding{"pod1", "node1"}) || len(ev) != 1 || ev[0] != (Eviction{"pod2", "node2"}) || len(us) != 0 {
		t.Fatalf("bindings %v evictions %v unschedulable %v; want pod1 → node1 evicting pod2 on node2", bs, ev, us)
	}
	if _, ok := s.State().Pods["other"]; !ok {
		t.Error("an unrelated low-priority pod was evicted")
	}
}

// Kubernetes issue 40358: at most 2 pods of a group per node, 50 nodes.
func TestMaxTwoPerNode(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{BatchSize: 100, Timeout: 3 * time.Second})
	for i := 0; i < 50; i++ {
		addNodes(t, s, Node{Name: fmt.Sprintf("n%02d", i), CPU: 64000, Memory: 64000})
	}
	for i := 0; i < 110; i++ {
		addPods(t, s, Pod{Name: fmt.Sprintf("build-%03d", i), Group: "ci", MaxPerNode: 2, CPU: 100, Memory: 100})
	}
	total := 0
	for len(s.Pending()) > 0 {
		placed, us := schedule(t, s)
		total += len(placed)
		if len(placed) == 0 {
			if len(us) != 10 {
				t.Fatalf("%d unschedulable, want the 10 beyond 2 × 50", len(us))
			}
			break
		}
	}
	if total != 100 {
		t.Fatalf("placed %d, want 100", total)
	}
	per := map[string]int{}
	for _, p := range s.State().Pods {
		if p.NodeName != "" {
			per[p.NodeName]++
		}
	}
	for n, c := range per {
		if c > 2 {
			t.Errorf("%s holds %d pods of the group", n, c)
		}
	}
}

// Even spreading (N2, max_skew 0): ceil(pods / zones) per zone, and the
// kube maxSkew form (N3) over nodes.
func TestEvenSpreading(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{Timeout: 3 * time.Second})
	for i := 0; i < 6; i++ {
		addNodes(t, s, Node{Name: fmt.Sprintf("n%d", i), CPU: 64000, Memory: 64000, Zone: fmt.Sprintf("z%d", i%3)})
	}
	for i := 0; i < 7; i++ {
		addPods(t, s, Pod{Name: fmt.Sprintf("web-%d", i), Group: "web", CPU: 100, Memory: 100,
			Spread: []SpreadConstraint{{TopologyKey: LabelZone, Hard: true}}})
		addPods(t, s, Pod{Name: fmt.Sprintf("api-%d", i), Group: "api", CPU: 100, Memory: 100,
			Spread: []SpreadConstraint{{TopologyKey: LabelHostname, MaxSkew: 1, Hard: true}}})
	}
	placed, us := schedule(t, s)
	if len(placed) != 14 || len(us) != 0 {
		t.Fatalf("placed %d, unschedulable %v", len(placed), us)
	}
	zone, node := map[string]int{}, map[string]int{}
	st := s.State()
	for p, n := range placed {
		if st.Pods[p].Group == "web" {
			zone[st.Nodes[n].Zone]++
		} else {
			node[n]++
		}
	}
	for z, c := range zone {
		if c > 3 {
			t.Errorf("zone %s holds %d web pods, want at most ceil(7/3) = 3", z, c)
		}
	}
	lo, hi := 99, 0
	for i := 0; i < 6; i++ {
		c := node[fmt.Sprintf("n%d", i)]
		lo, hi = min(lo, c), max(hi, c)
	}
	if hi-lo > 1 {
		t.Errorf("api pods per node %v: skew %d > 1", node, hi-lo)
	}
}

// One unplaceable pod does not block its batch.
func TestUnplaceablePodDoesNotBlock(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{})
	addNodes(t, s, Node{Name: "n1", CPU: 2000, Memory: 2000})
	addPods(t, s, Pod{Name: "a", CPU: 500, Memory: 500}, Pod{Name: "huge", CPU: 9000, Memory: 500},
		Pod{Name: "b", CPU: 500, Memory: 500}, Pod{Name: "gpu", NodeSelector: map[string]string{"gpu": "yes"}})
	placed, us := schedule(t, s)
	if len(placed) != 2 || len(us) != 2 {
		t.Fatalf("placed %v unschedulable %v", placed, us)
	}
}
