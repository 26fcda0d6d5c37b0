package scheduler

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weavesql/weave/cp"
)

// sampledCluster has 40 nodes and a scheduler that samples 10 per batch.
func sampledCluster(t *testing.T) (*Scheduler, []string) {
	s := newTest(t, Config{NodeSample: 10, BatchSize: 4})
	var names []string
	for i := 0; i < 40; i++ {
		name := fmt.Sprintf("n%02d", i)
		names = append(names, name)
		addNodes(t, s, Node{Name: name, CPU: 4000, Memory: 8000, Labels: map[string]string{"pool": fmt.Sprint(i % 4)}})
	}
	return s, names
}

// Each batch's pods go to the nodes of one arc of the ring, and the next
// batch takes the next arc: four batches cover the ring's four quarters.
func TestNodeSampleGoesRoundTheCluster(t *testing.T) {
	t.Parallel()
	s, _ := sampledCluster(t)
	quarters := map[int64]bool{}
	for b := 0; b < 4; b++ {
		for i := 0; i < 4; i++ {
			addPods(t, s, Pod{Name: fmt.Sprintf("b%d-p%d", b, i), CPU: 100, Memory: 100})
		}
		placed, us := schedule(t, s)
		if len(placed) != 4 || len(us) != 0 {
			t.Fatalf("batch %d: placed %v, unschedulable %v", b, placed, us)
		}
		lo, hi := int64(b)*sampleRing/4, int64(b+1)*sampleRing/4
		for p, n := range placed {
			if k := sampleKey(n); k < lo || k >= hi {
				t.Errorf("batch %d: %s on %s (key %d), outside the arc [%d, %d)", b, p, n, k, lo, hi)
			}
		}
		// The database computes the free room of the arc's nodes only.
		rows, err := s.DB().Query("select node_name from node_free")
		if err != nil {
			t.Fatal(err)
		}
		free := 0
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			if k := sampleKey(n); k < lo || k >= hi {
				t.Errorf("batch %d: node_free holds %s (key %d), outside the arc [%d, %d)", b, n, k, lo, hi)
			}
			free++
		}
		rows.Close()
		if free == 0 || free == 40 {
			t.Errorf("batch %d: node_free holds %d of 40 nodes", b, free)
		}
		quarters[lo] = true
	}
	if len(quarters) != 4 {
		t.Errorf("arcs %v", quarters)
	}
}

// A pod that no node of the batch's arc can take is solved again over
// every node: it is placed, not called unschedulable; a pod no node takes
// is unschedulable after both solves.
func TestNodeSampleFallsBackToEveryNode(t *testing.T) {
	t.Parallel()
	s, names := sampledCluster(t)
	// The first batch's arc is the ring's first quarter: pin a pod to a
	// node outside it.
	target := ""
	for _, n := range names {
		if sampleKey(n) >= sampleRing/4 {
			target = n
			break
		}
	}
	addNodes(t, s, Node{Name: target, CPU: 4000, Memory: 8000, Labels: map[string]string{"pool": "only-here"}})
	addPods(t, s,
		Pod{Name: "free", CPU: 100, Memory: 100},
		Pod{Name: "pinned", CPU: 100, Memory: 100, NodeSelector: map[string]string{"pool": "only-here"}},
		Pod{Name: "nowhere", CPU: 100, Memory: 100, NodeSelector: map[string]string{"pool": "absent"}})
	placed, us := schedule(t, s)
	if placed["pinned"] != target || placed["free"] == "" || len(us) != 1 || us[0].Pod != "nowhere" {
		t.Fatalf("placed %v, unschedulable %v; want pinned on %s, free placed, nowhere unschedulable", placed, us, target)
	}
	if k := sampleKey(placed["free"]); k >= sampleRing/4 {
		t.Errorf("free went to %s (key %d), outside the batch's arc", placed["free"], k)
	}
}

