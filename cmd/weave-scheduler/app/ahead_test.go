package app

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weavesql/weave/cp"
	"github.com/weavesql/weave/scheduler"
)

// slowBackend is the native engine after a pause (nanoseconds), which a test sets: a solve then takes about as
// long as a speculation of 16 pods does live (15–25 ms), while pods arrive every 10 ms.
type slowBackend struct{ pause *atomic.Int64 }

func (slowBackend) Name() string { return "slow" }

func (b slowBackend) Solve(ctx context.Context, m *cp.Model, p cp.Params) (*cp.Response, error) {
	select {
	case <-time.After(time.Duration(b.pause.Load())):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return m.Solve(ctx, p)
}

// Replicas created one after another, each once the one before is bound, and kept off each other's nodes
// (required anti-affinity on the hostname): the scheduler's speculations grow to 16 and are extended while
// the loop is idle; once each solve outlasts the time a replica takes to arrive, replicas arrive while an
// extension solves and are bound straight from its window (pods_placed_ahead_total). Every replica is bound,
// each on a node of its own: a pod placed ahead on a node a pod already took would break the anti-affinity.
func TestPlaceAheadBindsOnArrival(t *testing.T) {
	const nodes, replicas = 80, 72
	var pause atomic.Int64
	testHookBrainConfig = func(c *scheduler.Config) { c.Backend = slowBackend{&pause} }
	t.Cleanup(func() { testHookBrainConfig = nil })
	var objs []*v1.Node
	for i := range nodes {
		objs = append(objs, testNode(fmt.Sprintf("n%02d", i), "4", fmt.Sprintf("z%d", i%3)))
	}
	f := newFakeAPI(t)
	for _, n := range objs {
		if _, err := f.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s := startFake(t, f, func(c *Config) { c.BatchWait = -1 })
	app := map[string]string{"app": "web"}
	bound := func(name string) bool { return f.pod(t, "w", name).Spec.NodeName != "" }
	for i := range replicas {
		name := fmt.Sprintf("web-%02d", i)
		p := testPod(name, "100m", 0, "")
		p.Labels = app
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
			{LabelSelector: &metav1.LabelSelector{MatchLabels: app}, TopologyKey: v1.LabelHostname}}}}
		if _, err := f.CoreV1().Pods("w").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// The next replica comes once this one is bound: the scheduler's loop is then idle, and it
		// speculates, or extends the speculation that stands, while that replica arrives.
		deadline := time.Now().Add(30 * time.Second)
		for !bound(name) {
			if time.Now().After(deadline) {
				t.Fatalf("%s not bound in 30 s", name)
			}
			time.Sleep(time.Millisecond)
		}
		if i == 24 {
			// Speculations of 16 stand by now: from here each solve, an extension's among them, outlasts the
			// time the next replica takes to arrive.
			pause.Store(int64(25 * time.Millisecond))
		}
	}
	on := map[string]string{}
	for i := range replicas {
		name := fmt.Sprintf("web-%02d", i)
		n := f.pod(t, "w", name).Spec.NodeName
		if other, ok := on[n]; ok {
			t.Fatalf("%s and %s both bound to %s (required anti-affinity)", other, name, n)
		}
		on[n] = name
	}
	ahead := metricValue(s, "weave_scheduler_pods_placed_ahead_total")
	t.Logf("placed ahead: %v of %d; speculations used %v, solved %v, interrupted %v, stale %v", ahead, replicas, metricValue(s, "weave_scheduler_speculations_used_total"), metricValue(s, "weave_scheduler_speculations_solved_total"), metricValue(s, "weave_scheduler_speculations_interrupted_total"), metricValue(s, "weave_scheduler_speculations_stale_total"))
	if ahead <= 0 {
		t.Fatalf("pods_placed_ahead_total %v: no pod was placed from an extension's window", ahead)
	}
}
