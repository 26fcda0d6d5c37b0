package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

func gpuNode(name, rack string, gpus int64) Node {
	return Node{Name: name, CPU: 64000, Memory: 256000, Labels: map[string]string{"rack": rack},
		Resources: map[string]int64{gpu: gpus}}
}

func gangPod(name, group string, gpus int64) Pod {
	return Pod{Name: name, PodGroup: group, CPU: 100, Memory: 100, Resources: map[string]int64{gpu: gpus}}
}

func addGroups(t testing.TB, s *Scheduler, gs ...PodGroup) {
	t.Helper()
	for _, g := range gs {
		if err := s.UpsertPodGroup(context.Background(), g); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGangStranding is Kueue issue #4474: nodes with 2, 1 and 1 GPUs; job
// A is 2 pods × 1 GPU, job B 1 pod × 2 GPUs. Placing A greedily on the
// 2-GPU node strands B; deciding both together places both, with and
// without a rack topology constraint, whichever job arrives first.
func TestGangStranding(t *testing.T) {
	t.Parallel()
	for _, topo := range []string{"", "rack"} {
		for _, aFirst := range []bool{true, false} {
			t.Run(fmt.Sprintf("topology=%q/aFirst=%v", topo, aFirst), func(t *testing.T) {
				s := newTest(t, Config{})
				addNodes(t, s, gpuNode("big", "r1", 2), gpuNode("small-1", "r1", 1), gpuNode("small-2", "r1", 1))
				addGroups(t, s, PodGroup{Name: "A", MinCount: 2, TopologyKey: topo}, PodGroup{Name: "B", MinCount: 1, TopologyKey: topo})
				a := []Pod{gangPod("a-0", "A", 1), gangPod("a-1", "A", 1)}
				b := gangPod("b-0", "B", 2)
				if aFirst {
					addPods(t, s, append(a, b)...)
				} else {
					addPods(t, s, append([]Pod{b}, a...)...)
				}
				placed, us := schedule(t, s)
				if len(placed) != 3 || placed["b-0"] != "big" {
					t.Fatalf("placed %v, unschedulable %v", placed, us)
				}
			})
		}
	}
}

// TestGangAllOrNothing: a gang that cannot have minCount pods placed gets
// none (its GPUs stay free for a gang that fits); a basic group's pods
// are placed as they fit.
func TestGangAllOrNothing(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{})
	addNodes(t, s, gpuNode("n1", "r1", 2), gpuNode("n2", "r1", 1))
	addGroups(t, s, PodGroup{Name: "big", MinCount: 4}, PodGroup{Name: "fits", MinCount: 2}, PodGroup{Name: "basic"})
	var pods []Pod
	for i := 0; i < 4; i++ {
		pods = append(pods, gangPod(fmt.Sprintf("big-%d", i), "big", 1))
	}
	pods = append(pods, gangPod("fits-0", "fits", 1), gangPod("fits-1", "fits", 1), gangPod("basic-0", "basic", 1), gangPod("basic-1", "basic", 1))
	addPods(t, s, pods...)
	placed, _ := schedule(t, s)
	for name := range placed {
		if strings.HasPrefix(name, "big-") {
			t.Errorf("partial gang: %v", placed)
		}
	}
	if placed["fits-0"] == "" || placed["fits-1"] == "" {
		t.Errorf("the gang that fits is not placed: %v", placed)
	}
	if n := len(placed); n != 3 {
		t.Errorf("placed %d pods, want 3 (fits ×2, one basic): %v", n, placed)
	}
}

// TestGangWaitsForMinCount: like GangScheduling's PreEnqueue, a group is
// not considered before minCount of its pods exist, nor before its
// PodGroup does; once they do, its pods are placed together.
func TestGangWaitsForMinCount(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{})
	addNodes(t, s, gpuNode("n1", "r1", 8))
	addPods(t, s, gangPod("g-0", "g", 1), gangPod("g-1", "g", 1))
	if q := s.Pending(); len(q) != 0 {
		t.Fatalf("pods of an unknown PodGroup are queued: %v", q)
	}
	addGroups(t, s, PodGroup{Name: "g", MinCount: 3})
	if q := s.Pending(); len(q) != 0 {
		t.Fatalf("2 of minCount 3 pods are queued: %v", q)
	}
	addPods(t, s, gangPod("g-2", "g", 1))
	placed, _ := schedule(t, s)
	if len(placed) != 3 {
		t.Fatalf("placed %v", placed)
	}
	// A fourth member joins the running gang on its own: minCount counts
	// the bound members.
	addPods(t, s, gangPod("g-3", "g", 1))
	if placed, _ := schedule(t, s); placed["g-3"] != "n1" {
		t.Fatalf("a member joining a running gang: %v", placed)
	}
}