// Without sampling (or on a cluster no larger than the sample) every node
// is considered: the model of a 4-pod batch has a variable domain of all
// 40 nodes, four times the sampled one.
func TestNodeSampleShrinksTheModel(t *testing.T) {
	t.Parallel()
	vars := map[int]int{}
	for _, sample := range []int{10, -1} {
		s := newTest(t, Config{NodeSample: sample, BatchSize: 4})
		for i := 0; i < 40; i++ {
			addNodes(t, s, Node{Name: fmt.Sprintf("n%02d", i), CPU: 4000, Memory: 8000})
		}
		for i := 0; i < 4; i++ {
			addPods(t, s, Pod{Name: fmt.Sprintf("p%d", i), CPU: 100, Memory: 100})
		}
		if placed, _ := schedule(t, s); len(placed) != 4 {
			t.Fatalf("sample %d: placed %v", sample, placed)
		}
		vars[sample] = s.LastStats().Variables
	}
	if vars[10]*2 > vars[-1] {
		t.Errorf("variables: %d sampling 10 of 40 nodes, %d with every node", vars[10], vars[-1])
	}
}

// A batch's sample holds, besides its arc, the nodes its pods need: the
// node a pod names, the node of a bound pod a required hostname-affinity
// term selects, and of the zone of one a zone term selects as many nodes
// as the batch has pods, with those on the arc, the first after the arc's
// end. Terms that leave most nodes possible (anti-affinity, preferred,
// node selectors) add nothing. The pods are placed on those nodes.
func TestSampleTakesTheNodesPodsNeed(t *testing.T) {
	t.Parallel()
	s, names := sampledCluster(t)
	// The first batch's arc is the ring's first quarter.
	var far []string
	for _, n := range names {
		if sampleKey(n) >= sampleRing/4 {
			far = append(far, n)
		}
	}
	cacheNode, named, dbNode := far[0], far[1], far[2]
	pool := fmt.Sprint(slices.Index(names, dbNode) % 4)
	addPods(t, s,
		Pod{Name: "cache", Namespace: "a", Labels: map[string]string{"app": "cache"}, NodeName: cacheNode, Phase: PhaseRunning, CPU: 100, Memory: 100},
		Pod{Name: "db", Namespace: "a", Labels: map[string]string{"app": "db"}, NodeName: dbNode, Phase: PhaseRunning, CPU: 100, Memory: 100},
		// A pod of another namespace selects nothing.
		Pod{Name: "other", Namespace: "b", Labels: map[string]string{"app": "web"}, NodeName: far[3], Phase: PhaseRunning, CPU: 100, Memory: 100})
	aff := func(key, value, topology string) []PodAffinityTerm {
		return []PodAffinityTerm{{Required: true, Selector: SelectLabels(map[string]string{key: value}), TopologyKey: topology}}
	}
	batch := []Pod{
		{Name: "web", Namespace: "a", Affinity: aff("app", "cache", LabelHostname), CPU: 100, Memory: 100},
		{Name: "named", Namespace: "a", RequestedNode: named, CPU: 100, Memory: 100},
		{Name: "zoned", Namespace: "a", Affinity: aff("app", "db", "pool"), CPU: 100, Memory: 100},
		{Name: "loose", Namespace: "a", NodeSelector: map[string]string{"pool": "1"}, CPU: 100, Memory: 100,
			Affinity: []PodAffinityTerm{{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"app": "web"}), TopologyKey: LabelHostname},
				{Selector: SelectLabels(map[string]string{"app": "web"}), TopologyKey: LabelHostname}}},
	}
	var ptrs []*Pod
	for i := range batch {
		ptrs = append(ptrs, &batch[i])
	}
	a := arc{lo: 0, hi: sampleRing / 4}
	want := map[string]bool{cacheNode: true, named: true}
	// The pool's nodes: on the arc, and off it in ring order from its end.
	held := 0
	var off []string
	for i, n := range names {
		if fmt.Sprint(i%4) == pool {
			if a.holds(sampleKey(n)) {
				held++
			} else {
				off = append(off, n)
			}
		}
	}
	slices.SortFunc(off, func(x, y string) int { return int(sampleKey(x) - sampleKey(y)) })
	if held >= len(batch) || len(off) < len(batch)-held {
		t.Fatalf("the test's cluster: %d of pool %s's nodes on the arc, %d off it; the batch has %d pods", held, pool, len(off), len(batch))
	}
	for _, n := range off[:len(batch)-held] {
		want[n] = true
	}
	got := map[string]bool{}
	for _, n := range s.needed(ptrs, a) {
		got[n] = true
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("needed %v, want %v", got, want)
	}
	addPods(t, s, batch...)
	placed, us := schedule(t, s)
	if len(us) != 0 || placed["web"] != cacheNode || placed["named"] != named || placed["loose"] == "" {
		t.Fatalf("placed %v, unschedulable %v; want web on %s, named on %s", placed, us, cacheNode, named)
	}
	if z := placed["zoned"]; fmt.Sprint(slices.Index(names, z)%4) != pool {
		t.Errorf("zoned on %s, outside pool %s", z, pool)
	}
	// The solve that placed them was the sampled one: its pods' domains
	// hold the arc and the needed nodes, not all 40.
	if v := s.LastStats().Variables; v >= 4*40 {
		t.Errorf("%d variables: the batch was solved over every node", v)
	}
}

