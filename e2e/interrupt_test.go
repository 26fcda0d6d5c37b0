package e2e

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weavesql/weave/cmd/weave-scheduler/app"
	"github.com/weavesql/weave/e2e/harness"
	"github.com/weavesql/weave/scheduler"
)

// TestWatchInterruptionLosesNoPod interrupts weave-scheduler's watches while pods are pending and checks that
// every pod created before, during and after the interruptions is bound exactly once.
//
// The in-process kube-apiserver is not restarted: a new one would listen on another port with other
// certificates, so the scheduler's client would no longer reach it. Its connections are cut instead
// (harness.Cutter closes every TCP connection its client dialled): every watch, list and binding in flight
// fails at once, as on an API server restart, and the informers must re-list and re-watch. Cuts happen right
// after pods are created, repeatedly while more are created, and between a solve and its bindings.
func TestWatchInterruptionLosesNoPod(t *testing.T) {
	ctx := context.Background()
	c := harness.Start(t)
	if _, err := c.CreateNodes(ctx, "node", 20, harness.NodeSpec{CPU: "4", Memory: "8Gi"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateNamespace(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	watch, err := c.WatchBindings(ctx, "w") // on the admin client, never cut
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Stop()
	restCfg, cutter := c.Cuttable()
	cut := &harness.Cluster{Config: restCfg, Client: c.Client}
	var cuts, midBatch atomic.Int32
	cutNow := func() {
		if cutter.Cut() > 0 {
			cuts.Add(1)
		}
	}
	s, _, _ := startWeave(t, cut, weaveConfig("a"), func(s *app.Server) {
		s.Hooks.AfterSolve = func(ctx context.Context, bs []scheduler.Binding) {
			if len(bs) > 0 && midBatch.Add(1) <= 3 { // placements made, bindings not yet sent
				cutNow()
			}
		}
	})
	const n = 40
	spec := harness.PodSpec{SchedulerName: "weave-scheduler", CPU: "100m", Memory: "64Mi"}
	// Before: pods created, then every connection cut at once, the pods pending or in a batch.
	if _, err := c.CreatePods(ctx, "w", "before", n, spec); err != nil {
		t.Fatal(err)
	}
	cutNow()
	// During: a pod every 50ms while the connections are cut every 250ms.
	stop := make(chan struct{})
	cutting := make(chan struct{})
	go func() {
		defer close(cutting)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				cutNow()
			}
		}
	}()
	for i := 0; i < n; i++ {
		if err := c.CreatePod(ctx, "w", fmt.Sprintf("during-%d", i), spec); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	<-cutting
	// After: the connections left alone.
	if _, err := c.CreatePods(ctx, "w", "after", n, spec); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every pod bound", 3*time.Minute, func() bool { return len(watch.Bound()) >= 3*n })

	pods, err := c.Client.CoreV1().Pods("w").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 3*n {
		t.Fatalf("%d pods, want %d", len(pods.Items), 3*n)
	}
	for _, p := range pods.Items {
		nodes := watch.Nodes(p.Name)
		if p.Spec.NodeName == "" || len(nodes) != 1 || nodes[0] != p.Spec.NodeName {
			t.Errorf("%s: node %q, seen on %v", p.Name, p.Spec.NodeName, nodes)
		}
	}
	time.Sleep(time.Second) // the scheduler's last events and metrics
	scheduled, bindErrors := metric(t, s, "weave_scheduler_pods_scheduled_total"), metric(t, s, "weave_scheduler_bind_errors_total")
	if scheduled > 3*n {
		t.Errorf("%v bindings succeeded for %d pods", scheduled, 3*n)
	}
	if cuts.Load() < 5 {
		t.Errorf("only %d cuts with connections to cut", cuts.Load())
	}
	t.Logf("%d pods bound once each through %d connection cuts (%d between a solve and its bindings); bindings acknowledged %v, failed %v",
		3*n, cuts.Load(), min(midBatch.Load(), 3), scheduled, bindErrors)
}