// TestGangTopology: a group's pods share one rack, the rack of its bound
// members; a rack too small for the group leaves it unplaced rather than
// spread.
func TestGangTopology(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{})
	addNodes(t, s, gpuNode("a1", "ra", 4), gpuNode("a2", "ra", 4), gpuNode("b1", "rb", 4), gpuNode("b2", "rb", 4),
		gpuNode("nolabel", "", 8))
	addGroups(t, s, PodGroup{Name: "g", MinCount: 3, TopologyKey: "rack"}, PodGroup{Name: "wide", MinCount: 3, TopologyKey: "rack"})
	addPods(t, s, Pod{Name: "g-0", PodGroup: "g", CPU: 100, Memory: 100, Resources: map[string]int64{gpu: 1}, NodeName: "b1", Phase: PhaseRunning},
		gangPod("g-1", "g", 3), gangPod("g-2", "g", 3))
	// wide needs 3 × 3 GPUs: more than a rack's 8, though the cluster has it.
	addPods(t, s, gangPod("wide-0", "wide", 3), gangPod("wide-1", "wide", 3), gangPod("wide-2", "wide", 3))
	placed, _ := schedule(t, s)
	if placed["g-1"] == "" || placed["g-2"] == "" || !strings.HasPrefix(placed["g-1"], "b") || !strings.HasPrefix(placed["g-2"], "b") {
		t.Errorf("g's pods are not in the rack of its bound member: %v", placed)
	}
	for _, w := range []string{"wide-0", "wide-1", "wide-2"} {
		if placed[w] != "" {
			t.Errorf("a gang spread over racks, or on a node without the label: %v", placed)
		}
	}
}

// TestGangBatchKeepsGroups: a batch never splits a group: it ends before a
// group that would not fit it, and takes a group larger than BatchSize
// whole.
func TestGangBatchKeepsGroups(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{BatchSize: 4})
	addNodes(t, s, gpuNode("n1", "r1", 8), gpuNode("n2", "r1", 8))
	addGroups(t, s, PodGroup{Name: "g3", MinCount: 3}, PodGroup{Name: "h3", MinCount: 3}, PodGroup{Name: "big", MinCount: 6})
	for i := 0; i < 3; i++ {
		addPods(t, s, gangPod(fmt.Sprintf("g3-%d", i), "g3", 1))
	}
	for i := 0; i < 3; i++ {
		addPods(t, s, gangPod(fmt.Sprintf("h3-%d", i), "h3", 1))
	}
	placed, _ := schedule(t, s)
	if len(placed) != 3 || placed["g3-0"] == "" {
		t.Fatalf("first batch %v", placed)
	}
	for i := 0; i < 6; i++ {
		addPods(t, s, gangPod(fmt.Sprintf("big-%d", i), "big", 1))
	}
	if placed, _ := schedule(t, s); len(placed) != 3 || placed["h3-0"] == "" {
		t.Fatalf("second batch %v", placed)
	}
	if placed, _ := schedule(t, s); len(placed) != 6 {
		t.Fatalf("a group larger than the batch: %v", placed)
	}
	if got := splitPoint(takeBatch(s.State().podsNamed("big-0", "g3-0"), 1)); got != 0 {
		t.Errorf("splitPoint %d", got)
	}
}

func (st *State) podsNamed(names ...string) []*Pod {
	var out []*Pod
	for _, n := range names {
		out = append(out, st.Pods[n])
	}
	return out
}

// TestCheckCatchesGangFaults: the independent check rejects a partial gang
// and a group spread over two racks, naming the placed pods, so a wrong
// model would be caught.
func TestCheckCatchesGangFaults(t *testing.T) {
	st := NewState()
	for _, n := range []Node{gpuNode("a1", "ra", 4), gpuNode("b1", "rb", 4)} {
		n := normalizeNode(n)
		n.Pods, n.Storage = 110, 100000
		st.Nodes[n.Name] = &n
	}
	st.PodGroups["g"] = &PodGroup{Name: "g", MinCount: 3, TopologyKey: "rack"}
	var batch []*Pod
	for i, node := range []string{"a1", "b1", ""} {
		p := normalizePod(gangPod(fmt.Sprintf("g-%d", i), "g", 1))
		p.NodeName = node
		st.Pods[p.Name] = &p
		batch = append(batch, &p)
	}
	err := st.Check(batch)
	var ce *CheckError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "G1 pod group g has 2 pods") || !strings.Contains(err.Error(), "G2 pod group g spans 2 domains") {
		t.Fatalf("check: %v", err)
	}
	batch[2].NodeName = "a1"
	batch[1].NodeName = "a1"
	if err := st.Check(batch); err != nil {
		t.Fatalf("a whole gang in one rack: %v", err)
	}
}