// The default sample follows kube-scheduler's numFeasibleNodesToFind: all
// of a small cluster, then 50% less 1% per 125 nodes (at least 5%), and
// never fewer than 100 nodes.
func TestDefaultNodeSampleIsKubeSchedulers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ nodes, want int }{
		{0, 0}, {40, 40}, {99, 99}, {100, 100}, {150, 75 + 25}, {200, 100}, {500, 230},
		{1000, 420}, {5000, 500}, {6000, 300}, {10000, 500}, {15000, 750},
	} {
		if got := DefaultNodeSample(c.nodes); got != c.want {
			t.Errorf("DefaultNodeSample(%d) = %d, want %d", c.nodes, got, c.want)
		}
	}
	// NodeSample 0 samples by that rule: 230 of 500 nodes for a batch of
	// three pods or more; 100 nodes a pod for one or two.
	s := newTest(t, Config{BatchSize: 4})
	for i := 0; i < 500; i++ {
		addNodes(t, s, Node{Name: fmt.Sprintf("n%03d", i), CPU: 4000, Memory: 8000})
	}
	for _, c := range []struct{ pods, want int }{{3, 230}, {1, 100}, {2, 200}, {4, 230}} {
		var batch []*Pod
		for i := range c.pods {
			batch = append(batch, &Pod{Name: fmt.Sprintf("p%d", i), CPU: 100, Memory: 100})
		}
		a := s.nextArc(batch)
		in := 0
		for name := range s.state.Nodes {
			if a.holds(sampleKey(name)) {
				in++
			}
		}
		if a.whole() || in < c.want*4/5 || in > c.want*6/5 {
			t.Errorf("a batch of %d pods: arc %v holds %d of 500 nodes, want about %d", c.pods, a, in, c.want)
		}
	}
}

// SQLite's planner is told the batch's tables are small: the batch's
// affinity terms are found from the batch's pods, not by scanning every
// pod's terms (its plan without the hint).
func TestSQLitePlansFromTheBatch(t *testing.T) {
	s := newTest(t, Config{})
	rows, err := s.DB().Query("explain query plan select * from batch_affinity_term")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if len(plan) == 0 || !strings.HasPrefix(plan[0], "SCAN batch_pod") {
		t.Fatalf("batch_affinity_term's plan starts elsewhere than the batch's pods:\n%s", strings.Join(plan, "\n"))
	}
}

// sampled_node, the database's view of an arc, holds exactly the nodes
// arc.holds accepts and the arc's extra nodes that exist: random arcs,
// those past the ring's end (lo > hi) and the whole ring included.
func TestSampledNodeViewAgreesWithTheArc(t *testing.T) {
	t.Parallel()
	s, names := sampledCluster(t)
	rng := rand.New(rand.NewSource(5))
	arcs := []arc{wholeRing, {lo: sampleRing - 1000, hi: 0}, {lo: 0, hi: 0}}
	for i := 0; i < 40; i++ {
		a := arc{lo: rng.Int63n(sampleRing), hi: rng.Int63n(sampleRing)}
		for k := rng.Intn(3); k > 0; k-- {
			a.extra = append(a.extra, names[rng.Intn(len(names))])
		}
		if rng.Intn(4) == 0 {
			a.extra = append(a.extra, "no-such-node")
		}
		arcs = append(arcs, a)
	}
	for _, a := range arcs {
		a.extra = slices.Compact(slices.Sorted(slices.Values(a.extra)))
		if err := s.exec(context.Background(), a.write()); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, n := range names {
			if a.holds(sampleKey(n)) || slices.Contains(a.extra, n) {
				want = append(want, n)
			}
		}
		got := queryStrings(t, s.DB(), "select node_name from sampled_node order by node_name")
		if !slices.Equal(got, want) {
			t.Errorf("arc [%d, %d) + %v: sampled_node %v, want %v", a.lo, a.hi, a.extra, got, want)
		}
	}
}

