package scheduler

import (
	"fmt"
	"sort"
	"testing"
)

// rackCluster has racks racks of perRack nodes of 8 GPUs (rack label
// r00, r01, ...), and a scheduler that samples sample nodes per batch.
func rackCluster(t *testing.T, racks, perRack, sample int) *Scheduler {
	t.Helper()
	s := newTest(t, Config{NodeSample: sample, BatchSize: 64})
	for r := 0; r < racks; r++ {
		for i := 0; i < perRack; i++ {
			addNodes(t, s, gpuNode(fmt.Sprintf("r%02d-n%d", r, i), fmt.Sprintf("r%02d", r), 8))
		}
	}
	return s
}

// sampledRacks returns the racks of the nodes of the sample of the batch
// just solved (node_sample_node: a batch of PodGroups lists its nodes),
// each with its count of sampled nodes.
func sampledRacks(t *testing.T, s *Scheduler) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, n := range queryStrings(t, s.DB(), "select node_name from sampled_node") {
		out[s.state.Nodes[n].Labels["rack"]]++
	}
	return out
}

// scheduleRackGang adds PodGroup g (two 1-GPU pods, rack constraint) and
// schedules batch b, which must place both.
func scheduleRackGang(t *testing.T, s *Scheduler, b int, g string) map[string]string {
	t.Helper()
	addGroups(t, s, PodGroup{Name: g, MinCount: 2, TopologyKey: "rack"})
	addPods(t, s, gangPod(g+"-0", g, 1), gangPod(g+"-1", g, 1))
	placed, us := schedule(t, s)
	if len(placed) != 2 || len(us) != 0 {
		t.Fatalf("batch %d: placed %v, unschedulable %v", b, placed, us)
	}
	return placed
}

// inRack checks that batch b placed every pod on a node of rack want.
func inRack(t *testing.T, s *Scheduler, b int, placed map[string]string, want string) {
	t.Helper()
	for name, n := range placed {
		if r := s.state.Nodes[n].Labels["rack"]; r != want {
			t.Errorf("batch %d: %s on rack %s, want %s", b, name, r, want)
		}
	}
}

// A batch of PodGroups with a rack constraint samples whole racks: every
// node of a sampled rack, at least the sample's size, fewer than all, and
// the next batch takes the racks after them, so that batches go round the
// racks as arcs go round the nodes. Each gang stays in one rack.
func TestDomainSampleTakesWholeRacksInTurn(t *testing.T) {
	t.Parallel()
	const racks, perRack, sample = 12, 5, 20
	s := rackCluster(t, racks, perRack, sample)
	seen := map[string]int{}
	for b := 0; b < 6; b++ {
		g := fmt.Sprintf("b%d", b)
		placed := scheduleRackGang(t, s, b, g)
		got := sampledRacks(t, s)
		total := 0
		for rack, n := range got {
			if n != perRack {
				t.Errorf("batch %d: %d of rack %s's %d nodes sampled", b, n, rack, perRack)
			}
			total += n
			seen[rack]++
		}
		if total < sample || total >= racks*perRack {
			t.Errorf("batch %d: %d nodes sampled, want at least %d and fewer than %d", b, total, sample, racks*perRack)
		}
		r0, r1 := s.state.Nodes[placed[g+"-0"]].Labels["rack"], s.state.Nodes[placed[g+"-1"]].Labels["rack"]
		if r0 != r1 || got[r0] == 0 {
			t.Errorf("batch %d: the gang on racks %s and %s, sampled %v", b, r0, r1, got)
		}
	}
	// Six batches of four racks each (20 nodes) over twelve racks: every
	// rack is taken, each about twice; a fixed sample would take four.
	if len(seen) != racks {
		var rs []string
		for r := range seen {
			rs = append(rs, r)
		}
		sort.Strings(rs)
		t.Errorf("racks sampled over six batches: %v, want all %d", rs, racks)
	}
}

// The rack of a group's bound members is in its sample, whichever racks
// the turn comes to: a member placed later must join them there.
func TestDomainSampleHoldsTheBoundMembersRack(t *testing.T) {
	t.Parallel()
	s := rackCluster(t, 12, 5, 20)
	addGroups(t, s, PodGroup{Name: "g", MinCount: 1, TopologyKey: "rack"})
	for b := 0; b < 6; b++ {
		addPods(t, s, gangPod(fmt.Sprintf("g-%d", b), "g", 1))
		if b > 0 {
			// The sample itself (the batch would fall back to every node
			// if it lacked the rack, and still place the pod there).
			home := s.state.Nodes[s.state.Pods["g-0"].NodeName].Labels["rack"]
			at := s.sampleAt
			a := s.domainArc(s.queue(), "rack", 20)
			s.sampleAt = at
			in := 0
			for _, n := range a.extra {
				if s.state.Nodes[n].Labels["rack"] == home {
					in++
				}
			}
			if a.whole() || in != 5 {
				t.Errorf("batch %d: %d of the members' rack %s's 5 nodes in the sample %v", b, in, home, a.extra)
			}
		}
		placed, us := schedule(t, s)
		if len(placed) != 1 || len(us) != 0 {
			t.Fatalf("batch %d: placed %v, unschedulable %v", b, placed, us)
		}
		inRack(t, s, b, placed, s.state.Nodes[s.state.Pods["g-0"].NodeName].Labels["rack"])
	}
}

// A gang that fits in no sampled rack is solved again over every node:
// the only rack with room is found, as without sampling.
func TestDomainSampleFallsBackToEveryNode(t *testing.T) {
	t.Parallel()
	s := rackCluster(t, 12, 5, 20)
	// Fill every rack but one: a running 8-GPU pod on each node.
	free := "r07"
	for r := 0; r < 12; r++ {
		rack := fmt.Sprintf("r%02d", r)
		if rack == free {
			continue
		}
		for i := 0; i < 5; i++ {
			addPods(t, s, Pod{Name: fmt.Sprintf("full-%s-%d", rack, i), CPU: 100, Memory: 100,
				Resources: map[string]int64{gpu: 8}, NodeName: fmt.Sprintf("%s-n%d", rack, i), Phase: PhaseRunning})
		}
	}
	for b := 0; b < 3; b++ { // whichever racks each batch's turn samples
		g := fmt.Sprintf("b%d", b)
		placed := scheduleRackGang(t, s, b, g)
		inRack(t, s, b, placed, free)
	}
}

// Groups with two topology keys in one batch consider every node.
func TestDomainSampleWithTwoKeysTakesEveryNode(t *testing.T) {
	t.Parallel()
	s := rackCluster(t, 12, 5, 20)
	for _, name := range sortedKeys(s.state.Nodes) {
		n := *s.state.Nodes[name]
		n.Labels = map[string]string{"rack": n.Labels["rack"], "zone": "z" + n.Labels["rack"][2:]}
		addNodes(t, s, n)
	}
	addGroups(t, s, PodGroup{Name: "a", MinCount: 1, TopologyKey: "rack"}, PodGroup{Name: "b", MinCount: 1, TopologyKey: "zone"})
	addPods(t, s, gangPod("a-0", "a", 1), gangPod("b-0", "b", 1))
	if a := s.nextArc(s.queue()); !a.whole() {
		t.Fatalf("a sample of %d nodes for groups of two keys, want every node", len(a.extra))
	}
}
