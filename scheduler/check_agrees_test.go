package scheduler

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// randomCheckState is a small cluster for the check's differential test:
// nodes in two zones with a pool label (one without a zone, one not ready
// or unschedulable now and then), and bound pods of every phase with
// groups, services, hostname and zone (anti-)affinity, spreading
// constraints, group limits and host ports, on known and unknown nodes.
func randomCheckState(rng *rand.Rand) *State {
	st := NewState()
	nodes := 1 + rng.Intn(6)
	for i := 0; i < nodes; i++ {
		n := normalizeNode(Node{Name: fmt.Sprintf("n%d", i), Zone: []string{"z0", "z1", ""}[rng.Intn(3)],
			CPU: int64(1000 * (1 + rng.Intn(4))), Memory: 8000, Storage: 1 << 20, Pods: int64(2 + rng.Intn(6)),
			Labels: map[string]string{"pool": fmt.Sprint(rng.Intn(2))}, NotReady: rng.Intn(8) == 0, Unschedulable: rng.Intn(8) == 0})
		if rng.Intn(3) == 0 {
			n.Resources = map[string]int64{"example.com/gpu": int64(1 + rng.Intn(2))}
		}
		if rng.Intn(5) == 0 {
			n.Taints = []Taint{{Key: "dedicated", Effect: []string{"NoSchedule", "NoExecute", "PreferNoSchedule"}[rng.Intn(3)]}}
		}
		st.Nodes[n.Name] = &n
	}
	st.Namespaces = randomNamespaceLabels(rng)
	for i := 0; i < rng.Intn(4*nodes+1); i++ {
		p := randomCheckPod(rng, fmt.Sprintf("b%d", i))
		p.Phase = []string{PhaseRunning, PhaseRunning, PhasePending, PhaseSucceeded}[rng.Intn(4)]
		p.NodeName = fmt.Sprintf("n%d", rng.Intn(nodes+1)) // now and then a node the state lacks
		st.Pods[p.Name] = p
	}
	return st
}

func randomCheckPod(rng *rand.Rand, name string) *Pod {
	apps := []string{"a", "b", "c"}
	keys := []string{LabelHostname, LabelZone, "pool"}
	app := apps[rng.Intn(len(apps))]
	p := &Pod{Name: name, Namespace: []string{"w", "w", "x"}[rng.Intn(3)], Phase: PhasePending,
		CPU: int64(250 * rng.Intn(6)), Memory: int64(500 * rng.Intn(6)), Labels: randomLabels(rng)}
	p.Labels["app"] = app
	p.Terminating = rng.Intn(8) == 0
	if rng.Intn(2) == 0 {
		p.Group = "g-" + app
	}
	if rng.Intn(5) == 0 {
		p.Service = "svc-" + app
	}
	if rng.Intn(4) == 0 {
		p.MaxPerNode = int64(1 + rng.Intn(2))
	}
	for j := 0; j < rng.Intn(3); j++ {
		p.Affinity = append(p.Affinity, randomTerm(rng, keys))
	}
	for j := 0; j < rng.Intn(3); j++ {
		c := randomSpread(rng, keys)
		if rng.Intn(2) == 0 {
			c.Selector = SelectLabels(map[string]string{"app": app})
		}
		p.Spread = append(p.Spread, c)
	}
	if rng.Intn(6) == 0 {
		p.NodeSelector = map[string]string{"pool": "1"}
	}
	if rng.Intn(6) == 0 {
		p.Tolerations = []Toleration{{Key: "dedicated", Operator: "Exists"}}
	}
	if rng.Intn(5) == 0 {
		p.HostPorts = []HostPort{{Port: int64(8080 + rng.Intn(2)), Protocol: "TCP"}}
	}
	if rng.Intn(4) == 0 {
		p.Resources = map[string]int64{"example.com/gpu": int64(1 + rng.Intn(2))}
	}
	return p
}

// TestCheckAgreesWithTheReference: Check, which reads only the bound pods
// that the batch's placements can involve, returns what the reference
// (every bound pod for every question) returns, error text included, for
// random batches placed at random (unplaced, on any node, on a node the
// state lacks) over random states; both accept and both reject often.
func TestCheckAgreesWithTheReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(3))
	accepted, rejected := 0, 0
	reasons := map[string]int{}
	for trial := 0; trial < 4000; trial++ {
		st := randomCheckState(rng)
		var batch []*Pod
		for i := 0; i < 1+rng.Intn(5); i++ {
			p := randomCheckPod(rng, fmt.Sprintf("p%d", i))
			if rng.Intn(5) > 0 {
				p.NodeName = fmt.Sprintf("n%d", rng.Intn(len(st.Nodes)+1))
			}
			st.Pods[p.Name] = p
			batch = append(batch, p)
		}
		if rng.Intn(10) == 0 && len(st.Pods) > len(batch) { // a bound pod re-decided in the batch (preemption)
			for _, q := range st.Pods {
				if q.Name[0] == 'b' {
					batch = append(batch, q)
					break
				}
			}
		}
		want, got := st.referenceCheck(batch), st.Check(batch)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("trial %d: Check says %v\nthe reference %v", trial, got, want)
		}
		if want == nil {
			accepted++
		} else {
			rejected++
			for _, k := range []string{"H14 affinity unmet", "H14 affinity: the node", "H14 anti-affinity with", "is anti-affine to it", "N3 skew", "N3 the node"} {
				if strings.Contains(want.Error(), k) {
					reasons[k]++
				}
			}
		}
	}
	if accepted < 500 || rejected < 500 {
		t.Fatalf("the trials do not exercise both answers: %d accepted, %d rejected", accepted, rejected)
	}
	t.Log(reasons)
	for k, n := range reasons {
		if n < 20 {
			t.Errorf("the trials reject for %q %d times only", k, n)
		}
	}
	if len(reasons) < 6 {
		t.Errorf("the trials reject for %d of the 6 H14 and N3 reasons only: %v", len(reasons), reasons)
	}
}

