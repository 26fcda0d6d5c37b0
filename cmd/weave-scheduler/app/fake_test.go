package app

// weave-scheduler against client-go's fake clientset: the API server's binding and eviction subresources are
// played by reactors over the fake's object tracker, so the tests see what the scheduler asked for (the
// recorded actions) and what came of it (the objects).

import (
	"context"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var podsGVR = v1.SchemeGroupVersion.WithResource("pods")

// fakeAPI is a fake clientset whose binding and eviction subresources act on the tracker.
type fakeAPI struct {
	*fake.Clientset
	mu        sync.Mutex
	protected map[string]bool // pods (ns/name) a PodDisruptionBudget protects: their eviction gets a 429
	// refused: pods whose real eviction gets a 429 while its dry run passes, as when a budget's allowance
	// drops between the two
	refused map[string]bool
	linger  bool // evicted pods stay terminating until the test deletes them (graceful deletion)
}

func newFakeAPI(t *testing.T, objs ...runtime.Object) *fakeAPI {
	t.Helper()
	f := &fakeAPI{Clientset: fake.NewClientset(objs...), protected: map[string]bool{}, refused: map[string]bool{}}
	tr := f.Tracker()
	f.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ca := a.(k8stesting.CreateAction)
		switch ca.GetSubresource() {
		case "binding":
			b := ca.GetObject().(*v1.Binding)
			obj, err := tr.Get(podsGVR, b.Namespace, b.Name)
			if err != nil {
				return true, nil, err
			}
			p := obj.(*v1.Pod).DeepCopy()
			if p.Spec.NodeName != "" {
				return true, nil, apierrors.NewConflict(podsGVR.GroupResource(), p.Name, nil)
			}
			p.Spec.NodeName = b.Target.Name
			p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue})
			return true, nil, tr.Update(podsGVR, p, p.Namespace)
		case "eviction":
			ns, name := ca.GetNamespace(), ca.GetObject().(metav1.Object).GetName()
			f.mu.Lock()
			protected, linger := f.protected[ns+"/"+name], f.linger
			protected = protected || f.refused[ns+"/"+name] && !dryRunEviction(ca)
			f.mu.Unlock()
			if protected {
				return true, nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10)
			}
			obj, err := tr.Get(podsGVR, ns, name)
			if err != nil {
				return true, nil, err
			}
			if dryRunEviction(ca) {
				return true, nil, nil // the budget checked, nothing evicted
			}
			if linger {
				p := obj.(*v1.Pod).DeepCopy()
				now := metav1.Now()
				p.DeletionTimestamp = &now
				return true, nil, tr.Update(podsGVR, p, ns)
			}
			return true, nil, tr.Delete(podsGVR, ns, name)
		}
		return false, nil, nil
	})
	return f
}

func (f *fakeAPI) protect(key string, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.protected[key] = on
}

// dryRunEviction reports whether an eviction request is a dry run (DeleteOptions.DryRun All).
func dryRunEviction(ca k8stesting.CreateAction) bool {
	ev, ok := ca.GetObject().(*policyv1.Eviction)
	return ok && ev.DeleteOptions != nil && len(ev.DeleteOptions.DryRun) > 0
}

// evictions lists the pods whose eviction was requested (not as a dry run), in order.
func (f *fakeAPI) evictions() []string {
	var out []string
	for _, a := range f.Actions() {
		if ca, ok := a.(k8stesting.CreateAction); ok && a.GetVerb() == "create" && a.GetSubresource() == "eviction" && !dryRunEviction(ca) {
			out = append(out, a.GetNamespace()+"/"+ca.GetObject().(metav1.Object).GetName())
		}
	}
	return out
}

func (f *fakeAPI) pod(t *testing.T, ns, name string) *v1.Pod {
	t.Helper()
	p, err := f.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return p
}

