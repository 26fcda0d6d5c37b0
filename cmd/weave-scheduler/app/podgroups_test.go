package app

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/weavesql/weave/scheduler"
)

const rackKey = "example.com/rack"

// servePodGroups makes the fake's discovery serve scheduling.k8s.io/v1beta1 podgroups, as an API server with
// GenericWorkload on does.
func servePodGroups(f *fakeAPI) {
	f.Resources = append(f.Resources, &metav1.APIResourceList{GroupVersion: podGroupsGroupVersion,
		APIResources: []metav1.APIResource{{Name: "podgroups", Namespaced: true, Kind: "PodGroup"}}})
}

// testPodGroup is a PodGroup of namespace w: a gang of minCount (0: basic), with a topology key unless "".
func testPodGroup(name string, minCount int32, key string) *schedulingv1beta1.PodGroup {
	g := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "w", Name: name}}
	if minCount > 0 {
		g.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}
	} else {
		g.Spec.SchedulingPolicy.Basic = &schedulingv1beta1.BasicSchedulingPolicy{}
	}
	if key != "" {
		g.Spec.SchedulingConstraints = &schedulingv1beta1.PodGroupSchedulingConstraints{Topology: []schedulingv1beta1.TopologyConstraint{{Key: key}}}
	}
	return g
}

// groupPods are n pending pods name-0 … of PodGroup group, requesting cpu each.
func groupPods(name, group, cpu string, n int) []runtime.Object {
	var out []runtime.Object
	for i := 0; i < n; i++ {
		p := testPod(name+"-"+string(rune('0'+i)), cpu, 0, "")
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To(group)}
		out = append(out, p)
	}
	return out
}

func rackNode(name, cpu, rack string) *v1.Node {
	n := testNode(name, cpu, "")
	n.Labels[rackKey] = rack
	return n
}

func groupCondition(t *testing.T, f *fakeAPI, name string) *metav1.Condition {
	t.Helper()
	g, err := f.SchedulingV1beta1().PodGroups("w").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return apimeta.FindStatusCondition(g.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled)
}

func podScheduledFalse(p *v1.Pod, contains string) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && strings.Contains(c.Message, contains) {
			return true
		}
	}
	return false
}

// The conversion reads minCount (basic: 1), the topology key and the priority, and names every field it
// refuses.
func TestToPodGroupReadsPolicyAndRefusesWhatIsNotModelled(t *testing.T) {
	claims := testPodGroup("claims", 2, "")
	claims.Spec.ResourceClaims = []schedulingv1beta1.PodGroupResourceClaim{{Name: "gpus", ResourceClaimName: ptr.To("c")}}
	composite := testPodGroup("child", 0, "")
	composite.Spec.ParentCompositePodGroupName = ptr.To("parent")
	prio := testPodGroup("prio", 3, rackKey)
	prio.Spec.Priority = ptr.To[int32](7)
	twoKeys := testPodGroup("two", 2, rackKey)
	twoKeys.Spec.SchedulingConstraints.Topology = append(twoKeys.Spec.SchedulingConstraints.Topology, schedulingv1beta1.TopologyConstraint{Key: "zone"})
	for _, tc := range []struct {
		name    string
		in      *schedulingv1beta1.PodGroup
		want    scheduler.PodGroup
		prio    int32
		refused []string
	}{
		{"a gang with a rack key", testPodGroup("g", 4, rackKey), scheduler.PodGroup{Name: "w/g", MinCount: 4, TopologyKey: rackKey}, 0, nil},
		{"a basic group is a group of one", testPodGroup("b", 0, ""), scheduler.PodGroup{Name: "w/b", MinCount: 1}, 0, nil},
		{"the group's priority is kept for its pods", prio, scheduler.PodGroup{Name: "w/prio", MinCount: 3, TopologyKey: rackKey}, 7, nil},
		{"resource claims are refused", claims, scheduler.PodGroup{Name: "w/claims", MinCount: 2}, 0, []string{"spec.resourceClaims"}},
		{"a composite group's child is refused", composite, scheduler.PodGroup{Name: "w/child", MinCount: 1}, 0, []string{"spec.parentCompositePodGroupName"}},
		{"a second topology constraint is refused, not dropped", twoKeys, scheduler.PodGroup{Name: "w/two", MinCount: 2}, 0, []string{"spec.schedulingConstraints.topology"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := toPodGroup(tc.in)
			if !reflect.DeepEqual(got.group, tc.want) || got.priority != tc.prio {
				t.Errorf("got %+v priority %d, want %+v priority %d", got.group, got.priority, tc.want, tc.prio)
			}
			var fields []string
			for _, f := range got.refused {
				fields = append(fields, f.field)
			}
			if !reflect.DeepEqual(fields, tc.refused) {
				t.Errorf("refused %v, want %v", fields, tc.refused)
			}
		})
	}
}

