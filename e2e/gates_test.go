package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/weavesql/weave/e2e/harness"
)

// kubeCounter sums a counter of the in-process kube-scheduler over its series, read from the component-base
// legacy registry the scheduler registers its metrics in (0 before the first scheduler registered them).
func kubeCounter(t *testing.T, name string) float64 {
	t.Helper()
	mfs, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

// TestWorkloadGatesReachAPIServerAndKubeScheduler starts a cluster with the workload-aware scheduling gates
// (GenericWorkload, TopologyAwareWorkloadScheduling) through harness.Options and checks that both components
// run with them: the API server serves scheduling.k8s.io/v1beta1 (turned on with GenericWorkload) and keeps
// a PodGroup's schedulingConstraints (dropped while TopologyAwareWorkloadScheduling is off:
// pkg/registry/scheduling/podgroup/strategy.go), and kube-scheduler, which then watches PodGroups, syncs and
// binds pods. Once the cluster's test has ended the gates are off again. The same holds for StartClusterWith
// until its stop, and it refuses a gate whose dependency is off before starting anything.
func TestWorkloadGatesReachAPIServerAndKubeScheduler(t *testing.T) {
	gates := map[string]bool{"GenericWorkload": true, "TopologyAwareWorkloadScheduling": true}
	t.Run("cluster with the gates", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		c := harness.StartWith(t, harness.Options{FeatureGates: gates})
		for g := range gates {
			if !utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(g)) {
				t.Errorf("%s off in the process while the cluster runs", g)
			}
		}
		rs, err := c.Client.Discovery().ServerResourcesForGroupVersion(schedulingv1beta1.SchemeGroupVersion.String())
		if err != nil {
			t.Fatalf("discovery of %s: %v", schedulingv1beta1.SchemeGroupVersion, err)
		}
		served := false
		for _, r := range rs.APIResources {
			served = served || r.Name == "podgroups"
		}
		if !served {
			t.Fatalf("%s served without podgroups: %v", schedulingv1beta1.SchemeGroupVersion, rs.APIResources)
		}
		if err := c.CreateNamespace(ctx, "w"); err != nil {
			t.Fatal(err)
		}
		const zone = "topology.kubernetes.io/zone"
		pg, err := c.Client.SchedulingV1beta1().PodGroups("w").Create(ctx, &schedulingv1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Name: "g"},
			Spec: schedulingv1beta1.PodGroupSpec{
				SchedulingPolicy:      schedulingv1beta1.PodGroupSchedulingPolicy{Basic: &schedulingv1beta1.BasicSchedulingPolicy{}},
				SchedulingConstraints: &schedulingv1beta1.PodGroupSchedulingConstraints{Topology: []schedulingv1beta1.TopologyConstraint{{Key: zone}}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sc := pg.Spec.SchedulingConstraints; sc == nil || len(sc.Topology) != 1 || sc.Topology[0].Key != zone {
			t.Errorf("PodGroup stored with schedulingConstraints %+v, want topology [%s]: TopologyAwareWorkloadScheduling off in the API server", sc, zone)
		}
		if _, err := c.CreateNodes(ctx, "node", 3, harness.NodeSpec{CPU: "4", Memory: "16Gi"}); err != nil {
			t.Fatal(err)
		}
		c.RunKubeScheduler(ctx, t) // returns once its informers, PodGroups' among them, have synced
		if _, err := c.CreatePods(ctx, "w", "p", 10, harness.PodSpec{CPU: "100m", Memory: "128Mi"}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitBound(ctx, "w", 10, time.Minute); err != nil {
			t.Fatal(err)
		}
	})
	for g := range gates {
		if utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(g)) {
			t.Errorf("%s still on after the cluster's test ended", g)
		}
	}

	// Outside a test (weave-bench), the gates last until stop.
	c, stop, err := harness.StartClusterWith(context.Background(), nil, harness.Options{FeatureGates: gates})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.Discovery().ServerResourcesForGroupVersion(schedulingv1beta1.SchemeGroupVersion.String()); err != nil {
		t.Errorf("StartClusterWith: discovery of %s: %v", schedulingv1beta1.SchemeGroupVersion, err)
	}
	for g := range gates {
		if !utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(g)) {
			t.Errorf("StartClusterWith: %s off in the process while the cluster runs", g)
		}
	}
	stop()
	for g := range gates {
		if utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(g)) {
			t.Errorf("StartClusterWith: %s still on after stop", g)
		}
	}
	if _, _, err := harness.StartClusterWith(context.Background(), nil, harness.Options{FeatureGates: map[string]bool{"TopologyAwareWorkloadScheduling": true}}); err == nil ||
		!strings.Contains(err.Error(), "depends on features that are disabled: [GenericWorkload]") {
		t.Errorf("StartClusterWith with TopologyAwareWorkloadScheduling alone: error %v, want one naming the missing GenericWorkload", err)
	}
}
