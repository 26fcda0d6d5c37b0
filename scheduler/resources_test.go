package scheduler

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"
)

// Scalar resources (extended resources, hugepages): H5's second file,
// h05b_scalar_resources.sql over node_resource_free, and the Go check.

const gpu = "nvidia.com/gpu"

// nodeResourceFree is node_resource_free restated in Go: for each node of
// the arc and each resource some decided pod requests, the node's
// allocatable less the requests of the live bound pods there that the model
// does not decide, or 0 when that is below 0.
func nodeResourceFree(nodes []Node, pods []Pod, a arc, decided map[string]bool) map[string]int64 {
	onArc := map[string]bool{}
	for _, n := range a.extra {
		onArc[n] = true
	}
	asked := map[string]bool{}
	for _, p := range pods {
		for r, v := range p.Resources {
			if decided[p.Name] && v > 0 {
				asked[r] = true
			}
		}
	}
	free := map[string]int64{}
	for _, n := range nodes {
		if !a.holds(sampleKey(n.Name)) && !onArc[n.Name] {
			continue
		}
		for r := range asked {
			f := n.Resources[r]
			for _, p := range pods {
				if p.NodeName == n.Name && !decided[p.Name] && (p.Phase == PhasePending || p.Phase == PhaseRunning) {
					f -= p.Resources[r]
				}
			}
			free[n.Name+" "+r] = max(f, 0)
		}
	}
	return free
}

// TestNodeResourceFreeViewAgreesWithGo: node_resource_free, evaluated by
// each state database over random clusters (nodes offering some of three
// resources, pods bound on and off the arc in every phase, some decided by
// the model, requests of 0 among them), holds a row per sampled node and
// resource the decided pods request, with what the Go restatement leaves;
// none when no decided pod requests one.
func TestNodeResourceFreeViewAgreesWithGo(t *testing.T) {
	t.Parallel()
	phases := []string{PhasePending, PhaseRunning, PhaseRunning, PhaseSucceeded, PhaseFailed}
	names := []string{gpu, "example.com/foo", "hugepages-2Mi"}
	some := func(rng *rand.Rand, hi int64) map[string]int64 {
		m := map[string]int64{}
		for _, r := range names {
			if rng.Intn(2) == 0 {
				m[r] = rng.Int63n(hi)
			}
		}
		return m
	}
	for _, d := range raceDBs(stateDBs()) {
		t.Run(d.name, func(t *testing.T) {
			s := newOn(t, d, Config{})
			ctx := context.Background()
			rng := rand.New(rand.NewSource(5))
			empty := 0
			for trial := 0; trial < 25; trial++ {
				emptyState(t, s)
				var nodes []Node
				for i := 0; i < 1+rng.Intn(10); i++ {
					nodes = append(nodes, Node{Name: fmt.Sprintf("t%d-n%d", trial, i), CPU: 8000, Memory: 8000, Resources: some(rng, 9)})
				}
				addNodes(t, s, nodes...)
				var pods, batch, victims []Pod
				decided := map[string]bool{}
				for i := 0; i < rng.Intn(30); i++ {
					p := Pod{Name: fmt.Sprintf("t%d-p%d", trial, i), Phase: phases[rng.Intn(len(phases))], Resources: some(rng, 4)}
					if rng.Intn(5) > 0 {
						p.NodeName = nodes[rng.Intn(len(nodes))].Name
					} else {
						p.Phase = PhasePending
					}
					pods = append(pods, p)
					switch {
					case p.NodeName == "":
						batch = append(batch, p)
						decided[p.Name] = true
					case p.Phase == PhaseRunning && rng.Intn(4) == 0:
						batch, victims = append(batch, p), append(victims, p)
						decided[p.Name] = true
					}
				}
				addPods(t, s, pods...)
				a := arc{lo: rng.Int63n(sampleRing), hi: rng.Int63n(sampleRing)}
				if trial%5 == 0 {
					a = wholeRing
				}
				for _, n := range nodes {
					if rng.Intn(6) == 0 && !a.holds(sampleKey(n.Name)) {
						a.extra = append(a.extra, n.Name)
					}
				}
				if err := s.exec(ctx, append(a.write(), loadModelPods(ptrs(batch), ptrs(victims), nil)...)); err != nil {
					t.Fatal(err)
				}
				got := map[string]int64{}
				rows, err := s.DB().Query("select node_name, resource, free from node_resource_free")
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var n, r string
					var f int64
					if err := rows.Scan(&n, &r, &f); err != nil {
						t.Fatal(err)
					}
					if _, dup := got[n+" "+r]; dup {
						t.Errorf("trial %d: node_resource_free holds %s %s twice", trial, n, r)
					}
					got[n+" "+r] = f
				}
				if err := rows.Close(); err != nil {
					t.Fatal(err)
				}
				want := nodeResourceFree(nodes, pods, a, decided)
				if len(want) == 0 {
					empty++
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("trial %d (arc %d..%d, extra %v):\nnode_resource_free %v\nwant               %v", trial, a.lo, a.hi, a.extra, got, want)
				}
				if err := s.exec(ctx, loadModelPods(nil, nil, nil)); err != nil {
					t.Fatal(err)
				}
			}
			if empty == 0 || empty == 25 {
				t.Errorf("%d of 25 trials had no (node, resource) row: the test should see both", empty)
			}
		})
	}
}

