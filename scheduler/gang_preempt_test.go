package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// boundGPU is a running pod using gpus GPUs of node, in PodGroup group
// ("" for none), of priority prio.
func boundGPU(name, group, node string, gpus, prio int64) Pod {
	return Pod{Name: name, PodGroup: group, CPU: 100, Memory: 100, Resources: map[string]int64{gpu: gpus},
		NodeName: node, Phase: PhaseRunning, Priority: prio}
}

// highGang adds the n pending pods of a PodGroup of priority 10, gpus each.
func highGang(t *testing.T, s *Scheduler, g PodGroup, n int, gpus int64) []string {
	t.Helper()
	addGroups(t, s, g)
	var names []string
	for i := 0; i < n; i++ {
		p := gangPod(fmt.Sprintf("%s-%d", g.Name, i), g.Name, gpus)
		p.Priority = 10
		addPods(t, s, p)
		names = append(names, p.Name)
	}
	return names
}

func evicted(ev []Eviction) []string {
	var out []string
	for _, e := range ev {
		out = append(out, e.Pod)
	}
	sort.Strings(out)
	return out
}

// TestGangPreemptionFewestEvictions: a gang of 2 × 4 GPUs, rack-bound,
// arrives at four full 4-GPU nodes in two racks. Rack r1 is freed by 3
// evictions (n1's one pod, n2's two), rack r2 by 5; across racks two would
// do (n1 and n3), which G2 forbids. The plan places both members in r1
// and evicts exactly those 3.
func TestGangPreemptionFewestEvictions(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{})
	addNodes(t, s, gpuNode("n1", "r1", 4), gpuNode("n2", "r1", 4), gpuNode("n3", "r2", 4), gpuNode("n4", "r2", 4))
	addPods(t, s, boundGPU("a", "", "n1", 4, 0),
		boundGPU("b0", "", "n2", 2, 0), boundGPU("b1", "", "n2", 2, 0),
		boundGPU("c", "", "n3", 4, 0),
		boundGPU("d0", "", "n4", 1, 0), boundGPU("d1", "", "n4", 1, 0), boundGPU("d2", "", "n4", 1, 0), boundGPU("d3", "", "n4", 1, 0))
	names := highGang(t, s, PodGroup{Name: "hi", MinCount: 2, TopologyKey: "rack"}, 2, 4)
	bs, ev, us, err := s.PreemptPods(context.Background(), names)
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for _, b := range bs {
		nodes[b.Node] = true
	}
	if len(bs) != 2 || !nodes["n1"] || !nodes["n2"] || len(us) != 0 {
		t.Fatalf("bindings %v, unschedulable %v: want the gang on n1 and n2 (rack r1)", bs, us)
	}
	if got, want := evicted(ev), []string{"a", "b0", "b1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("evicted %v, want %v (the fewest that free one rack)", got, want)
	}
}

