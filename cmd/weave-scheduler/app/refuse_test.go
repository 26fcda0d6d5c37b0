package app

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// A pod using a field weave-scheduler does not support stays pending, named in its event and condition; a
// gated pod is not tried, nor a pod of a PodGroup that does not exist; the others are placed as before.
func TestDecideRefusesUnsupportedFieldsAndSkipsGatedPods(t *testing.T) {
	claim := testPod("claim", "100m", 0, "")
	claim.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("gpu-claim")}}
	gate := testPod("gate", "100m", 0, "")
	gate.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/admission"}}
	huge := testPod("huge", "64", 0, "")
	group := testPod("group", "100m", 0, "")
	group.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To("training")}
	plain := testPod("plain", "100m", 0, "")
	other := testPod("other", "100m", 0, "")
	other.Spec.SchedulerName = "default-scheduler"
	d, err := Decide(context.Background(), DefaultConfig(), Snapshot{
		Nodes: []*v1.Node{testNode("n1", "4", "")},
		Pods:  []*v1.Pod{claim, gate, huge, group, plain, other},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Bindings["w/plain"]; got != "n1" || len(d.Bindings) != 1 {
		t.Errorf("bindings %v, want only w/plain on n1", d.Bindings)
	}
	if _, ok := d.Unschedulable["w/huge"]; !ok || len(d.Unschedulable) != 1 {
		t.Errorf("unschedulable %v, want only w/huge", d.Unschedulable)
	}
	if msg := d.Refused["w/claim"]; !strings.Contains(msg, "spec.resourceClaims") || len(d.Refused) != 1 {
		t.Errorf("refused %v, want only w/claim, naming spec.resourceClaims", d.Refused)
	}
	// A snapshot serves PodGroups: a pod of one that does not exist waits for it, as in a live replica.
	if msg := d.Waiting["w/group"]; !strings.Contains(msg, "PodGroup w/training") || !strings.Contains(msg, "does not exist") || len(d.Waiting) != 1 {
		t.Errorf("waiting %v, want w/group waiting for PodGroup w/training", d.Waiting)
	}
	if len(d.Gated) != 1 || d.Gated[0] != "w/gate" {
		t.Errorf("gated %v, want [w/gate]", d.Gated)
	}
}

// Live: the refused pod gets the FailedScheduling event and PodScheduled=False naming the field, and is never
// bound; the gated pod is bound once its gate is removed.
func TestRefusedPodIsReportedAndGatedPodWaitsForItsGates(t *testing.T) {
	claim := testPod("claim", "100m", 0, "")
	claim.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("gpu-claim")}}
	gate := testPod("gate", "100m", 0, "")
	gate.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/admission"}}
	f := newFakeAPI(t, testNode("n1", "4", ""), claim, gate)
	s := startFake(t, f, nil)
	eventually(t, "the refusal event", 5*time.Second, func() bool { return hasEvent(f.events("w", "claim"), "FailedScheduling") })
	p := f.pod(t, "w", "claim")
	found := false
	for _, c := range p.Status.Conditions {
		found = found || c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && strings.Contains(c.Message, "spec.resourceClaims")
	}
	if !found {
		t.Errorf("conditions %+v: want PodScheduled=False naming spec.resourceClaims", p.Status.Conditions)
	}
	time.Sleep(300 * time.Millisecond) // several batch waits
	if n := f.pod(t, "w", "gate").Spec.NodeName; n != "" {
		t.Fatalf("gated pod bound to %s", n)
	}
	g := f.pod(t, "w", "gate")
	g.Spec.SchedulingGates = nil
	if _, err := f.CoreV1().Pods("w").Update(context.Background(), g, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the ungated pod bound", 5*time.Second, func() bool { return f.pod(t, "w", "gate").Spec.NodeName == "n1" })
	if n := f.pod(t, "w", "claim").Spec.NodeName; n != "" {
		t.Errorf("refused pod bound to %s", n)
	}
	if v := metricValue(s, "weave_scheduler_pods_refused_total"); v != 1 {
		t.Errorf("pods_refused_total %v, want 1", v)
	}
}
