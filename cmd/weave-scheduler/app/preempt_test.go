package app

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/weavesql/weave/scheduler"
)

// TestFitterAgreesWithFeasibleNodes: the triage's fitter answers as the reference filter of package
// scheduler (FeasibleNodes non-empty) on random states: nodes of several sizes, one unschedulable, one
// tainted, pods bound with hostname anti-affinity and node selectors, full and free nodes.
func TestFitterAgreesWithFeasibleNodes(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	fits, fitsNot := 0, 0
	for round := 0; round < 40; round++ {
		st := scheduler.NewState()
		nodes := 2 + rng.Intn(8)
		for i := 0; i < nodes; i++ {
			name := fmt.Sprintf("n%d", i)
			n := &scheduler.Node{Name: name, CPU: int64(1000 * (1 + rng.Intn(4))), Memory: 8000, Storage: 1 << 20, Pods: int64(2 + rng.Intn(4)),
				Labels: map[string]string{scheduler.LabelHostname: name, "pool": fmt.Sprint(i % 2)}}
			switch rng.Intn(6) {
			case 0:
				n.Unschedulable = true
			case 1:
				n.Taints = []scheduler.Taint{{Key: "dedicated", Value: "x", Effect: "NoSchedule"}}
			}
			st.Nodes[name] = n
		}
		pod := func(name string) *scheduler.Pod {
			p := &scheduler.Pod{Name: name, Namespace: "w", SchedulerName: "weave-scheduler", Phase: scheduler.PhaseRunning,
				CPU: int64(250 * (1 + rng.Intn(8))), Memory: int64(100 * (1 + rng.Intn(20))), Labels: map[string]string{}}
			if rng.Intn(3) == 0 {
				p.Labels["app"] = "solo"
				p.Affinity = []scheduler.PodAffinityTerm{{Anti: true, Required: true, Key: "app", Value: "solo", TopologyKey: scheduler.LabelHostname}}
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
			if st.Check([]*scheduler.Pod{p}) != nil {
				delete(st.Pods, p.Name)
			}
		}
		for i := 0; i < 10; i++ {
			p := pod(fmt.Sprintf("p%d", i))
			p.Phase = scheduler.PhasePending
			st.Pods[p.Name] = p
			want := len(st.FeasibleNodes(p)) > 0
			got := newFitter(st).fitsSomewhere(p)
			if got != want {
				t.Fatalf("round %d, pod %+v: fitter says %v, FeasibleNodes %v", round, *p, got, st.FeasibleNodes(p))
			}
			if st.Pods[p.Name] != p || p.NodeName != "" {
				t.Fatalf("the fitter changed the state's pod %s", p.Name)
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

// TestPreemptionBasicSmall is scheduler_perf's PreemptionBasic on 20 nodes: each node is full with four
// 900m pods of priority 1, and 20 pods of 3 CPU and priority 10 each need three of them evicted. Every
// high-priority pod is bound, and none is reported unschedulable on the way: a plan that places only part
// of its pods (the solver stops once it no longer improves) is followed by another plan for the rest, not
// by FailedScheduling and a backoff.
func TestPreemptionBasicSmall(t *testing.T) {
	const nodes = 20
	var objs []runtime.Object
	for i := 0; i < nodes; i++ {
		n := fmt.Sprintf("n%d", i)
		objs = append(objs, testNode(n, "4", ""))
		for k := 0; k < 4; k++ {
			objs = append(objs, testPod(fmt.Sprintf("low-%d-%d", i, k), "900m", 1, n))
		}
	}
	for i := 0; i < nodes; i++ {
		objs = append(objs, testPod(fmt.Sprintf("high-%d", i), "3", 10, ""))
	}
	f := newFakeAPI(t, objs...)
	s := startFake(t, f, nil)
	bound := func() int {
		n := 0
		for i := 0; i < nodes; i++ {
			if p := f.pod(t, "w", fmt.Sprintf("high-%d", i)); p != nil && p.Spec.NodeName != "" {
				n++
			}
		}
		return n
	}
	eventually(t, "every high-priority pod bound", 60*time.Second, func() bool { return bound() == nodes })
	for i := 0; i < nodes; i++ {
		if evs := f.events("w", fmt.Sprintf("high-%d", i)); hasEvent(evs, "FailedScheduling") {
			t.Errorf("high-%d reported unschedulable: %v", i, evs)
		}
	}
	if got := len(f.evictions()); got != 3*nodes {
		t.Errorf("%d evictions, want %d", got, 3*nodes)
		for i := 0; i < nodes; i++ {
			p := f.pod(t, "w", fmt.Sprintf("high-%d", i))
			t.Logf("high-%d on %s nominated %s", i, p.Spec.NodeName, p.Status.NominatedNodeName)
		}
		t.Logf("evictions %v", f.evictions())
	}
	if v := metricValue(s, "weave_scheduler_pods_unschedulable_total"); v != 0 {
		t.Errorf("pods_unschedulable_total %v", v)
	}
}