// TestGangPreemptionDisruptionMode: the victims of a lower-priority
// PodGroup. With disruptionMode single its pods are evicted one by one;
// with all, together or not at all:
//   - whole: a 2-GPU node holds L's two 1-GPU pods; a 1-GPU preemptor
//     evicts one of them (single) or both (all);
//   - none: L's pod on n1 (2 GPUs) and two more on n3; s0 and s1 fill n2.
//     A 2-GPU preemptor evicts L's pod on n1 (single: one eviction), or,
//     since evicting L whole is three, s0 and s1 (all), leaving L intact.
func TestGangPreemptionDisruptionMode(t *testing.T) {
	t.Parallel()
	for _, all := range []bool{false, true} {
		t.Run(fmt.Sprintf("whole/all=%v", all), func(t *testing.T) {
			s := newTest(t, Config{})
			addNodes(t, s, gpuNode("n1", "r1", 2))
			addGroups(t, s, PodGroup{Name: "L", MinCount: 2, DisruptAll: all})
			addPods(t, s, boundGPU("L-0", "L", "n1", 1, 0), boundGPU("L-1", "L", "n1", 1, 0),
				Pod{Name: "solo", CPU: 100, Memory: 100, Resources: map[string]int64{gpu: 1}, Priority: 10})
			bs, ev, _, err := s.PreemptPods(context.Background(), []string{"solo"})
			if err != nil {
				t.Fatal(err)
			}
			want := 1
			if all {
				want = 2
			}
			if len(bs) != 1 || len(ev) != want {
				t.Fatalf("bindings %v, evictions %v: want the preemptor placed and %d evicted", bs, ev, want)
			}
		})
		t.Run(fmt.Sprintf("none/all=%v", all), func(t *testing.T) {
			s := newTest(t, Config{})
			addNodes(t, s, gpuNode("n1", "r1", 2), gpuNode("n2", "r1", 2), gpuNode("n3", "r1", 2))
			addGroups(t, s, PodGroup{Name: "L", MinCount: 3, DisruptAll: all})
			addPods(t, s, boundGPU("L-0", "L", "n1", 2, 0), boundGPU("L-1", "L", "n3", 1, 0), boundGPU("L-2", "L", "n3", 1, 0),
				boundGPU("s0", "", "n2", 1, 0), boundGPU("s1", "", "n2", 1, 0),
				Pod{Name: "solo", CPU: 100, Memory: 100, Resources: map[string]int64{gpu: 2}, Priority: 10})
			bs, ev, _, err := s.PreemptPods(context.Background(), []string{"solo"})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"L-0"}
			if all {
				want = []string{"s0", "s1"}
			}
			if got := evicted(ev); len(bs) != 1 || !reflect.DeepEqual(got, want) {
				t.Fatalf("bindings %v, evicted %v; want %v", bs, got, want)
			}
		})
	}
}

// TestGangPreemptionNothingWhenNoFit: a rack-bound gang of 3 × 4 GPUs;
// each rack has two 4-GPU nodes, so no eviction makes room for it. Two of
// its pods would fit by evicting (r1's low pods), but nothing is evicted
// and no pod placed; a gang of 2 fits by evicting, and does.
func TestGangPreemptionNothingWhenNoFit(t *testing.T) {
	t.Parallel()
	for _, n := range []int{3, 2} {
		t.Run(fmt.Sprintf("members=%d", n), func(t *testing.T) {
			s := newTest(t, Config{})
			addNodes(t, s, gpuNode("n1", "r1", 4), gpuNode("n2", "r1", 4), gpuNode("n3", "r2", 4), gpuNode("n4", "r2", 4))
			addPods(t, s, boundGPU("a", "", "n1", 4, 0), boundGPU("b", "", "n2", 4, 0),
				boundGPU("c", "", "n3", 4, 20), boundGPU("d", "", "n4", 4, 0))
			names := highGang(t, s, PodGroup{Name: "hi", MinCount: int64(n), TopologyKey: "rack"}, n, 4)
			bs, ev, us, err := s.PreemptPods(context.Background(), names)
			if err != nil {
				t.Fatal(err)
			}
			if n == 3 {
				if len(bs) != 0 || len(ev) != 0 || len(us) != 3 {
					t.Fatalf("bindings %v, evictions %v, unschedulable %v: want nothing placed or evicted", bs, ev, us)
				}
				return
			}
			if got := evicted(ev); len(bs) != 2 || !reflect.DeepEqual(got, []string{"a", "b"}) {
				t.Fatalf("bindings %v, evicted %v: want the gang on r1, a and b evicted", bs, got)
			}
		})
	}
}

