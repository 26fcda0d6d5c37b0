package app

import (
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/weavesql/weave/scheduler"
)

// gangPreemptionCluster: racks r1 (r1-a, r1-b) and r2 (r2-a, r2-b) of 2-CPU nodes, full of priority-1 pods:
// one 2-CPU pod on each r1 node and on r2-a, two 1-CPU pods on r2-b. PodGroup "hi" (priority 100, a gang of
// 2 × 2 CPU in one rack) fits only by evicting: r1's two pods are the fewest evictions (r2 needs three).
func gangPreemptionCluster() []runtime.Object {
	hi := testPodGroup("hi", 2, rackKey)
	hi.Spec.Priority = ptr.To[int32](100)
	objs := []runtime.Object{
		rackNode("r1-a", "2", "r1"), rackNode("r1-b", "2", "r1"), rackNode("r2-a", "2", "r2"), rackNode("r2-b", "2", "r2"),
		testPod("low-a", "2", 1, "r1-a"), testPod("low-b", "2", 1, "r1-b"), testPod("low-c", "2", 1, "r2-a"),
		testPod("low-d0", "1", 1, "r2-b"), testPod("low-d1", "1", 1, "r2-b"), hi,
	}
	for _, o := range groupPods("hi", "hi", "2", 2) {
		o.(*v1.Pod).Spec.Priority = ptr.To[int32](100)
		objs = append(objs, o)
	}
	return objs
}

// TestPodGroupPreemptionEvictsForTheWholeGang: the gang that fits no rack gets one by workload preemption:
// exactly r1's two pods are evicted (through the eviction API), and both members are bound in r1, none
// before both victims are gone (each member waits for every victim of the plan, not only its node's).
func TestPodGroupPreemptionEvictsForTheWholeGang(t *testing.T) {
	f := newFakeAPI(t, gangPreemptionCluster()...)
	servePodGroups(f)
	f.linger = true // the victims terminate until the test deletes them
	startFake(t, f, nil)
	eventually(t, "both evictions", 20*time.Second, func() bool { return len(f.evictions()) == 2 })
	if err := f.Tracker().Delete(podsGVR, "w", "low-a"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	for _, name := range []string{"hi-0", "hi-1"} {
		if n := f.pod(t, "w", name).Spec.NodeName; n != "" {
			t.Fatalf("%s bound to %s while a victim of its group's plan still runs", name, n)
		}
	}
	if err := f.Tracker().Delete(podsGVR, "w", "low-b"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the gang bound", 20*time.Second, func() bool {
		return f.pod(t, "w", "hi-0").Spec.NodeName != "" && f.pod(t, "w", "hi-1").Spec.NodeName != ""
	})
	nodes := []string{f.pod(t, "w", "hi-0").Spec.NodeName, f.pod(t, "w", "hi-1").Spec.NodeName}
	sort.Strings(nodes)
	if !reflect.DeepEqual(nodes, []string{"r1-a", "r1-b"}) {
		t.Errorf("gang bound to %v, want r1-a and r1-b", nodes)
	}
	got := f.evictions()
	sort.Strings(got)
	if !reflect.DeepEqual(got, []string{"w/low-a", "w/low-b"}) {
		t.Errorf("evictions %v, want exactly w/low-a and w/low-b", got)
	}
}

