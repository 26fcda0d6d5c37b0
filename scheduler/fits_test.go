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
				CPU: int64(250 * (1 + rng.Intn(8))), Memory: int64(100 * (1 + rng.Intn(20))), Labels: map[string]string{}}
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