// TestGangPreemptionPolicyNever: a gang whose PodGroup, or one of whose
// pods, has preemptionPolicy Never evicts nothing, though it would fit by
// evicting.
func TestGangPreemptionPolicyNever(t *testing.T) {
	t.Parallel()
	for _, podLevel := range []bool{false, true} {
		t.Run(fmt.Sprintf("pod=%v", podLevel), func(t *testing.T) {
			s := newTest(t, Config{})
			addNodes(t, s, gpuNode("n1", "r1", 4), gpuNode("n2", "r1", 4))
			addPods(t, s, boundGPU("a", "", "n1", 4, 0), boundGPU("b", "", "n2", 4, 0))
			addGroups(t, s, PodGroup{Name: "hi", MinCount: 2, NeverPreempts: !podLevel})
			p0, p1 := gangPod("hi-0", "hi", 4), gangPod("hi-1", "hi", 4)
			p0.Priority, p1.Priority = 10, 10
			p1.NeverPreempts = podLevel
			addPods(t, s, p0, p1)
			bs, ev, us, err := s.PreemptPods(context.Background(), []string{"hi-0", "hi-1"})
			if err != nil {
				t.Fatal(err)
			}
			if len(bs) != 0 || len(ev) != 0 || len(us) != 2 {
				t.Fatalf("bindings %v, evictions %v, unschedulable %v: want nothing evicted for the group", bs, ev, us)
			}
		})
	}
}

// TestCheckDisruption: the Go restatement of G3 rejects a plan evicting a
// disruptionMode-all group in part, and accepts it whole or untouched.
func TestCheckDisruption(t *testing.T) {
	st := NewState()
	st.PodGroups["L"] = &PodGroup{Name: "L", MinCount: 2, DisruptAll: true}
	for _, name := range []string{"L-0", "L-1"} {
		st.Pods[name] = &Pod{Name: name, PodGroup: "L", NodeName: "n1", Phase: PhaseRunning}
	}
	if err := st.checkDisruption([]Eviction{{Pod: "L-0", Node: "n1"}}); !errors.Is(err, ErrCheck) {
		t.Errorf("a partial eviction passes: %v", err)
	}
	if err := st.checkDisruption([]Eviction{{Pod: "L-0", Node: "n1"}, {Pod: "L-1", Node: "n1"}}); err != nil {
		t.Errorf("a whole eviction fails: %v", err)
	}
	if err := st.checkDisruption(nil); err != nil {
		t.Errorf("no eviction fails: %v", err)
	}
}

// TestGangPreemptionUsesFreeNodes: a gang of 2 × 4 GPUs where one member
// fits a free node and the other only by evicting: both are placed, one
// eviction. A member that fits alone is not left to the placement model
// (which would split the gang).
func TestGangPreemptionUsesFreeNodes(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{})
	addNodes(t, s, gpuNode("n1", "r1", 4), gpuNode("n2", "r1", 4), gpuNode("n3", "r1", 4))
	addPods(t, s, boundGPU("a", "", "n1", 4, 0), boundGPU("b0", "", "n2", 2, 0), boundGPU("b1", "", "n2", 2, 0))
	names := highGang(t, s, PodGroup{Name: "hi", MinCount: 2}, 2, 4)
	bs, ev, us, err := s.PreemptPods(context.Background(), names)
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for _, b := range bs {
		nodes[b.Node] = true
	}
	if got := evicted(ev); len(bs) != 2 || !nodes["n1"] || !nodes["n3"] || !reflect.DeepEqual(got, []string{"a"}) || len(us) != 0 {
		t.Fatalf("bindings %v, evicted %v, unschedulable %v: want the gang on n1 and n3, a evicted", bs, got, us)
	}
}