// A pod of a service placed on a node the state does not have is reported,
// not a nil dereference in H15. (weave-scheduler drops a placement on a
// node deleted since the solve before it checks the rest again, but Check
// is public: a caller may ask about any placement.)
func TestCheckServicePodOnADeletedNode(t *testing.T) {
	st := NewState()
	n := normalizeNode(Node{Name: "kept", Zone: "z0", CPU: 4000, Memory: 4000, Storage: 1000, Pods: 10})
	st.Nodes[n.Name] = &n
	st.Pods["bound"] = &Pod{Name: "bound", Namespace: "w", Phase: PhaseRunning, NodeName: "kept", Service: "web"}
	p := &Pod{Name: "p", Namespace: "w", Phase: PhasePending, NodeName: "gone", Service: "web"}
	st.Pods[p.Name] = p
	err := st.Check([]*Pod{p})
	if err == nil || err.Error() != "p on unknown node gone" {
		t.Fatalf("Check: %v, want p on unknown node gone", err)
	}
}

// WithPolicyState lends the state itself when every policy is enabled (no
// copy per batch), and a relaxed copy when one is disabled, leaving the
// state as it was.
func TestWithPolicyStateCopiesOnlyToRelax(t *testing.T) {
	t.Parallel()
	for _, off := range [][]string{nil, {"H5"}} {
		s := newTest(t, Config{DisabledPolicies: off})
		addNodes(t, s, Node{Name: "n1", CPU: 1000, Memory: 1000, Storage: 1000, Pods: 10})
		var lent *State
		s.WithPolicyState(func(st *State) {
			lent = st
			if got := st.Nodes["n1"].CPU; off == nil && got != 1000 || off != nil && got <= 1000 {
				t.Errorf("policies off %v: n1's CPU reads %d", off, got)
			}
		})
		if same := lent == s.state; same != (off == nil) {
			t.Errorf("policies off %v: the state itself lent: %v", off, same)
		}
		if got := s.state.Nodes["n1"].CPU; got != 1000 {
			t.Errorf("policies off %v: the state's n1 has CPU %d after the call", off, got)
		}
	}
}

// BenchmarkRecheck: checking a batch of 100 placements (weave-scheduler's
// re-check before binding) on 5,000 nodes running 50,000 pods, on a copy of
// the state (PolicyState, as the re-check did before commit 972e1f2) and on
// the state itself (WithPolicyState).
func BenchmarkRecheck(b *testing.B) {
	s := newTest(b, Config{})
	ctx := context.Background()
	var nodes []Node
	for i := 0; i < 5000; i++ {
		nodes = append(nodes, Node{Name: fmt.Sprintf("n-%04d", i), Zone: fmt.Sprintf("z%d", i%3), CPU: 64000, Memory: 256000, Storage: 100000, Pods: 110})
	}
	addNodes(b, s, nodes...)
	for i := 0; i < 50000; i++ {
		p := Pod{Name: fmt.Sprintf("r-%d", i), Namespace: "w", CPU: 100, Memory: 128, NodeName: nodes[i%5000].Name, Phase: PhaseRunning,
			Labels: map[string]string{"app": fmt.Sprint("app-", i%50)}}
		if err := s.UpsertPod(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	var names []string
	for i := 0; i < 100; i++ {
		p := Pod{Name: fmt.Sprintf("p-%d", i), Namespace: "w", CPU: 100, Memory: 128, NodeName: nodes[(7*i)%5000].Name, Phase: PhasePending,
			Labels:   map[string]string{"app": "web"},
			Affinity: []PodAffinityTerm{{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"app": "web"}), TopologyKey: LabelHostname}}}
		if err := s.UpsertPod(ctx, p); err != nil {
			b.Fatal(err)
		}
		names = append(names, p.Name)
	}
	check := func(st *State) {
		batch := make([]*Pod, len(names))
		for i, n := range names {
			batch[i] = st.Pods[n]
		}
		if err := st.Check(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("copy", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			check(s.PolicyState())
		}
	})
	b.Run("in-place", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s.WithPolicyState(check)
		}
	})
}
