package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/weavesql/weave/e2e/harness"
)

// TestPreemptionViaEviction: on a full cluster, a high-priority pod is placed by evicting one low-priority pod
// through the Eviction API. While a PodDisruptionBudget covers the low pods (with no disruption controller here
// the budget is never processed, so it allows nothing, and the API server would refuse the evictions),
// weave-scheduler reads it and leaves them out of the plan: nothing is evicted, and the pod's FailedScheduling
// names the budget; once the budget is deleted, the retry evicts exactly one pod, nominates the preemptor to
// that pod's node and binds it there.
func TestPreemptionViaEviction(t *testing.T) {
	ctx := context.Background()
	c := harness.Start(t)
	if _, err := c.CreateNodes(ctx, "node", 2, harness.NodeSpec{CPU: "2", Memory: "8Gi"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateNamespace(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	watch, err := c.WatchBindings(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Stop()
	s, _, _ := startWeave(t, c, weaveConfig("a"), nil)
	low := harness.PodSpec{SchedulerName: "weave-scheduler", CPU: "1", Memory: "128Mi", Priority: 1,
		Labels: map[string]string{"app": "low"}, GracePeriod: ptr.To[int64](0)}
	if _, err := c.CreatePods(ctx, "w", "low", 4, low); err != nil {
		t.Fatal(err)
	}
	lowNodes, err := c.WaitBound(ctx, "w", 4, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for name := range lowNodes {
		if err := c.SetRunning(ctx, "w", name); err != nil {
			t.Fatal(err)
		}
	}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "w", Name: "low"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(4)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "low"}}}}
	if _, err := c.Client.PolicyV1().PodDisruptionBudgets("w").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreatePod(ctx, "w", "high", harness.PodSpec{SchedulerName: "weave-scheduler", CPU: "1", Memory: "128Mi", Priority: 100}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the refused eviction reported", 30*time.Second, func() bool {
		for _, e := range eventsFor(t, c, "w", "high") {
			if strings.HasPrefix(e, "FailedScheduling:") && strings.Contains(e, "PodDisruptionBudget") {
				t.Logf("high: %s", e)
				return true
			}
		}
		return false
	})
	pods, err := c.Client.CoreV1().Pods("w").List(ctx, metav1.ListOptions{LabelSelector: "app=low"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 4 {
		t.Fatalf("%d low pods left while the budget forbids evictions", len(pods.Items))
	}
	if v := metric(t, s, "weave_scheduler_pods_preempted_total"); v != 0 {
		t.Fatalf("pods_preempted_total %v while the budget forbids evictions", v)
	}
	if err := c.Client.PolicyV1().PodDisruptionBudgets("w").Delete(ctx, "low", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var bound map[string]string
	waitFor(t, "high bound", 60*time.Second, func() bool {
		bound, err = c.WaitBound(ctx, "w", 0, time.Second)
		return err == nil && bound["high"] != ""
	})
	node, ok := bound["high"]
	if !ok {
		t.Fatalf("high not bound: %v", bound)
	}
	var victim string
	for name, n := range lowNodes {
		if _, still := bound[name]; !still {
			if victim != "" {
				t.Fatalf("two low pods gone (%s, %s): one eviction was enough", victim, name)
			}
			victim = name
			if n != node {
				t.Errorf("high bound to %s, its victim %s ran on %s", node, name, n)
			}
		}
	}
	if victim == "" || len(bound) != 4 {
		t.Fatalf("bound %v; want 3 low pods and high", bound)
	}
	// The nomination is read from the watch: the binding clears status.nominatedNodeName
	// (ClearingNominatedNodeNameAfterBinding, beta and on by default since v1.35). The watch delivers a pod's
	// updates in order: once it has seen the binding, it has seen the nomination before it.
	waitFor(t, "high seen bound on the watch", 10*time.Second, func() bool { return len(watch.Nodes("high")) > 0 })
	if got := watch.Nominated("high"); !slices.Equal(got, []string{node}) {
		t.Errorf("high seen nominated to %v before its binding, want [%s]", got, node)
	}
	p, err := c.Client.CoreV1().Pods("w").Get(ctx, "high", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.NominatedNodeName != "" {
		t.Errorf("nominatedNodeName %q after the binding, want it cleared by the API server", p.Status.NominatedNodeName)
	}
	waitMetric(t, s, "weave_scheduler_pods_preempted_total", 1)
	waitFor(t, "Preempted and Preempting events", 10*time.Second, func() bool {
		var preempted, preempting bool
		for _, e := range eventsFor(t, c, "w", victim) {
			preempted = preempted || strings.HasPrefix(e, "Preempted: Preempted by pod w/high on node "+node)
		}
		for _, e := range eventsFor(t, c, "w", "high") {
			preempting = preempting || strings.HasPrefix(e, "Preempting: Evicted 1 pod(s) of lower priority (w/"+victim+")")
		}
		return preempted && preempting
	})
}