// TestPodGroupPreemptionRespectsADisruptionBudget: low-b is protected by a PodDisruptionBudget (the fake
// answers its eviction 429). The dry run of every eviction finds it before anything is evicted: no pod is
// evicted, no member bound, and the group's pods are reported naming the budget. Once the budget allows it,
// the plan goes through and the gang is bound whole.
func TestPodGroupPreemptionRespectsADisruptionBudget(t *testing.T) {
	f := newFakeAPI(t, gangPreemptionCluster()...)
	servePodGroups(f)
	f.protect("w/low-b", true)
	startFake(t, f, nil)
	eventually(t, "the refusal reported", 20*time.Second, func() bool {
		return podScheduledFalse(f.pod(t, "w", "hi-0"), "PodDisruptionBudget") && podScheduledFalse(f.pod(t, "w", "hi-1"), "PodDisruptionBudget")
	})
	time.Sleep(300 * time.Millisecond) // retries after the backoff, refused again
	if got := f.evictions(); len(got) != 0 {
		t.Fatalf("evictions %v while a budget forbids one of the plan's: want none", got)
	}
	for _, name := range []string{"low-a", "low-b", "low-c", "low-d0", "low-d1"} {
		if p := f.pod(t, "w", name); p == nil || p.DeletionTimestamp != nil {
			t.Fatalf("%s evicted while a budget forbids one of the plan's evictions", name)
		}
	}
	for _, name := range []string{"hi-0", "hi-1"} {
		if n := f.pod(t, "w", name).Spec.NodeName; n != "" {
			t.Fatalf("%s bound to %s while its victims run", name, n)
		}
	}
	f.protect("w/low-b", false)
	eventually(t, "the gang bound", 20*time.Second, func() bool {
		return f.pod(t, "w", "hi-0").Spec.NodeName != "" && f.pod(t, "w", "hi-1").Spec.NodeName != ""
	})
	got := f.evictions()
	sort.Strings(got)
	if !reflect.DeepEqual(got, []string{"w/low-a", "w/low-b"}) {
		t.Errorf("evictions %v, want exactly w/low-a and w/low-b", got)
	}
}

// TestPodGroupPreemptionPolicyNeverEvictsNothing: with the PodGroup's preemptionPolicy Never the gang that
// fits only by evicting stays pending and nothing is evicted.
func TestPodGroupPreemptionPolicyNeverEvictsNothing(t *testing.T) {
	objs := gangPreemptionCluster()
	for _, o := range objs {
		if g, ok := o.(*schedulingv1beta1.PodGroup); ok {
			g.Spec.PreemptionPolicy = ptr.To(schedulingv1beta1.PreemptNever)
		}
	}
	f := newFakeAPI(t, objs...)
	servePodGroups(f)
	startFake(t, f, nil)
	eventually(t, "the group reported", 20*time.Second, func() bool {
		return podScheduledFalse(f.pod(t, "w", "hi-0"), "pod group w/hi")
	})
	time.Sleep(500 * time.Millisecond)
	if got := f.evictions(); len(got) != 0 {
		t.Fatalf("evictions %v for a group with preemptionPolicy Never", got)
	}
	if c := groupCondition(t, f, "hi"); c == nil || !strings.Contains(c.Message, "preemptionPolicy Never") {
		t.Errorf("condition %+v: want the message to say why nothing is evicted", c)
	}
}

// toPodGroup reads disruptionMode and preemptionPolicy.
func TestToPodGroupReadsDisruptionModeAndPreemptionPolicy(t *testing.T) {
	all := testPodGroup("all", 2, "")
	all.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
	single := testPodGroup("single", 2, "")
	single.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}}
	never := testPodGroup("never", 2, "")
	never.Spec.PreemptionPolicy = ptr.To(schedulingv1beta1.PreemptNever)
	lower := testPodGroup("lower", 2, "")
	lower.Spec.PreemptionPolicy = ptr.To(schedulingv1beta1.PreemptLowerPriority)
	for _, tc := range []struct {
		in   *schedulingv1beta1.PodGroup
		want scheduler.PodGroup
	}{
		{all, scheduler.PodGroup{Name: "w/all", MinCount: 2, DisruptAll: true}},
		{single, scheduler.PodGroup{Name: "w/single", MinCount: 2}},
		{never, scheduler.PodGroup{Name: "w/never", MinCount: 2, NeverPreempts: true}},
		{lower, scheduler.PodGroup{Name: "w/lower", MinCount: 2}},
	} {
		if got := toPodGroup(tc.in).group; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.in.Name, got, tc.want)
		}
	}
}

