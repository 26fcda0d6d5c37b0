package scheduler

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestFitsSomewhereAgreesWithFeasibleNodes: FitsSomewhere (Check on the
// nodes with room only), and Fitter's, answer as the reference filter (FeasibleNodes non-empty) on random states: nodes of several sizes, one unschedulable, one
// tainted, pods bound with hostname anti-affinity and node selectors, full and free nodes.
func TestFitsSomewhereAgreesWithFeasibleNodes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(1))
	fits, fitsNot := 0, 0
	for round := 0; round < 40; round++ {
		st, pod := randomFitState(rng, 8, 20)
		fitter := st.Fitter() // one for the round's pods, as weave-scheduler's triage uses it
		for i := 0; i < 10; i++ {
			p := pod(fmt.Sprintf("p%d", i))
			p.Phase = PhasePending
			st.Pods[p.Name] = p
			want := len(st.FeasibleNodes(p)) > 0
			got := st.FitsSomewhere(p)
			if got != want {
				t.Fatalf("round %d, pod %+v: FitsSomewhere says %v, FeasibleNodes %v", round, *p, got, st.FeasibleNodes(p))
			}
			if f := fitter(p); f != want {
				t.Fatalf("round %d, pod %+v: Fitter says %v, FeasibleNodes %v", round, *p, f, st.FeasibleNodes(p))
			}
			if st.Pods[p.Name] != p || p.NodeName != "" {
				t.Fatalf("FitsSomewhere changed the state's pod %s", p.Name)
			}
			if want {
				fits++
			} else {
				fitsNot++
			}
			delete(st.Pods, p.Name)
		}
	}
	if fits < 50 || fitsNot < 50 {
		t.Fatalf("the states do not exercise both answers: %d fit, %d fit no node", fits, fitsNot)
	}
}

// randomFitState is a state of TestFitsSomewhereAgreesWithFeasibleNodes:
// 2 to 9 nodes of several sizes, some unschedulable or tainted, with pods
// bound as long as they fit, and the maker of its pods, whose requests
// take cpus × mems shapes.
func randomFitState(rng *rand.Rand, cpus, mems int) (*State, func(name string) *Pod) {
	st := NewState()
	nodes := 2 + rng.Intn(8)
	for i := 0; i < nodes; i++ {
		name := fmt.Sprintf("n%d", i)
		n := &Node{Name: name, CPU: int64(1000 * (1 + rng.Intn(4))), Memory: 8000, Storage: 1 << 20, Pods: int64(2 + rng.Intn(4)),
			Labels: map[string]string{LabelHostname: name, "pool": fmt.Sprint(i % 2)}}
		switch rng.Intn(6) {
		case 0:
			n.Unschedulable = true
		case 1:
			n.Taints = []Taint{{Key: "dedicated", Value: "x", Effect: "NoSchedule"}}
		}
		st.Nodes[name] = n
	}
	pod := func(name string) *Pod {
		p := &Pod{Name: name, Namespace: "w", SchedulerName: "weave-scheduler", Phase: PhaseRunning,
			CPU: int64(250 * (1 + rng.Intn(cpus))), Memory: int64(100 * (1 + rng.Intn(mems))), Labels: map[string]string{}}
		if rng.Intn(3) == 0 {
			p.Labels["app"] = "solo"
			p.Affinity = []PodAffinityTerm{{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"app": "solo"}), TopologyKey: LabelHostname}}
		}
		if rng.Intn(4) == 0 {
			p.NodeSelector = map[string]string{"pool": fmt.Sprint(rng.Intn(2))}
		}
		return p
	}
	for i := 0; i < 3*nodes; i++ { // bound pods, as long as they fit
		p := pod(fmt.Sprintf("b%d", i))
		p.NodeName = fmt.Sprintf("n%d", rng.Intn(nodes))
		st.Pods[p.Name] = p
		if st.Check([]*Pod{p}) != nil {
			delete(st.Pods, p.Name)
		}
	}
	return st, pod
}