// events lists "Reason: note" of the events about a pod.
func (f *fakeAPI) events(ns, pod string) []string {
	evs, err := f.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range evs.Items {
		if e.Regarding.Name == pod {
			out = append(out, e.Reason+": "+e.Note)
		}
	}
	sort.Strings(out)
	return out
}

func hasEvent(evs []string, prefix string) bool {
	for _, e := range evs {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}

func testNode(name, cpu, zone string) *v1.Node {
	alloc := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110")}
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: v1.NodeStatus{Capacity: alloc, Allocatable: alloc, Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}}
	if zone != "" {
		n.Labels[v1.LabelTopologyZone] = zone
	}
	return n
}

// testPod is a pod of ns w requesting cpu; node "" is pending for weave-scheduler, otherwise bound and running.
func testPod(name, cpu string, prio int32, node string) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "w", Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.Now()},
		Spec: v1.PodSpec{SchedulerName: "weave-scheduler", NodeName: node, Priority: &prio,
			Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("64Mi")}}}}},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
	if node != "" {
		p.Status.Phase = v1.PodRunning
	}
	return p
}

// startFake runs a replica (no leader election) against the fake until the test ends.
func startFake(t *testing.T, f *fakeAPI, tune func(*Config)) *Server {
	t.Helper()
	return startFakeWith(t, f, tune, nil)
}

// startFakeWith is startFake with setup run on the server before it starts (to set Hooks).
func startFakeWith(t *testing.T, f *fakeAPI, tune func(*Config), setup func(*Server)) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.LeaderElect, cfg.Serving = false, nil
	cfg.BatchWait = 20 * time.Millisecond
	cfg.InitialBackoff, cfg.MaxBackoff = 100*time.Millisecond, 400*time.Millisecond
	if tune != nil {
		tune(&cfg)
	}
	s, err := NewWithClient(cfg, f, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := s.Run(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	eventually(t, "informers synced", 10*time.Second, s.Ready)
	return s
}

func eventually(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func metricValue(s *Server, name string) float64 {
	rec := httptest.NewRecorder()
	s.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, name+" ") {
			v, _ := strconv.ParseFloat(strings.Fields(line)[1], 64)
			return v
		}
	}
	return -1
}