// Two racks of two 2-CPU nodes. Gang "train" (3 × 1 CPU, rack) fits in one rack and is bound there whole, its
// PodGroup marked PodGroupInitiallyScheduled=True. Gang "wide" (3 × 2 CPU, rack) needs three nodes of a rack:
// each of its pods fits a node alone and the cluster holds all three, but no rack does, so none is bound; its
// pods get FailedScheduling and PodScheduled=False naming the group, its PodGroup the condition False with
// reason Unschedulable. A pod without a group is placed as before.
func TestPodGroupGangsAllOrNothingInOneRack(t *testing.T) {
	objs := []runtime.Object{
		rackNode("r1-a", "2", "r1"), rackNode("r1-b", "2", "r1"), rackNode("r2-a", "2", "r2"), rackNode("r2-b", "2", "r2"),
		testPodGroup("train", 3, rackKey), testPodGroup("wide", 3, rackKey), testPod("solo", "100m", 0, ""),
	}
	objs = append(objs, groupPods("train", "train", "1", 3)...)
	objs = append(objs, groupPods("wide", "wide", "1500m", 3)...)
	f := newFakeAPI(t, objs...)
	servePodGroups(f)
	startFake(t, f, nil)
	eventually(t, "train bound", 10*time.Second, func() bool {
		for i := 0; i < 3; i++ {
			if f.pod(t, "w", "train-"+string(rune('0'+i))).Spec.NodeName == "" {
				return false
			}
		}
		return f.pod(t, "w", "solo").Spec.NodeName != ""
	})
	racks := map[string]bool{}
	for i := 0; i < 3; i++ {
		racks[f.pod(t, "w", "train-"+string(rune('0'+i))).Spec.NodeName[:2]] = true
	}
	if len(racks) != 1 {
		t.Errorf("train spans racks %v, want one", racks)
	}
	eventually(t, "train's PodGroupInitiallyScheduled=True", 5*time.Second, func() bool {
		c := groupCondition(t, f, "train")
		return c != nil && c.Status == metav1.ConditionTrue
	})
	eventually(t, "wide's PodGroupInitiallyScheduled=False", 10*time.Second, func() bool {
		c := groupCondition(t, f, "wide")
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == schedulingv1beta1.PodGroupReasonUnschedulable &&
			strings.Contains(c.Message, "pod group w/wide") && strings.Contains(c.Message, rackKey)
	})
	eventually(t, "wide's pods reported", 5*time.Second, func() bool {
		for i := 0; i < 3; i++ {
			name := "wide-" + string(rune('0'+i))
			if !hasEvent(f.events("w", name), "FailedScheduling: pod group w/wide") || !podScheduledFalse(f.pod(t, "w", name), "pod group w/wide") {
				return false
			}
		}
		return true
	})
	time.Sleep(500 * time.Millisecond) // retries after the backoff
	for i := 0; i < 3; i++ {
		if n := f.pod(t, "w", "wide-"+string(rune('0'+i))).Spec.NodeName; n != "" {
			t.Errorf("wide-%d bound to %s: a gang that fits no rack is placed in part", i, n)
		}
	}
	if c := groupCondition(t, f, "train"); c == nil || c.Status != metav1.ConditionTrue || c.Reason != "Scheduled" {
		t.Errorf("train's condition %+v, want True (Scheduled), kept", c)
	}
}