// TestRoomIndexAgreesWithFeasibleNodesAsPodsMove: the index of a
// preemption plan's fits-alone pass answers as the reference filter while
// bound pods leave their nodes, are asked about, and come back or stay
// away (the nodes with room for a shape are listed once; a node whose use
// went down since is tried too). The pod asked about is the one taken off
// or the same pod six times as large. Few shapes, so most answers come from a
// list made before the moves. Listing the lowered nodes out (trying the
// lists only) fails it.
func TestRoomIndexAgreesWithFeasibleNodesAsPodsMove(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(2))
	fits, fitsNot, fromList := 0, 0, 0
	for round := 0; round < 150; round++ {
		st, _ := randomFitState(rng, 2, 2)
		ix := newRoomIndex(st, st.usage(nil))
		var bound []*Pod
		for _, name := range sortedKeys(st.Pods) {
			bound = append(bound, st.Pods[name])
		}
		rng.Shuffle(len(bound), func(i, j int) { bound[i], bound[j] = bound[j], bound[i] })
		for _, p := range bound {
			node := p.NodeName
			p.NodeName = ""
			ix.move(p, node, -1)
			// Asked about: the pod, or the pod six times as large (which its own
			// node may not hold).
			q := p
			if rng.Intn(2) == 0 {
				c := *p
				c.CPU, c.Memory = 6*p.CPU, 6*p.Memory
				q = &c
				st.Pods[p.Name] = q
			}
			if _, listed := ix.byShape[shapeOf(q)]; listed {
				fromList++
			}
			want := len(st.FeasibleNodes(q)) > 0
			if got := ix.fitsSomewhere(q); got != want {
				t.Fatalf("round %d, pod %+v off %s: the index says %v, FeasibleNodes %v", round, *q, node, got, st.FeasibleNodes(q))
			}
			if st.Pods[p.Name] != q || q.NodeName != "" {
				t.Fatalf("the index changed the state's pod %s", p.Name)
			}
			st.Pods[p.Name] = p
			if want {
				fits++
			} else {
				fitsNot++
			}
			if rng.Intn(2) == 0 { // back on its node, or gone for good
				p.NodeName = node
				ix.move(p, node, 1)
			} else {
				delete(st.Pods, p.Name)
			}
		}
	}
	if fits < 50 || fitsNot < 50 || fromList < 100 {
		t.Fatalf("the states do not exercise the index: %d fit, %d fit no node, %d answers from a list made earlier", fits, fitsNot, fromList)
	}
}

// TestFitsSomewhereAgreesOnEveryPolicy: on the check's random states (every
// policy, inter-pod affinity and anti-affinity of every topology, spread
// constraints, bound pods of every phase), FitsSomewhere answers as the
// reference (FeasibleNodes non-empty): the Filters it applies before Check
// (interPodFilters) turn down no node Check accepts. The trials exercise
// both answers for pods with inter-pod terms or hard spread constraints.
func TestFitsSomewhereAgreesOnEveryPolicy(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(27))
	fits, fitsNot := 0, 0
	for trial := 0; trial < 1500; trial++ {
		st := randomCheckState(rng)
		p := randomCheckPod(rng, fmt.Sprintf("p%d", trial))
		st.Pods[p.Name] = p
		want := len(st.FeasibleNodes(p)) > 0
		if got := st.FitsSomewhere(p); got != want {
			t.Fatalf("trial %d, pod %+v: FitsSomewhere says %v, FeasibleNodes %v", trial, *p, got, st.FeasibleNodes(p))
		}
		if !interPod(p) {
			continue
		}
		if want {
			fits++
		} else {
			fitsNot++
		}
	}
	t.Logf("pods with inter-pod terms or hard spread: %d fit, %d fit no node", fits, fitsNot)
	if fits < 100 || fitsNot < 100 {
		t.Fatalf("the trials do not exercise both answers: %d fit, %d fit no node", fits, fitsNot)
	}
}