// TestPreemptionEvictsThroughTheEvictionAPI: a high-priority pod that fits no node gets room by the eviction
// of exactly the planned victim, through the eviction subresource; pods of equal or higher priority are never
// evicted; the preemptor is nominated and bound only once its victim is gone.
func TestPreemptionEvictsThroughTheEvictionAPI(t *testing.T) {
	f := newFakeAPI(t,
		testNode("n1", "2", ""), testNode("n2", "2", ""),
		testPod("low", "1", 1, "n1"),       // the only possible victim
		testPod("same", "1", 100, "n1"),    // equal priority to the preemptor: never evicted
		testPod("higher", "2", 1000, "n2"), // higher priority: never evicted
		testPod("high", "1", 100, ""))
	f.linger = true // the victim terminates until the test deletes it
	s := startFake(t, f, nil)
	eventually(t, "the preemptor nominated", 20*time.Second, func() bool {
		p := f.pod(t, "w", "high")
		return p != nil && p.Status.NominatedNodeName == "n1"
	})
	if got := f.evictions(); len(got) != 1 || got[0] != "w/low" {
		t.Fatalf("evictions %v, want exactly [w/low]", got)
	}
	for _, a := range f.Actions() {
		if a.GetSubresource() == "eviction" {
			ev, ok := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
			if !ok || ev.DeleteOptions == nil || ev.DeleteOptions.Preconditions == nil || *ev.DeleteOptions.Preconditions.UID != "uid-low" {
				t.Errorf("eviction without the victim's UID precondition: %+v", a)
			}
		}
	}
	// Not bound while the victim is terminating: the node is full until it goes.
	time.Sleep(300 * time.Millisecond)
	if p := f.pod(t, "w", "high"); p.Spec.NodeName != "" {
		t.Fatalf("preemptor bound to %s while its victim still runs", p.Spec.NodeName)
	}
	if v := metricValue(s, "weave_scheduler_pods_preempted_total"); v != 1 {
		t.Errorf("pods_preempted_total %v, want 1", v)
	}
	// The victim goes: the preemptor is bound to its nominated node.
	if err := f.Tracker().Delete(podsGVR, "w", "low"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the preemptor bound", 10*time.Second, func() bool { return f.pod(t, "w", "high").Spec.NodeName != "" })
	if n := f.pod(t, "w", "high").Spec.NodeName; n != "n1" {
		t.Fatalf("preemptor bound to %s, want n1", n)
	}
	for _, name := range []string{"same", "higher"} {
		if p := f.pod(t, "w", name); p == nil || p.DeletionTimestamp != nil {
			t.Errorf("%s (equal or higher priority) was evicted", name)
		}
	}
	if got := f.evictions(); len(got) != 1 {
		t.Errorf("evictions %v after binding", got)
	}
	eventually(t, "events", 10*time.Second, func() bool {
		return hasEvent(f.events("w", "low"), "Preempted: Preempted by pod w/high on node n1") &&
			hasEvent(f.events("w", "high"), "Preempting: Evicted 1 pod(s) of lower priority (w/low) to place the pod on node n1") &&
			hasEvent(f.events("w", "high"), "Scheduled: Successfully assigned w/high to n1")
	})
}

// TestPreemptionStopsAtADisruptionBudget: the plan evicts two pods; the first is protected by a
// PodDisruptionBudget (429): the plan stops, the second is never evicted, the preemptor is reported and
// backed off, and retried: once the budget allows it, the preemption goes through and the pod is bound.
func TestPreemptionStopsAtADisruptionBudget(t *testing.T) {
	f := newFakeAPI(t,
		testNode("n1", "2", ""),
		testPod("a-protected", "1", 1, "n1"),
		testPod("b-free", "1", 1, "n1"),
		testPod("big", "2", 100, ""))
	f.protect("w/a-protected", true)
	startFake(t, f, nil)
	// The event is recorded before the PodScheduled=False condition is patched: wait for both.
	budgetCondition := func(p *v1.Pod) bool {
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && strings.Contains(c.Message, "PodDisruptionBudget") {
				return true
			}
		}
		return false
	}
	eventually(t, "a refused eviction reported", 20*time.Second, func() bool {
		return len(f.evictions()) > 0 && hasEvent(f.events("w", "big"), "FailedScheduling:") && budgetCondition(f.pod(t, "w", "big"))
	})
	evs := f.events("w", "big")
	if !hasEvent(evs, "FailedScheduling: 0/1 nodes are available") || !strings.Contains(strings.Join(evs, "\n"), "PodDisruptionBudget forbids it") {
		t.Errorf("events of big: %v", evs)
	}
	p := f.pod(t, "w", "big")
	if p.Spec.NodeName != "" || p.Status.NominatedNodeName != "" {
		t.Fatalf("big bound to %q / nominated %q after a refused eviction", p.Spec.NodeName, p.Status.NominatedNodeName)
	}
	// Retries (backoff 100-400 ms) hit the budget again; b-free is never evicted while it holds.
	time.Sleep(1500 * time.Millisecond)
	tries := f.evictions()
	for _, e := range tries {
		if e != "w/a-protected" {
			t.Fatalf("evictions %v: a pod was evicted after the plan was stopped", tries)
		}
	}
	if f.pod(t, "w", "b-free") == nil {
		t.Fatal("b-free is gone")
	}
	t.Logf("%d refused evictions while the budget held", len(tries))
	// The budget allows it now: the next retry evicts both and binds big.
	f.protect("w/a-protected", false)
	eventually(t, "big bound", 20*time.Second, func() bool { return f.pod(t, "w", "big").Spec.NodeName == "n1" })
	if f.pod(t, "w", "a-protected") != nil || f.pod(t, "w", "b-free") != nil {
		t.Error("victims still present")
	}
}