// TestPodGroupPreemptionPlansAroundABudget: a PodDisruptionBudget (read through the informer) selects low-b and
// allows no disruption, so rack r1 cannot be emptied: the plan leaves low-b out and empties r2 (low-c, low-d0,
// low-d1), and the gang is bound there; low-b's eviction is never asked for.
func TestPodGroupPreemptionPlansAroundABudget(t *testing.T) {
	objs := gangPreemptionCluster()
	for _, o := range objs {
		if p, ok := o.(*v1.Pod); ok && p.Name == "low-b" {
			p.Labels = map[string]string{"app": "protected"}
		}
	}
	objs = append(objs, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "w", Name: "protected", Generation: 1},
		Spec:   policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "protected"}}},
		Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 0, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}})
	f := newFakeAPI(t, objs...)
	servePodGroups(f)
	startFake(t, f, nil)
	eventually(t, "the gang bound", 20*time.Second, func() bool {
		return f.pod(t, "w", "hi-0").Spec.NodeName != "" && f.pod(t, "w", "hi-1").Spec.NodeName != ""
	})
	nodes := []string{f.pod(t, "w", "hi-0").Spec.NodeName, f.pod(t, "w", "hi-1").Spec.NodeName}
	sort.Strings(nodes)
	if !reflect.DeepEqual(nodes, []string{"r2-a", "r2-b"}) {
		t.Errorf("gang bound to %v, want r2-a and r2-b", nodes)
	}
	got := f.evictions()
	sort.Strings(got)
	if !reflect.DeepEqual(got, []string{"w/low-c", "w/low-d0", "w/low-d1"}) {
		t.Errorf("evictions %v, want exactly low-c, low-d0 and low-d1", got)
	}
}

// evictable reads a budget as the Eviction API does: only Running pods are protected; a budget protects the pods
// its selector selects (nil: none) while it allows no disruption or its generation is not observed; two
// budgets on one pod refuse its eviction.
func TestEvictableReadsBudgetsAsTheEvictionAPI(t *testing.T) {
	budget := func(name string, sel *metav1.LabelSelector, allowed int32, observed int64) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "w", Name: name, Generation: 1},
			Spec: policyv1.PodDisruptionBudgetSpec{Selector: sel}, Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: observed, DisruptionsAllowed: allowed}}
	}
	app := func(v string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": v}}
	}
	f := newFakeAPI(t, budget("zero", app("zero"), 0, 1), budget("one", app("one"), 1, 1), budget("unobserved", app("new"), 3, 0),
		budget("nil", nil, 0, 1), budget("two-a", app("two"), 1, 1), budget("two-b", app("two"), 1, 1))
	s := startFake(t, f, nil)
	eventually(t, "budgets read", 5*time.Second, func() bool {
		l, _ := s.pdbLister.List(labels.Everything())
		return len(l) == 6
	})
	for _, tc := range []struct {
		app, phase string
		want       bool
	}{
		{"zero", scheduler.PhaseRunning, false},
		{"zero", scheduler.PhasePending, true},
		{"one", scheduler.PhaseRunning, true},
		{"new", scheduler.PhaseRunning, false},
		{"none", scheduler.PhaseRunning, true},
		{"two", scheduler.PhaseRunning, false},
	} {
		got, why := s.evictable(&scheduler.Pod{Name: "w/p", Namespace: "w", Phase: tc.phase, Labels: map[string]string{"app": tc.app}})
		if got != tc.want {
			t.Errorf("app=%s %s: evictable %v (%s), want %v", tc.app, tc.phase, got, why, tc.want)
		}
	}
}

// TestPodGroupPreemptionCountsABudgetThatAllowsOne: a PodDisruptionBudget selects low-a and low-b and allows one
// disruption. Each alone may be evicted, but emptying r1 takes both, which the Eviction API would refuse after
// the first (that pod evicted, the gang unbound): the plan counts the budget (P3) and empties r2 instead, and
// neither low-a's nor low-b's eviction is asked for.
func TestPodGroupPreemptionCountsABudgetThatAllowsOne(t *testing.T) {
	objs := gangPreemptionCluster()
	for _, o := range objs {
		if p, ok := o.(*v1.Pod); ok && (p.Name == "low-a" || p.Name == "low-b") {
			p.Labels = map[string]string{"app": "pair"}
		}
	}
	objs = append(objs, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "w", Name: "pair", Generation: 1},
		Spec:   policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pair"}}},
		Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 1, CurrentHealthy: 2, DesiredHealthy: 1, ExpectedPods: 2}})
	f := newFakeAPI(t, objs...)
	servePodGroups(f)
	s := startFake(t, f, nil)
	eventually(t, "low-a's budget read: w/pair allowing 1", 5*time.Second, func() bool {
		b, allowed := s.disruptionBudget(&scheduler.Pod{Name: "w/low-a", Namespace: "w", Phase: scheduler.PhaseRunning, Labels: map[string]string{"app": "pair"}})
		return b == "w/pair" && allowed == 1
	})
	eventually(t, "the gang bound", 20*time.Second, func() bool {
		return f.pod(t, "w", "hi-0").Spec.NodeName != "" && f.pod(t, "w", "hi-1").Spec.NodeName != ""
	})
	nodes := []string{f.pod(t, "w", "hi-0").Spec.NodeName, f.pod(t, "w", "hi-1").Spec.NodeName}
	sort.Strings(nodes)
	if !reflect.DeepEqual(nodes, []string{"r2-a", "r2-b"}) {
		t.Errorf("gang bound to %v, want r2-a and r2-b", nodes)
	}
	got := f.evictions()
	sort.Strings(got)
	if !reflect.DeepEqual(got, []string{"w/low-c", "w/low-d0", "w/low-d1"}) {
		t.Errorf("evictions %v, want exactly low-c, low-d0 and low-d1", got)
	}
}

