package scheduler

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// randomSelectorCluster: nodes in two zones (one without a zone label), a
// pool label, a tainted node now and then; namespaces with labels; bound
// pods of random labels, inter-pod terms and spread constraints.
func randomSelectorCluster(t testing.TB, s *Scheduler, rng *rand.Rand) {
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		n := Node{Name: fmt.Sprintf("n%d", i), Zone: []string{"z0", "z1", "z0", "z1", ""}[i], CPU: 8000, Memory: 8000, Storage: 1000, Pods: 20,
			Labels: map[string]string{"pool": fmt.Sprint(rng.Intn(2))}}
		if rng.Intn(5) == 0 {
			n.Taints = []Taint{{Key: "dedicated", Effect: "NoSchedule"}}
		}
		addNodes(t, s, n)
	}
	for ns, l := range randomNamespaceLabels(rng) {
		if err := s.UpsertNamespace(ctx, ns, l); err != nil {
			t.Fatal(err)
		}
	}
	keys := []string{LabelHostname, LabelZone, "pool"}
	for i := 0; i < 4+rng.Intn(6); i++ {
		p := Pod{Name: fmt.Sprintf("b%d", i), Namespace: randomNamespaces[rng.Intn(len(randomNamespaces))], Labels: randomLabels(rng),
			NodeName: fmt.Sprintf("n%d", rng.Intn(5)), Phase: PhaseRunning, CPU: 10, Terminating: rng.Intn(8) == 0}
		if rng.Intn(2) == 0 {
			p.Affinity = []PodAffinityTerm{randomTerm(rng, keys)}
			p.Affinity[0].Anti = true
		}
		addPods(t, s, p)
	}
}

// randomSelectorPod: a pod with random labels, up to two inter-pod terms
// and up to two spread constraints, over the same keys.
func randomSelectorPod(rng *rand.Rand, name string) Pod {
	keys := []string{LabelHostname, LabelZone, "pool"}
	p := Pod{Name: name, Namespace: randomNamespaces[rng.Intn(len(randomNamespaces))], Labels: randomLabels(rng), CPU: 10}
	for j := rng.Intn(3); j > 0; j-- {
		p.Affinity = append(p.Affinity, randomTerm(rng, keys))
	}
	for j := rng.Intn(3); j > 0; j-- {
		c := randomSpread(rng, keys)
		c.Hard = true
		if c.MaxSkew == 0 {
			c.MaxSkew = 1
		}
		if rng.Intn(2) == 0 {
			c.Selector = &LabelSelector{MatchLabels: map[string]string{"app": p.Labels["app"]}}
		}
		p.Spread = append(p.Spread, c)
	}
	if rng.Intn(5) == 0 {
		p.Tolerations = []Toleration{{Key: "dedicated", Operator: "Exists"}}
	}
	if rng.Intn(6) == 0 {
		p.NodeSelector = map[string]string{"pool": "1"}
	}
	return p
}

// TestSelectorPoliciesAgreeWithTheFilters: for one pod at a time, the nodes
// the placement model accepts (H14 and N3 in SQL, on pod_match) are those
// the Go filters accept (InterPodAffinity and PodTopologySpread as
// kube-scheduler's plugins read them), over random clusters, terms,
// selectors, namespaces and spread constraints. Both answers are common.
func TestSelectorPoliciesAgreeWithTheFilters(t *testing.T) {
	cases := 40
	if testing.Short() {
		cases = 10
	}
	if raceDetector {
		cases = 5
	}
	var narrowing atomic.Int64
	// The cases run in parallel (each has its own scheduler and database);
	// the group ends when they all have.
	t.Run("seeds", func(t *testing.T) {
		for seed := 0; seed < cases; seed++ {
			t.Run(fmt.Sprint(seed), func(t *testing.T) {
				t.Parallel()
				rng := rand.New(rand.NewSource(int64(seed)))
				s := newTest(t, Config{Timeout: 5 * time.Second})
				randomSelectorCluster(t, s, rng)
				p := randomSelectorPod(rng, "p")
				st := s.State()
				np := normalizePod(p)
				ref := st.FeasibleNodes(&np)
				got := feasibleBySolver(t, s, p)
				if !reflect.DeepEqual(got, ref) && !(len(got) == 0 && len(ref) == 0) {
					t.Errorf("seed %d: pod %+v\nsolver %v, Go filters %v", seed, p, got, ref)
				}
				if len(ref) > 0 && len(ref) < 5 {
					narrowing.Add(1)
				}
			})
		}
	})
	some := int(narrowing.Load())
	if some < cases/4 {
		t.Fatalf("only %d of %d cases rule out some nodes and not all", some, cases)
	}
}

