package app

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

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