// TestCheckCatchesAModelWithoutGangs: a model without G1 and G2 places a
// partial gang and a gang over two racks, and the independent check of
// the full policies (State.Check, not the relaxed PolicyState) rejects
// both: a wrong model would not go unnoticed.
func TestCheckCatchesAModelWithoutGangs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		nodes []Node
		group PodGroup
		gpus  int64
		want  string
	}{
		{"partial", []Node{gpuNode("a1", "ra", 4)}, PodGroup{Name: "g", MinCount: 3}, 2, "G1 pod group g"},
		{"spread", []Node{gpuNode("a1", "ra", 2), gpuNode("b1", "rb", 2)}, PodGroup{Name: "g", MinCount: 2, TopologyKey: "rack"}, 2, "G2 pod group g"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newTest(t, Config{DisabledPolicies: []string{"G1", "G2"}})
			addNodes(t, s, c.nodes...)
			addGroups(t, s, c.group)
			for i := int64(0); i < max(c.group.MinCount, 2); i++ {
				addPods(t, s, gangPod(fmt.Sprintf("g-%d", i), "g", c.gpus))
			}
			placed, _ := schedule(t, s)
			st := s.State()
			var batch []*Pod
			for _, p := range st.Pods {
				batch = append(batch, p)
			}
			err := st.Check(batch)
			t.Logf("placed %v; check: %v", placed, err)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("the check accepts what a model without G1 and G2 placed: %v", placed)
			}
		})
	}
}

// TestGangMixedBatchOnASampledCluster: on a cluster large enough for node
// sampling, a batch mixing plain pods and a rack-constrained gang considers
// every node (a rack is not an arc's share of it): the plain pods and the
// gang are all placed, the gang in one rack.
func TestGangMixedBatchOnASampledCluster(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{})
	for i := 0; i < 150; i++ {
		addNodes(t, s, gpuNode(fmt.Sprintf("n%03d", i), fmt.Sprintf("r%02d", i/10), 2))
	}
	addGroups(t, s, PodGroup{Name: "g", MinCount: 8, TopologyKey: "rack"})
	for i := 0; i < 8; i++ {
		addPods(t, s, gangPod(fmt.Sprintf("g-%d", i), "g", 2))
		addPods(t, s, Pod{Name: fmt.Sprintf("plain-%d", i), CPU: 100, Memory: 100})
	}
	placed, us := schedule(t, s)
	if len(placed) != 16 {
		t.Fatalf("placed %d of 16: %v; %v", len(placed), placed, us)
	}
	st := s.State()
	racks := map[string]bool{}
	for i := 0; i < 8; i++ {
		racks[st.Nodes[placed[fmt.Sprintf("g-%d", i)]].Labels["rack"]] = true
	}
	if len(racks) != 1 {
		t.Errorf("the gang spans racks %v", racks)
	}
}

// TestFitsRoomIsHoldsAndRoomOfTheSum: gangHint's fitsRoom (one pass, no
// copy of the use) says what holds says, and gives room of the use with
// the pod added, on random nodes, uses and pods (requests of 0, resources
// the node lacks, pods without any, full nodes).
func TestFitsRoomIsHoldsAndRoomOfTheSum(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	res := []string{gpu, "example.com/fpga", "hugepages-2Mi"}
	fit := 0
	for i := 0; i < 4000; i++ {
		n := &Node{CPU: rng.Int63n(64000), Memory: rng.Int63n(64000), Storage: 1000, Pods: 1 + rng.Int63n(3), Resources: map[string]int64{}}
		u := nodeUse{cpu: rng.Int63n(64000), mem: rng.Int63n(64000), pods: rng.Int63n(3), scalar: map[string]int64{}}
		p := &Pod{CPU: rng.Int63n(4000), Memory: rng.Int63n(4000)}
		for _, r := range res {
			if rng.Intn(2) == 0 {
				n.Resources[r] = rng.Int63n(16)
			}
			if rng.Intn(2) == 0 {
				u.scalar[r] = rng.Int63n(16)
			}
			if rng.Intn(3) == 0 {
				if p.Resources == nil {
					p.Resources = map[string]int64{}
				}
				p.Resources[r] = rng.Int63n(4)
			}
		}
		room, fits := fitsRoom(n, &u, p, scalarRequests(p, nil))
		if want := u.holds(n, p); fits != want {
			t.Fatalf("node %+v, use %+v, pod %+v: fitsRoom says fits %v, holds %v", n, u, p, fits, want)
		}
		if !fits {
			continue
		}
		fit++
		sum := u
		sum.add(p, 1)
		if want := n.room(sum, p); room != want {
			t.Fatalf("node %+v, use %+v, pod %+v: fitsRoom %d, room of the sum %d", n, u, p, room, want)
		}
	}
	if fit < 100 || fit > 3900 {
		t.Fatalf("%d of 4000 cases fit: the draw does not test both answers", fit)
	}
}