// TestSelectorBatchesHaveABindingOrder: random batches of pods with
// selectors, namespaces, self-affine groups, anti-affinity and spread
// constraints, each solved jointly with Verify and accepted by the Go
// check (an order of binding in which every pod passes the Filters exists,
// or ScheduleBatch fails with ErrCheck); the model places most pods.
func TestSelectorBatchesHaveABindingOrder(t *testing.T) {
	t.Parallel()
	placedAll, total := 0, 0
	seeds := int64(12)
	if raceDetector {
		seeds = 3
	}
	for seed := int64(1); seed <= seeds; seed++ {
		rng := rand.New(rand.NewSource(seed))
		s := newTest(t, Config{BatchSize: 10, Timeout: 3 * time.Second, Seed: seed})
		randomSelectorCluster(t, s, rng)
		var pods []Pod
		for i := 0; i < 10; i++ {
			p := randomSelectorPod(rng, fmt.Sprintf("p%02d", i))
			if rng.Intn(3) == 0 && i > 0 { // a replica of the previous pod
				q := pods[i-1]
				q.Name = p.Name
				p = q
			}
			pods = append(pods, p)
			addPods(t, s, p)
		}
		placed, _ := schedule(t, s)
		total += len(pods)
		placedAll += len(placed)
		if err := s.State().Check(nil); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	if placedAll < total/3 {
		t.Fatalf("%d of %d pods placed", placedAll, total)
	}
}

// TestSelfAffineGroupSharesADomain: a self-affine group with no pod bound
// is placed at once in one domain of each term's key (the first bound is
// exempt, every other needs it): all in one zone, all on one node.
func TestSelfAffineGroupSharesADomain(t *testing.T) {
	t.Parallel()
	for _, key := range []string{LabelZone, LabelHostname} {
		t.Run(key, func(t *testing.T) {
			s := newTest(t, Config{Timeout: 5 * time.Second})
			for i := 0; i < 6; i++ {
				addNodes(t, s, Node{Name: fmt.Sprintf("n%d", i), Zone: fmt.Sprintf("z%d", i%3), CPU: 1000, Memory: 1000, Storage: 1000, Pods: 10})
			}
			g := map[string]string{"app": "g", "tier": "x"}
			for i := 0; i < 4; i++ {
				addPods(t, s, Pod{Name: fmt.Sprintf("g%d", i), Labels: g, CPU: 300,
					Affinity: []PodAffinityTerm{{Required: true, Selector: SelectLabels(g), TopologyKey: key}}})
			}
			placed, us := schedule(t, s)
			st := s.State()
			domains := map[string]bool{}
			for _, n := range placed {
				d, _ := st.label(n, key)
				domains[d] = true
			}
			// 4 × 300m on nodes of 1000m: a node takes three.
			want := 4
			if key == LabelHostname {
				want = 3
			}
			if len(placed) != want || len(domains) != 1 {
				t.Fatalf("placed %v (unschedulable %v): %d in %d domains, want %d in one", placed, us, len(placed), len(domains), want)
			}
		})
	}
}

// TestAsymmetricAntiAffinityInABatch: a pod whose anti-affinity term
// selects other pods of the batch that have no such term keeps away from
// them (h14f), and so does a pod a batch-mate's term selects.
func TestAsymmetricAntiAffinityInABatch(t *testing.T) {
	t.Parallel()
	for _, key := range []string{LabelZone, LabelHostname} {
		t.Run(key, func(t *testing.T) {
			s := newTest(t, Config{Timeout: 5 * time.Second})
			for i := 0; i < 4; i++ {
				addNodes(t, s, Node{Name: fmt.Sprintf("n%d", i), Zone: fmt.Sprintf("z%d", i%2), CPU: 4000, Memory: 4000, Storage: 1000, Pods: 10})
			}
			web := map[string]string{"app": "web"}
			addPods(t, s,
				Pod{Name: "loner", Labels: map[string]string{"app": "loner"}, CPU: 100,
					Affinity: []PodAffinityTerm{{Anti: true, Required: true, Selector: SelectLabels(web), TopologyKey: key}}},
				Pod{Name: "web1", Labels: web, CPU: 100}, Pod{Name: "web2", Labels: web, CPU: 100})
			placed, us := schedule(t, s)
			if len(placed) != 3 {
				t.Fatalf("placed %v, unschedulable %v", placed, us)
			}
			st := s.State()
			for _, w := range []string{"web1", "web2"} {
				if st.sameDomain(placed["loner"], placed[w], key) {
					t.Errorf("loner on %s shares the %s domain of %s on %s", placed["loner"], key, w, placed[w])
				}
			}
		})
	}
}

// TestCheckRejectsACycleOfSupport: two pods whose required affinity terms
// each select the other, with no pod bound, placed apart: neither can be
// bound first (the one bound first finds no pod of its terms and does not
// match them itself), so the Go check rejects the placement.
func TestCheckRejectsACycleOfSupport(t *testing.T) {
	st := NewState()
	for _, n := range []string{"a", "b"} {
		nd := normalizeNode(Node{Name: n, CPU: 1000, Memory: 1000, Storage: 1000, Pods: 10})
		st.Nodes[n] = &nd
	}
	x := &Pod{Name: "x", Namespace: "w", Phase: PhasePending, NodeName: "a", Labels: map[string]string{"app": "x"},
		Affinity: []PodAffinityTerm{{Required: true, Selector: SelectLabels(map[string]string{"app": "y"}), TopologyKey: LabelHostname}}}
	y := &Pod{Name: "y", Namespace: "w", Phase: PhasePending, NodeName: "a", Labels: map[string]string{"app": "y"},
		Affinity: []PodAffinityTerm{{Required: true, Selector: SelectLabels(map[string]string{"app": "x"}), TopologyKey: LabelHostname}}}
	st.Pods["x"], st.Pods["y"] = x, y
	err := st.Check([]*Pod{x, y})
	if err == nil || !strings.Contains(err.Error(), "H14 affinity unmet") {
		t.Fatalf("Check: %v, want both unmet (no order)", err)
	}
	// One of them bound already breaks the cycle.
	y.Phase = PhaseRunning
	if err := st.Check([]*Pod{x}); err != nil {
		t.Fatalf("with y bound: %v", err)
	}
}