// TestGangPreemptionAgreesWithBruteForce: on random small clusters (two racks of two 4-GPU nodes full of
// priority-0 pods, some in PodGroups with disruptionMode single or all), a priority-10 gang of 1–3 pods
// (rack-bound or not) is planned by PreemptPods, and a brute force over every set of eviction units (a pod, or
// a disruptionMode-all group's pods) finds the fewest evictions that let the gang fit. The plan places the whole
// gang with exactly that many evictions, in whole units, or, where no set makes room, places and evicts
// nothing.
func TestGangPreemptionAgreesWithBruteForce(t *testing.T) {
	t.Parallel()
	cases := 40
	if testing.Short() || raceDetector {
		cases = 10 // every case in .ci/run's run without -race
	}
	// The even cases have a PodDisruptionBudget over some low pods that
	// allows 1 or 2 disruptions (P3) over three in four low pods, drawn from a second generator so that
	// the clusters are those of the cases without it.
	budgetOf := map[string]bool{}
	var allowed int64
	s := newTest(t, Config{DisruptionBudget: func(p *Pod) (string, int64) {
		if budgetOf[p.Name] {
			return "default/pdb", allowed
		}
		return "", 0
	}})
	ctx := context.Background()
	nodes := []Node{gpuNode("n0", "r0", 4), gpuNode("n1", "r0", 4), gpuNode("n2", "r1", 4), gpuNode("n3", "r1", 4)}
	var fit, noFit, wholeGroups, budgetBinds int // the kinds of case met: the test is not vacuous
	defer func() {
		t.Logf("%d cases: %d fit by evicting, %d do not; %d evict a disruptionMode-all group; the budget changes %d", cases, fit, noFit, wholeGroups, budgetBinds)
		if !t.Failed() && (fit == 0 || noFit == 0 || wholeGroups == 0 || budgetBinds == 0) {
			t.Errorf("the seeds miss a kind of case")
		}
	}()
	for seed := int64(1); seed <= int64(cases); seed++ {
		rng := rand.New(rand.NewSource(seed))
		emptyState(t, s)
		for name := range s.State().PodGroups {
			if err := s.DeletePodGroup(ctx, name); err != nil {
				t.Fatal(err)
			}
		}
		addNodes(t, s, nodes...)
		// Low pods: each node filled with pods of 1–3 GPUs; a pod joins one of two PodGroups half the time.
		groups := []PodGroup{{Name: "g0", MinCount: 1, DisruptAll: rng.Intn(2) == 0}, {Name: "g1", MinCount: 1, DisruptAll: rng.Intn(2) == 0}}
		addGroups(t, s, groups...)
		var low []Pod
		for _, n := range nodes {
			free := int64(4)
			for free > 0 {
				g := min(free, int64(1+rng.Intn(3)))
				grp := ""
				if rng.Intn(2) == 0 {
					grp = groups[rng.Intn(2)].Name
				}
				low = append(low, boundGPU(fmt.Sprintf("low-%d", len(low)), grp, n.Name, g, 0))
				free -= g
			}
		}
		addPods(t, s, low...)
		k, gpus, rack := 1+rng.Intn(3), int64(1+rng.Intn(4)), rng.Intn(2) == 0
		key := ""
		if rack {
			key = "rack"
		}
		names := highGang(t, s, PodGroup{Name: "hi", MinCount: int64(k), TopologyKey: key}, k, gpus)
		clear(budgetOf)
		brng := rand.New(rand.NewSource(seed + 1000))
		if seed%2 == 0 {
			allowed = 1 + brng.Int63n(2)
			for _, p := range low {
				if brng.Intn(4) != 0 {
					budgetOf[p.Name] = true
				}
			}
		}
		want := bruteForceEvictions(nodes, low, groups, k, gpus, rack, budgetOf, allowed)
		if len(budgetOf) > 0 && want != bruteForceEvictions(nodes, low, groups, k, gpus, rack, nil, 0) {
			budgetBinds++
		}
		bs, ev, _, err := s.PreemptPods(ctx, names)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		desc := fmt.Sprintf("seed %d: gang %d × %d GPUs (rack %v), groups %+v, low %v, budget over %v allowing %d", seed, k, gpus, rack, groups, lowText(low), sortedKeys(budgetOf), allowed)
		for _, e := range ev {
			if p := s.State().Pods[e.Pod]; p != nil && p.PodGroup != "" && s.State().PodGroups[p.PodGroup].DisruptAll {
				wholeGroups++
				break
			}
		}
		if want < 0 {
			noFit++
			if len(bs) != 0 || len(ev) != 0 {
				t.Errorf("%s: no set of evictions makes room, but the plan binds %v and evicts %v", desc, bs, ev)
			}
			continue
		}
		fit++
		if len(bs) != k || len(ev) != want {
			t.Errorf("%s: plan binds %v, evicts %v; want %d bindings and %d evictions", desc, bs, evicted(ev), k, want)
		}
	}
}

func lowText(low []Pod) string {
	var out []string
	for _, p := range low {
		out = append(out, fmt.Sprintf("%s@%s:%d/%s", p.Name, p.NodeName, p.Resources[gpu], p.PodGroup))
	}
	return strings.Join(out, " ")
}

