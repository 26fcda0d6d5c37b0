package app

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod that fits no node for want of the pod its required affinity selects, or because of its required
// anti-affinity, is requeued when a bound pod's change may let it fit, not when its backoff ends (an hour
// here): as kube-scheduler's InterPodAffinity queueing hint does. Bound pods that change nothing the pod's
// terms select requeue nothing.
func TestBoundPodsRequeueBackedOffPods(t *testing.T) {
	ctx := context.Background()
	f := newFakeAPI(t, testNode("n1", "4", ""), testNode("n2", "4", ""))
	s := startFake(t, f, func(c *Config) { c.InitialBackoff, c.MaxBackoff = time.Hour, time.Hour })
	create := func(p *v1.Pod) {
		t.Helper()
		if _, err := f.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	term := func(labels map[string]string) []v1.PodAffinityTerm {
		return []v1.PodAffinityTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: v1.LabelHostname}}
	}
	labelled := func(p *v1.Pod, labels map[string]string) *v1.Pod { p.Labels = labels; return p }
	remove := func(name string) {
		t.Helper()
		if err := f.CoreV1().Pods("w").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// boundTo waits for a pending pod's binding and checks its node.
	boundTo := func(name, node string) {
		t.Helper()
		eventually(t, name+" bound", 10*time.Second, func() bool { return f.pod(t, "w", name).Spec.NodeName != "" })
		if n := f.pod(t, "w", name).Spec.NodeName; n != node {
			t.Fatalf("%s bound to %s, want %s", name, n, node)
		}
	}
	requeued := func() float64 { return metricValue(s, "weave_scheduler_pods_requeued_by_hint_total") }
	backedOff := func(key string) func() bool {
		return func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			_, ok := s.backoff[key]
			return ok
		}
	}

	// Affinity: web needs a cache pod on its node; there is none.
	web := labelled(testPod("web", "100m", 0, ""), map[string]string{"app": "web"})
	web.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: term(map[string]string{"app": "cache"})}}
	create(web)
	eventually(t, "web backed off", 10*time.Second, backedOff("w/web"))
	// A bound pod its term does not select, one in another namespace, then the cache pod.
	create(labelled(testPod("other", "100m", 0, "n1"), map[string]string{"app": "other"}))
	elsewhere := labelled(testPod("cache-x", "100m", 0, "n1"), map[string]string{"app": "cache"})
	elsewhere.Namespace = "x"
	create(elsewhere)
	create(labelled(testPod("cache", "100m", 0, "n2"), map[string]string{"app": "cache"}))
	boundTo("web", "n2") // its cache pod's node
	if got := requeued(); got != 1 {
		t.Fatalf("%v pods requeued by a hint, want 1 (web, by its cache pod only)", got)
	}

	// Anti-affinity: solo keeps off nodes running app=batch pods; both nodes run one.
	create(labelled(testPod("batch-1", "100m", 0, "n1"), map[string]string{"app": "batch"}))
	create(labelled(testPod("batch-2", "100m", 0, "n2"), map[string]string{"app": "batch"}))
	solo := labelled(testPod("solo", "100m", 0, ""), map[string]string{"app": "solo"})
	solo.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: term(map[string]string{"app": "batch"})}}
	create(solo)
	eventually(t, "solo backed off", 10*time.Second, backedOff("w/solo"))
	// Deleting a pod the term does not select changes nothing; deleting batch-1 frees n1.
	remove("other")
	remove("batch-1")
	boundTo("solo", "n1")
	if got := requeued(); got != 2 {
		t.Fatalf("%v pods requeued by a hint, want 2 (solo, by batch-1's deletion only)", got)
	}

	// An existing pod's anti-affinity: a guard keeps app=guarded pods off its node, and one runs on each
	// node; deleting one frees its node.
	for _, n := range []string{"n1", "n2"} {
		g := labelled(testPod("guard-"+n, "100m", 0, n), map[string]string{"app": "guard"})
		g.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: term(map[string]string{"app": "guarded"})}}
		create(g)
	}
	guarded := labelled(testPod("guarded", "100m", 0, ""), map[string]string{"app": "guarded"})
	create(guarded)
	eventually(t, "guarded backed off", 10*time.Second, backedOff("w/guarded"))
	remove("guard-n2")
	boundTo("guarded", "n2")
	if got := requeued(); got != 3 {
		t.Fatalf("%v pods requeued by a hint, want 3", got)
	}
}