// A gang is not considered before its PodGroup exists and minCount of its pods exist (GangScheduling's
// PreEnqueue); then it is placed whole.
func TestPodGroupWaitsForItsGroupAndMinCountPods(t *testing.T) {
	objs := []runtime.Object{testNode("n1", "8", "")}
	objs = append(objs, groupPods("job", "job", "1", 3)...)
	f := newFakeAPI(t, objs...)
	servePodGroups(f)
	startFake(t, f, nil)
	bound := func() int {
		n := 0
		for _, name := range []string{"job-0", "job-1", "job-2", "job-3"} {
			if p := f.pod(t, "w", name); p != nil && p.Spec.NodeName != "" {
				n++
			}
		}
		return n
	}
	time.Sleep(300 * time.Millisecond)
	if n := bound(); n != 0 {
		t.Fatalf("%d pods bound before their PodGroup exists", n)
	}
	ctx := context.Background()
	if _, err := f.SchedulingV1beta1().PodGroups("w").Create(ctx, testPodGroup("job", 4, ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := bound(); n != 0 {
		t.Fatalf("%d pods bound with 3 of minCount 4 pods existing", n)
	}
	last := groupPods("job", "job", "1", 4)[3].(*v1.Pod)
	if _, err := f.CoreV1().Pods("w").Create(ctx, last, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the gang bound once its fourth pod exists", 10*time.Second, func() bool { return bound() == 4 })
}

// Where the API server does not serve PodGroups, a pod naming one is refused (never placed as if it had no
// group), the message naming spec.schedulingGroup and why; the others are placed.
func TestPodGroupsNotServedRefusesGroupedPods(t *testing.T) {
	objs := []runtime.Object{testNode("n1", "4", ""), testPod("plain", "100m", 0, "")}
	objs = append(objs, groupPods("job", "job", "100m", 1)...)
	f := newFakeAPI(t, objs...)
	startFake(t, f, nil)
	eventually(t, "the grouped pod refused", 5*time.Second, func() bool {
		return podScheduledFalse(f.pod(t, "w", "job-0"), "spec.schedulingGroup")
	})
	if p := f.pod(t, "w", "job-0"); !podScheduledFalse(p, "does not serve "+podGroupsGroupVersion) {
		t.Errorf("conditions %+v: want the refusal to say the API server does not serve %s", p.Status.Conditions, podGroupsGroupVersion)
	}
	eventually(t, "the plain pod bound", 5*time.Second, func() bool { return f.pod(t, "w", "plain").Spec.NodeName == "n1" })
	if n := f.pod(t, "w", "job-0").Spec.NodeName; n != "" {
		t.Errorf("grouped pod bound to %s", n)
	}
}

// A PodGroup field weave-scheduler does not model refuses its pods, naming the field; so does a pod whose
// priority is not its group's. A group that is fixed (here: recreated without the claim) has its pods placed.
func TestPodGroupUnsupportedFieldsRefuseItsPods(t *testing.T) {
	claims := testPodGroup("claims", 1, "")
	claims.Spec.ResourceClaims = []schedulingv1beta1.PodGroupResourceClaim{{Name: "gpus", ResourceClaimName: ptr.To("c")}}
	prio := testPodGroup("prio", 1, "")
	prio.Spec.Priority = ptr.To[int32](5)
	objs := []runtime.Object{testNode("n1", "4", ""), claims, prio}
	objs = append(objs, groupPods("claims", "claims", "100m", 1)...)
	objs = append(objs, groupPods("prio", "prio", "100m", 1)...)
	f := newFakeAPI(t, objs...)
	servePodGroups(f)
	startFake(t, f, nil)
	eventually(t, "both refused", 5*time.Second, func() bool {
		return podScheduledFalse(f.pod(t, "w", "claims-0"), "PodGroup w/claims spec.resourceClaims") &&
			podScheduledFalse(f.pod(t, "w", "prio-0"), "spec.priority (0 differs from its PodGroup w/prio's priority 5")
	})
	ctx := context.Background()
	if err := f.SchedulingV1beta1().PodGroups("w").Delete(ctx, "claims", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.SchedulingV1beta1().PodGroups("w").Create(ctx, testPodGroup("claims", 1, ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the fixed group's pod bound", 5*time.Second, func() bool { return f.pod(t, "w", "claims-0").Spec.NodeName == "n1" })
	if n := f.pod(t, "w", "prio-0").Spec.NodeName; n != "" {
		t.Errorf("pod of another priority than its group's bound to %s", n)
	}
}

// The re-check before binding judges each placement alone. When it drops one member of a gang (here: its node
// left the state after the solve), the other member is not bound alone either: both are requeued, and with one
// node left the gang of two 3-CPU pods fits nowhere, so neither is ever bound.
func TestPodGroupRecheckKeepsGangsWhole(t *testing.T) {
	objs := []runtime.Object{testNode("n1", "4", ""), testNode("n2", "4", ""), testPodGroup("pair", 2, "")}
	objs = append(objs, groupPods("pair", "pair", "3", 2)...)
	f := newFakeAPI(t, objs...)
	servePodGroups(f)
	var once sync.Once
	s := startFakeWith(t, f, nil, func(s *Server) {
		s.Hooks.AfterSolve = func(ctx context.Context, bs []scheduler.Binding) {
			once.Do(func() {
				if err := s.brain.DeleteNode(ctx, bs[0].Node); err != nil {
					t.Error(err)
				}
			})
		}
	})
	bound := func() []string {
		var out []string
		for _, name := range []string{"pair-0", "pair-1"} {
			if n := f.pod(t, "w", name).Spec.NodeName; n != "" {
				out = append(out, name+" on "+n)
			}
		}
		return out
	}
	eventually(t, "the first placement decided", 10*time.Second, func() bool {
		return len(bound()) > 0 || metricValue(s, `weave_scheduler_placements_dropped_total{reason="group_split"}`) == 1
	})
	time.Sleep(500 * time.Millisecond) // the requeued pair is solved again, on one node
	if b := bound(); len(b) > 0 {
		t.Errorf("bound: %v: half a gang runs", b)
	}
	if v := metricValue(s, `weave_scheduler_placements_dropped_total{reason="group_split"}`); v != 1 {
		t.Errorf("placements dropped as group_split: %v, want 1", v)
	}
	if v := metricValue(s, `weave_scheduler_placements_dropped_total{reason="node_gone"}`); v != 1 {
		t.Errorf("placements dropped for node_gone: %v, want 1", v)
	}
}

// Decide reads a snapshot's PodGroups as the live replica does (TestPodGroupGangsAllOrNothingInOneRack and the
// tests above): gang "train" (3 × 1 CPU, rack) is bound whole in one rack; gang "wide" (3 × 1.5 CPU, rack) fits
// no rack, so all its pods are unschedulable with the group's message; a pod of a PodGroup that does not exist
// and the pods of a group with fewer than minCount pods wait, each saying why; a group with resourceClaims is
// refused naming the field; a pod whose priority is not its group's is refused naming spec.priority.
func TestDecideReadsPodGroups(t *testing.T) {
	claims := testPodGroup("claims", 1, "")
	claims.Spec.ResourceClaims = []schedulingv1beta1.PodGroupResourceClaim{{Name: "gpus", ResourceClaimName: ptr.To("c")}}
	prio := testPodGroup("prio", 1, "")
	prio.Spec.Priority = ptr.To[int32](5)
	snap := Snapshot{
		Nodes: []*v1.Node{rackNode("r1-a", "2", "r1"), rackNode("r1-b", "2", "r1"), rackNode("r2-a", "2", "r2"), rackNode("r2-b", "2", "r2")},
		PodGroups: []*schedulingv1beta1.PodGroup{testPodGroup("train", 3, rackKey), testPodGroup("wide", 3, rackKey),
			testPodGroup("few", 4, ""), claims, prio},
		Pods: []*v1.Pod{testPod("solo", "100m", 0, "")},
	}
	for _, g := range []struct {
		name, group, cpu string
		n                int
	}{{"train", "train", "1", 3}, {"wide", "wide", "1500m", 3}, {"few", "few", "100m", 3}, {"orphan", "missing", "100m", 1},
		{"claims", "claims", "100m", 1}, {"prio", "prio", "100m", 1}} {
		for _, o := range groupPods(g.name, g.group, g.cpu, g.n) {
			snap.Pods = append(snap.Pods, o.(*v1.Pod))
		}
	}
	d, err := Decide(context.Background(), DefaultConfig(), snap)
	if err != nil {
		t.Fatal(err)
	}
	racks := map[string]bool{}
	for i := 0; i < 3; i++ {
		n := d.Bindings["w/train-"+string(rune('0'+i))]
		if n == "" {
			t.Fatalf("train-%d not bound: %+v", i, d)
		}
		racks[n[:2]] = true
	}
	if len(racks) != 1 {
		t.Errorf("train spans racks %v, want one", racks)
	}
	if d.Bindings["w/solo"] == "" || len(d.Bindings) != 4 {
		t.Errorf("bindings %v, want train's three pods and solo", d.Bindings)
	}
	for i := 0; i < 3; i++ {
		name := "w/wide-" + string(rune('0'+i))
		if msg := d.Unschedulable[name]; !strings.Contains(msg, "pod group w/wide") || !strings.Contains(msg, rackKey) {
			t.Errorf("%s: unschedulable %q, want the group's message naming w/wide and %s", name, msg, rackKey)
		}
	}
	if len(d.Unschedulable) != 3 {
		t.Errorf("unschedulable %v, want wide's three pods", d.Unschedulable)
	}
	for i := 0; i < 3; i++ {
		name := "w/few-" + string(rune('0'+i))
		if msg := d.Waiting[name]; !strings.Contains(msg, "PodGroup w/few: 3 of its minCount 4 pods exist") {
			t.Errorf("%s: waiting %q, want 3 of minCount 4", name, msg)
		}
	}
	if msg := d.Waiting["w/orphan-0"]; !strings.Contains(msg, "PodGroup w/missing") || !strings.Contains(msg, "does not exist") {
		t.Errorf("orphan-0: waiting %q, want PodGroup w/missing does not exist", msg)
	}
	if len(d.Waiting) != 4 {
		t.Errorf("waiting %v, want few's three pods and orphan-0", d.Waiting)
	}
	if msg := d.Refused["w/claims-0"]; !strings.Contains(msg, "PodGroup w/claims spec.resourceClaims") {
		t.Errorf("claims-0: refused %q, want PodGroup w/claims spec.resourceClaims", msg)
	}
	if msg := d.Refused["w/prio-0"]; !strings.Contains(msg, "spec.priority") {
		t.Errorf("prio-0: refused %q, want spec.priority", msg)
	}
	if len(d.Refused) != 2 {
		t.Errorf("refused %v, want claims-0 and prio-0", d.Refused)
	}
}