// bruteForceEvictions is the fewest pods whose eviction, in whole units (a pod, or every pod of a
// disruptionMode-all group), lets k pods of gpus GPUs fit (in one rack when rack), evicting at most allowed
// of the pods in budget; -1 when none does.
func bruteForceEvictions(nodes []Node, low []Pod, groups []PodGroup, k int, gpus int64, rack bool, budget map[string]bool, allowed int64) int {
	all := map[string]bool{}
	for _, g := range groups {
		if g.DisruptAll {
			all[g.Name] = true
		}
	}
	var units [][]int
	unitOf := map[string]int{}
	for i, p := range low {
		if all[p.PodGroup] {
			if u, ok := unitOf[p.PodGroup]; ok {
				units[u] = append(units[u], i)
				continue
			}
			unitOf[p.PodGroup] = len(units)
		}
		units = append(units, []int{i})
	}
	best := -1
	for mask := 0; mask < 1<<len(units); mask++ {
		gone, n := map[int]bool{}, 0
		for u := range units {
			if mask&(1<<u) != 0 {
				for _, i := range units[u] {
					gone[i] = true
					n++
				}
			}
		}
		if best >= 0 && n >= best {
			continue
		}
		var under int64
		for i := range gone {
			if budget[low[i].Name] {
				under++
			}
		}
		if under > allowed {
			continue
		}
		free := map[string]int64{}
		for _, nd := range nodes {
			free[nd.Name] = nd.Resources[gpu]
		}
		for i, p := range low {
			if !gone[i] {
				free[p.NodeName] -= p.Resources[gpu]
			}
		}
		if gangFits(nodes, free, k, gpus, rack) {
			best = n
		}
	}
	return best
}

// gangFits reports whether k pods of gpus GPUs fit the free GPUs of the nodes (all in one rack when rack).
func gangFits(nodes []Node, free map[string]int64, k int, gpus int64, rack bool) bool {
	domains := [][]Node{nodes}
	if rack {
		by := map[string][]Node{}
		for _, n := range nodes {
			by[n.Labels["rack"]] = append(by[n.Labels["rack"]], n)
		}
		domains = nil
		for _, ns := range by {
			domains = append(domains, ns)
		}
	}
	for _, ns := range domains {
		slots := 0
		for _, n := range ns {
			slots += int(free[n.Name] / gpus)
		}
		if slots >= k {
			return true
		}
	}
	return false
}

// TestGangPreemptionSparesWhatEvictableRefuses: the cluster of TestGangPreemptionFewestEvictions with b0's
// eviction forbidden (Config.Evictable, as a PodDisruptionBudget forbids it): rack r1 cannot be emptied, and
// the plan empties r2 instead (five evictions), never touching b0.
func TestGangPreemptionSparesWhatEvictableRefuses(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{Evictable: func(p *Pod) (bool, string) { return p.Name != "b0", "a budget" }})
	addNodes(t, s, gpuNode("n1", "r1", 4), gpuNode("n2", "r1", 4), gpuNode("n3", "r2", 4), gpuNode("n4", "r2", 4))
	addPods(t, s, boundGPU("a", "", "n1", 4, 0),
		boundGPU("b0", "", "n2", 2, 0), boundGPU("b1", "", "n2", 2, 0),
		boundGPU("c", "", "n3", 4, 0),
		boundGPU("d0", "", "n4", 1, 0), boundGPU("d1", "", "n4", 1, 0), boundGPU("d2", "", "n4", 1, 0), boundGPU("d3", "", "n4", 1, 0))
	names := highGang(t, s, PodGroup{Name: "hi", MinCount: 2, TopologyKey: "rack"}, 2, 4)
	bs, ev, us, err := s.PreemptPods(context.Background(), names)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := evicted(ev), []string{"c", "d0", "d1", "d2", "d3"}; len(bs) != 2 || !reflect.DeepEqual(got, want) {
		t.Fatalf("bindings %v, evicted %v, unschedulable %v: want the gang in r2, %v evicted", bs, got, us, want)
	}
}