// TestPodGroupPreemptionEvictsWholeGroupsLast: the plan for gang hi (2 × 2 CPU in one rack) empties rack r1:
// PodGroup whole (disruptionMode all, one 1-CPU pod on each node) and plain pods p-0 and p-1 (1 CPU each),
// four evictions against six in r2. p-0's real eviction is refused after its dry run passed (a budget that
// changed in between): the plain pods are evicted first, so the refusal stops the plan before whole is touched,
// and whole is not left evicted in part. Evicting all victims at once asked for whole's evictions too.
func TestPodGroupPreemptionEvictsWholeGroupsLast(t *testing.T) {
	hi := testPodGroup("hi", 2, rackKey)
	hi.Spec.Priority = ptr.To[int32](100)
	whole := testPodGroup("whole", 2, "")
	whole.Spec.Priority = ptr.To[int32](1)
	whole.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
	member := func(name, node string) *v1.Pod {
		p := testPod(name, "1", 1, node)
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To("whole")}
		return p
	}
	objs := []runtime.Object{
		rackNode("r1-a", "2", "r1"), rackNode("r1-b", "2", "r1"), rackNode("r2-a", "2", "r2"), rackNode("r2-b", "2", "r2"),
		member("whole-0", "r1-a"), member("whole-1", "r1-b"), testPod("p-0", "1", 1, "r1-a"), testPod("p-1", "1", 1, "r1-b"),
		testPod("q-0", "1", 1, "r2-a"), testPod("q-1", "1", 1, "r2-a"),
		testPod("q-2", "500m", 1, "r2-b"), testPod("q-3", "500m", 1, "r2-b"), testPod("q-4", "500m", 1, "r2-b"), testPod("q-5", "500m", 1, "r2-b"),
		hi, whole,
	}
	for _, o := range groupPods("hi", "hi", "2", 2) {
		o.(*v1.Pod).Spec.Priority = ptr.To[int32](100)
		objs = append(objs, o)
	}
	f := newFakeAPI(t, objs...)
	servePodGroups(f)
	f.mu.Lock()
	f.refused["w/p-0"] = true
	f.mu.Unlock()
	startFake(t, f, nil)
	eventually(t, "the refusal reported", 20*time.Second, func() bool {
		return podScheduledFalse(f.pod(t, "w", "hi-0"), "p-0") && podScheduledFalse(f.pod(t, "w", "hi-1"), "p-0")
	})
	got := f.evictions()
	for _, e := range got {
		if strings.HasPrefix(e, "w/whole-") {
			t.Fatalf("evictions %v: a member of the disruptionMode-all group was evicted although another victim's eviction was refused", got)
		}
	}
	if !slices.Contains(got, "w/p-0") {
		t.Fatalf("evictions %v: the plan did not empty r1 (want p-0 asked for)", got)
	}
	for _, name := range []string{"hi-0", "hi-1"} {
		if n := f.pod(t, "w", name).Spec.NodeName; n != "" {
			t.Errorf("%s bound to %s after a refused eviction of its plan", name, n)
		}
	}
}