// resourceCase is a batch on a small cluster and what must become of it.
type resourceCase struct {
	name  string
	nodes []Node
	bound []Pod
	pods  []Pod
	// want maps each pod of the batch to its node ("" unplaced); a pod
	// with several nodes separated by | may take any of them.
	want map[string]string
}

func resourceCases() []resourceCase {
	big := func(name string, res map[string]int64) Node {
		return Node{Name: name, CPU: 64000, Memory: 64000, Resources: res}
	}
	return []resourceCase{
		{
			name:  "a GPU pod never lands on a node without GPUs",
			nodes: []Node{big("cpu-only", nil), big("gpu-full", map[string]int64{gpu: 1}), big("foo-only", map[string]int64{"example.com/foo": 4})},
			bound: []Pod{{Name: "holder", CPU: 100, NodeName: "gpu-full", Resources: map[string]int64{gpu: 1}}},
			pods:  []Pod{{Name: "trainer", CPU: 100, Resources: map[string]int64{gpu: 1}}},
			want:  map[string]string{"trainer": ""},
		},
		{
			name:  "two 1-GPU pods and a 2-GPU pod fill nodes of 2, 1 and 1 GPUs",
			nodes: []Node{big("g2", map[string]int64{gpu: 2}), big("g1a", map[string]int64{gpu: 1}), big("g1b", map[string]int64{gpu: 1})},
			pods: []Pod{{Name: "one-a", CPU: 100, Resources: map[string]int64{gpu: 1}}, {Name: "one-b", CPU: 100, Resources: map[string]int64{gpu: 1}},
				{Name: "two", CPU: 100, Resources: map[string]int64{gpu: 2}}},
			want: map[string]string{"one-a": "g1a|g1b", "one-b": "g1a|g1b", "two": "g2"},
		},
		{
			name:  "hugepages are counted per node: 2 × 300 pages do not fit in 512",
			nodes: []Node{big("huge", map[string]int64{"hugepages-2Mi": 512}), big("plain", nil)},
			pods: []Pod{{Name: "db-a", CPU: 100, Resources: map[string]int64{"hugepages-2Mi": 300}},
				{Name: "db-b", CPU: 100, Resources: map[string]int64{"hugepages-2Mi": 300}}},
			want: map[string]string{"db-a": "huge|", "db-b": "huge|"},
		},
		{
			name:  "the pod count bounds pods that request nothing",
			nodes: []Node{{Name: "small", CPU: 4000, Memory: 4000, Pods: 3}},
			bound: []Pod{{Name: "b1", NodeName: "small"}, {Name: "b2", NodeName: "small"}},
			pods:  []Pod{{Name: "z1"}, {Name: "z2"}, {Name: "z3"}},
			want:  map[string]string{"z1": "small|", "z2": "small|", "z3": "small|"},
		},
		{
			name: "a resource bounds only the pods that request it (an overcommitted node)",
			nodes: []Node{{Name: "over", CPU: 1000, Memory: 1000, Storage: 1000, Resources: map[string]int64{gpu: 1}},
				{Name: "none", CPU: 1000, Memory: 1000, Pods: 1}},
			bound: []Pod{{Name: "hog", CPU: 1500, Memory: 1500, Storage: 1500, NodeName: "over", Resources: map[string]int64{gpu: 2}},
				{Name: "filler", NodeName: "none"}},
			pods: []Pod{{Name: "nothing"}, {Name: "cpu", CPU: 1}, {Name: "memory", Memory: 1}, {Name: "storage", Storage: 1},
				{Name: "gpu", Resources: map[string]int64{gpu: 1}}},
			want: map[string]string{"nothing": "over", "cpu": "", "memory": "", "storage": "", "gpu": ""},
		},
		{
			name:  "finished pods hold no GPU; a request of 0 asks for none",
			nodes: []Node{big("g1", map[string]int64{gpu: 1})},
			bound: []Pod{{Name: "done", NodeName: "g1", Phase: PhaseSucceeded, Resources: map[string]int64{gpu: 1}}},
			pods:  []Pod{{Name: "trainer", Resources: map[string]int64{gpu: 1}}, {Name: "zero", Resources: map[string]int64{"example.com/foo": 0}}},
			want:  map[string]string{"trainer": "g1", "zero": "g1"},
		},
	}
}