// Pods no node has room for are not solved again over every node: on a
// full cluster (the case of preemption) that second solve was the whole
// cluster's model for nothing. The batch's last model is the sample's.
func TestNodeSampleSkipsTheFallbackForPodsWithoutRoom(t *testing.T) {
	t.Parallel()
	s, names := sampledCluster(t)
	for i, n := range names { // every node's CPU taken
		addPods(t, s, Pod{Name: fmt.Sprintf("full-%d", i), CPU: 4000, Memory: 100, NodeName: n, Phase: PhaseRunning})
	}
	addPods(t, s, Pod{Name: "big-0", CPU: 1000, Memory: 100}, Pod{Name: "big-1", CPU: 1000, Memory: 100})
	placed, us := schedule(t, s)
	if len(placed) != 0 || len(us) != 2 {
		t.Fatalf("placed %v, unschedulable %v on a full cluster", placed, us)
	}
	if got := s.LastStats().Rows["node_free"]; got == 0 || got >= len(names) {
		t.Errorf("the batch's last model read node_free for %d of %d nodes: solved again over every node", got, len(names))
	}
	// A pod with room somewhere outside the sample is still solved again.
	addPods(t, s, Pod{Name: "small", CPU: 100, Memory: 100})
	free := names[len(names)-1]
	if err := s.DeletePod(context.Background(), fmt.Sprintf("full-%d", len(names)-1)); err != nil {
		t.Fatal(err)
	}
	placed, us = schedule(t, s)
	if placed["small"] != free {
		t.Errorf("small placed %v (unschedulable %v), want %s, the only node with room", placed, us, free)
	}
}

// solveCounter solves with the native engine and counts the solves.
type solveCounter struct{ n atomic.Int64 }

func (*solveCounter) Name() string { return "counter" }

func (b *solveCounter) Solve(ctx context.Context, m *cp.Model, p cp.Params) (*cp.Response, error) {
	b.n.Add(1)
	return m.Solve(ctx, p)
}

// A pod the sample cannot take is solved again over every node only if it
// fits some node with its batch placed (fitNowhere): one kept off every
// node by anti-affinity is solved once, over the sample; one whose only
// node is off the sample is solved twice, and placed there.
func TestPodsFittingNowhereAreNotSolvedAgain(t *testing.T) {
	b := &solveCounter{}
	s := newTest(t, Config{NodeSample: 10, Backend: b})
	var names []string
	for i := range 40 {
		name := fmt.Sprintf("n%02d", i)
		names = append(names, name)
		addNodes(t, s, Node{Name: name, CPU: 4000, Memory: 8000})
		addPods(t, s, Pod{Name: fmt.Sprintf("web-%d", i), CPU: 100, Memory: 100, NodeName: name, Phase: PhaseRunning, Labels: map[string]string{"app": "web"}})
	}
	solves := func(p Pod) (map[string]string, int64) {
		t.Helper()
		before := b.n.Load()
		addPods(t, s, p)
		placed, _ := schedule(t, s)
		return placed, b.n.Load() - before
	}
	loner := Pod{Name: "loner", CPU: 100, Memory: 100,
		Affinity: []PodAffinityTerm{{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"app": "web"}), TopologyKey: LabelHostname}}}
	if placed, n := solves(loner); placed["loner"] != "" || n != 1 {
		t.Fatalf("loner placed %v after %d solves, want unplaced after 1 (the sample's)", placed, n)
	}
	// The next batch's arc, and a node off it that only the pod may use.
	at := s.sampleAt
	a := s.nextArc([]*Pod{{Name: "probe"}})
	s.sampleAt = at
	off := ""
	for _, name := range names {
		if !a.holds(sampleKey(name)) {
			off = name
			break
		}
	}
	addNodes(t, s, Node{Name: off, CPU: 4000, Memory: 8000, Labels: map[string]string{"pool": "x"}})
	picky := Pod{Name: "picky", CPU: 100, Memory: 100, NodeSelector: map[string]string{"pool": "x"}}
	if placed, n := solves(picky); placed["picky"] != off || n != 2 {
		t.Fatalf("picky placed %v after %d solves, want on %s after 2 (the sample's, then every node's)", placed, n, off)
	}
}