// TestWatchInterruption: the pod watch breaks (an expired-resource-version error) while pods are created and
// deleted unseen; the informer relists and the state converges to the fresh list: the pods created during the
// gap are scheduled, the one deleted during the gap leaves the state, and a pending pod known before the gap
// is not lost (it is bound once a node for it appears).
func TestWatchInterruption(t *testing.T) {
	early := testPod("early", "100m", 0, "")
	early.Spec.NodeSelector = map[string]string{"pool": "later"}
	doomed := testPod("doomed", "100", 0, "") // fits no node; deleted during the gap
	f := newFakeAPI(t, testNode("n1", "8", ""), early, doomed)
	broken := watch.NewRaceFreeFake()
	var watches atomic.Int32
	f.PrependWatchReactor("pods", func(a k8stesting.Action) (bool, watch.Interface, error) {
		if watches.Add(1) == 1 {
			return true, broken, nil // the first watch delivers nothing, then fails
		}
		w, err := f.Tracker().Watch(podsGVR, a.GetNamespace())
		return true, w, err
	})
	s := startFake(t, f, nil)
	// Both fit no node: the first batch may already have backed them off (out of the state until their retry).
	known := func(key string) bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		_, backedOff := s.backoff[key]
		return backedOff || s.brain.State().Pods[key] != nil
	}
	if !known("w/early") || !known("w/doomed") {
		t.Fatal("the initial list did not reach the state")
	}
	// The gap: pods created and deleted without watch events.
	for i := 0; i < 5; i++ {
		if err := f.Tracker().Add(testPod("gap"+strconv.Itoa(i), "100m", 0, "")); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Tracker().Delete(podsGVR, "w", "doomed"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if st := s.brain.State(); st.Pods["w/gap0"] != nil {
		t.Fatal("the broken watch delivered an event")
	}
	broken.Error(&apierrors.NewResourceExpired("too old resource version").ErrStatus)
	eventually(t, "the gap's pods bound after the relist", 20*time.Second, func() bool {
		for i := 0; i < 5; i++ {
			if f.pod(t, "w", "gap"+strconv.Itoa(i)).Spec.NodeName != "n1" {
				return false
			}
		}
		return true
	})
	if watches.Load() < 2 {
		t.Fatalf("%d pod watches", watches.Load())
	}
	// early may be backed off (out of the state until its retry); the informer still has it.
	if st := s.brain.State(); st.Pods["w/doomed"] != nil || s.HasPod("w", "doomed") || !s.HasPod("w", "early") {
		t.Fatalf("after the relist: doomed in the state %v, in the informer %v; early in the informer %v", st.Pods["w/doomed"] != nil, s.HasPod("w", "doomed"), s.HasPod("w", "early"))
	}
	later := testNode("n2", "2", "")
	later.Labels["pool"] = "later"
	if _, err := f.CoreV1().Nodes().Create(context.Background(), later, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "early bound", 20*time.Second, func() bool { return f.pod(t, "w", "early").Spec.NodeName == "n2" })
}

// evictedOf returns the pods of candidates whose eviction was requested, in the order of the first request.
func (f *fakeAPI) evictedOf(candidates ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range f.evictions() {
		for _, c := range candidates {
			if e == c && !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// TestPreemptorBoundWhenItsNodeIsFree: one plan places two preemptors on two nodes, each evicting the victim
// on its node. The victims terminate until the test deletes them; once the victim on n1 is gone, the
// preemptor nominated to n1 is bound although the victim on n2 still runs: a preemptor waits for the victims
// on its own node, not for every victim of its plan.
func TestPreemptorBoundWhenItsNodeIsFree(t *testing.T) {
	f := newFakeAPI(t,
		testNode("n1", "2", ""), testNode("n2", "2", ""),
		testPod("low1", "2", 1, "n1"), testPod("low2", "2", 1, "n2"),
		testPod("high-a", "2", 100, ""), testPod("high-b", "2", 100, ""))
	f.linger = true
	startFake(t, f, nil)
	nominatedTo := func(node string) string {
		for _, name := range []string{"high-a", "high-b"} {
			if p := f.pod(t, "w", name); p != nil && p.Status.NominatedNodeName == node {
				return name
			}
		}
		return ""
	}
	eventually(t, "both preemptors nominated", 20*time.Second, func() bool {
		return nominatedTo("n1") != "" && nominatedTo("n2") != "" && len(f.evictedOf("w/low1", "w/low2")) == 2
	})
	on1, on2 := nominatedTo("n1"), nominatedTo("n2")
	if err := f.Tracker().Delete(podsGVR, "w", "low1"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the preemptor of n1 bound while the victim on n2 still terminates", 10*time.Second, func() bool {
		return f.pod(t, "w", on1).Spec.NodeName == "n1"
	})
	if p := f.pod(t, "w", on2); p.Spec.NodeName != "" {
		t.Fatalf("%s bound to %s while its victim still runs", on2, p.Spec.NodeName)
	}
	if err := f.Tracker().Delete(podsGVR, "w", "low2"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the preemptor of n2 bound", 10*time.Second, func() bool { return f.pod(t, "w", on2).Spec.NodeName == "n2" })
}

// TestPreemptorsOfTwoPlansOnOneNode: high-1 is nominated to n1 and evicts one of its two pods; then high-2
// arrives and is nominated to n1 too, evicting the other. Both victims terminate until the test deletes
// them. When high-1's victim is gone, high-1 is bound: the node holds high-1 and the other victim, which
// fits. The re-check before its binding must not count high-2 (assumed on n1 while its victim is still
// there) as well, which would find n1 over capacity and send high-1 back to the queue until every victim
// is gone.
func TestPreemptorsOfTwoPlansOnOneNode(t *testing.T) {
	f := newFakeAPI(t,
		testNode("n1", "4", ""),
		testPod("low-a", "2", 1, "n1"), testPod("low-b", "2", 1, "n1"),
		testPod("high-1", "2", 100, ""))
	f.linger = true
	s := startFake(t, f, nil)
	eventually(t, "high-1 nominated", 20*time.Second, func() bool {
		return f.pod(t, "w", "high-1").Status.NominatedNodeName == "n1" && len(f.evictedOf("w/low-a", "w/low-b")) == 1
	})
	first := f.evictedOf("w/low-a", "w/low-b")[0]
	if _, err := f.CoreV1().Pods("w").Create(context.Background(), testPod("high-2", "2", 100, ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "high-2 nominated", 20*time.Second, func() bool {
		return f.pod(t, "w", "high-2").Status.NominatedNodeName == "n1" && len(f.evictedOf("w/low-a", "w/low-b")) == 2
	})
	second := "w/low-a"
	if first == second {
		second = "w/low-b"
	}
	if err := f.Tracker().Delete(podsGVR, "w", strings.TrimPrefix(first, "w/")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "high-1 bound while high-2's victim still terminates", 10*time.Second, func() bool {
		return f.pod(t, "w", "high-1").Spec.NodeName == "n1"
	})
	if v := metricValue(s, `weave_scheduler_placements_dropped_total{reason="no_longer_fits"}`); v > 0 {
		t.Errorf("%v placements dropped by the re-check", v)
	}
	if p := f.pod(t, "w", "high-2"); p.Spec.NodeName != "" {
		t.Fatalf("high-2 bound to %s while its victim still runs", p.Spec.NodeName)
	}
	if err := f.Tracker().Delete(podsGVR, "w", strings.TrimPrefix(second, "w/")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "high-2 bound", 10*time.Second, func() bool { return f.pod(t, "w", "high-2").Spec.NodeName == "n1" })
}