// TestScalarResources: the resource cases on every state database, each
// placement also checked by Weave in the database (Verify) and by the Go
// check; where a case lets a pod take one of several nodes (or none), the
// number of pods placed is the most the nodes can take.
func TestScalarResources(t *testing.T) {
	t.Parallel()
	for _, d := range raceDBs(stateDBs()) {
		t.Run(d.name, func(t *testing.T) {
			s := newOn(t, d, Config{})
			for _, c := range resourceCases() {
				t.Run(c.name, func(t *testing.T) {
					emptyState(t, s)
					addNodes(t, s, c.nodes...)
					for _, b := range c.bound {
						if b.Phase == "" {
							b.Phase = PhaseRunning
						}
						addPods(t, s, b)
					}
					addPods(t, s, c.pods...)
					placed, _ := schedule(t, s)
					checkResourceCase(t, c, placed)
				})
			}
		})
	}
}

func checkResourceCase(t *testing.T, c resourceCase, placed map[string]string) {
	t.Helper()
	most := map[string]int{"hugepages are counted per node: 2 × 300 pages do not fit in 512": 1, "the pod count bounds pods that request nothing": 1}
	for _, p := range c.pods {
		ok := false
		for _, n := range splitAlt(c.want[p.Name]) {
			ok = ok || placed[p.Name] == n
		}
		if !ok {
			t.Errorf("%s placed on %q, want %q (all: %v)", p.Name, placed[p.Name], c.want[p.Name], placed)
		}
	}
	if n, ok := most[c.name]; ok && len(placed) != n {
		t.Errorf("placed %v: want %d pods placed", placed, n)
	}
}

func splitAlt(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '|' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

// TestScalarResourcesGoFilter: the Go restatement (FeasibleNodes) agrees
// with the solver pod by pod on the cases' clusters.
func TestScalarResourcesGoFilter(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{})
	for _, c := range raceShare(resourceCases()) {
		emptyState(t, s)
		addNodes(t, s, c.nodes...)
		for _, b := range c.bound {
			if b.Phase == "" {
				b.Phase = PhaseRunning
			}
			addPods(t, s, b)
		}
		for _, p := range c.pods {
			q := normalizePod(p)
			ref := s.State().FeasibleNodes(&q)
			if got := feasibleBySolver(t, s, p); !reflect.DeepEqual(got, ref) {
				t.Errorf("%s, %s: solver %v, Go filter %v", c.name, p.Name, got, ref)
			}
			if fits := s.State().FitsSomewhere(&q); fits != (len(ref) > 0) {
				t.Errorf("%s, %s: FitsSomewhere %v, feasible nodes %v", c.name, p.Name, fits, ref)
			}
		}
	}
}

// TestScalarResourcesCostNothingUnasked: a batch that requests no scalar
// resource reads no row of node_resource_free and grounds nothing for
// H5's scalar file, however many GPUs the nodes and bound pods hold; a
// batch that requests one reads a row per sampled node.
func TestScalarResourcesCostNothingUnasked(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{})
	for i := 0; i < 4; i++ {
		addNodes(t, s, Node{Name: fmt.Sprintf("n%d", i), CPU: 4000, Memory: 4000, Resources: map[string]int64{gpu: 4, "hugepages-1Gi": 2}})
		addPods(t, s, Pod{Name: fmt.Sprintf("b%d", i), CPU: 10, NodeName: fmt.Sprintf("n%d", i), Phase: PhaseRunning, Resources: map[string]int64{gpu: 1}})
	}
	addPods(t, s, Pod{Name: "plain", CPU: 10})
	if placed, _ := schedule(t, s); len(placed) != 1 {
		t.Fatalf("placed %v", placed)
	}
	st := s.LastStats()
	if st.Rows["node_resource_free"] != 0 || st.PerView["h05b_scalar_resources"] != 0 {
		t.Errorf("a batch without scalar requests read %d rows of node_resource_free and grounded %d constraints of h05b",
			st.Rows["node_resource_free"], st.PerView["h05b_scalar_resources"])
	}
	addPods(t, s, Pod{Name: "trainer", CPU: 10, Resources: map[string]int64{gpu: 2}})
	if placed, _ := schedule(t, s); len(placed) != 1 {
		t.Fatalf("placed %v", placed)
	}
	if got := s.LastStats().Rows["node_resource_free"]; got != 4 {
		t.Errorf("a batch asking for GPUs read %d rows of node_resource_free, want 4", got)
	}
}

// TestScalarResourcesPreemption: the victims free what they hold: a
// GPU pod of high priority evicts the low-priority pod holding the node's
// GPU and no other, on every state database.
func TestScalarResourcesPreemption(t *testing.T) {
	t.Parallel()
	for _, d := range raceDBs(stateDBs()) {
		t.Run(d.name, func(t *testing.T) {
			s := newOn(t, d, Config{})
			addNodes(t, s, Node{Name: "g1", CPU: 4000, Memory: 4000, Resources: map[string]int64{gpu: 1}},
				Node{Name: "cpu-only", CPU: 4000, Memory: 4000})
			addPods(t, s,
				Pod{Name: "low-gpu", CPU: 100, Priority: 1, NodeName: "g1", Phase: PhaseRunning, Resources: map[string]int64{gpu: 1}},
				Pod{Name: "low-cpu", CPU: 3000, Priority: 1, NodeName: "g1", Phase: PhaseRunning},
				Pod{Name: "low-other", CPU: 3000, Priority: 1, NodeName: "cpu-only", Phase: PhaseRunning},
				Pod{Name: "trainer", CPU: 500, Priority: 10, Resources: map[string]int64{gpu: 1}})
			if placed, _ := schedule(t, s); len(placed) != 0 {
				t.Fatalf("the placement model placed %v", placed)
			}
			bs, ev, us, err := s.PreemptPods(context.Background(), []string{"trainer"})
			if err != nil {
				t.Fatal(err)
			}
			sort.Slice(ev, func(i, j int) bool { return ev[i].Pod < ev[j].Pod })
			if len(bs) != 1 || bs[0] != (Binding{"trainer", "g1"}) || !reflect.DeepEqual(ev, []Eviction{{"low-gpu", "g1"}}) || len(us) != 0 {
				t.Fatalf("bindings %v evictions %v unschedulable %v; want trainer → g1 evicting low-gpu", bs, ev, us)
			}
		})
	}
}

// TestScalarResourcesDisabledWithH5: disabling H5 drops both of its files
// and the Go check's scalar requests with them.
func TestScalarResourcesDisabledWithH5(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{DisabledPolicies: []string{"H5"}})
	addNodes(t, s, Node{Name: "cpu-only", CPU: 4000, Memory: 4000})
	addPods(t, s, Pod{Name: "trainer", CPU: 100, Resources: map[string]int64{gpu: 1}})
	if placed, _ := schedule(t, s); placed["trainer"] != "cpu-only" {
		t.Fatalf("with H5 disabled, placed %v", placed)
	}
}
