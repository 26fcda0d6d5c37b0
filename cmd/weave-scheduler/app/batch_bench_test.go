package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weavesql/weave/scheduler"
)

// TestBatchQuality places the e2e throughput workload (100 pods of 100m/128Mi onto 500 nodes of 4 CPU/16Gi)
// with the scheduler package directly, per solver timeout: how many pods one batch places, and how long it
// takes. WEAVE_BATCH_QUALITY=1 runs it.
func TestBatchQuality(t *testing.T) {
	nodes := qualityNodes(t, "WEAVE_BATCH_QUALITY", 500)
	for _, timeout := range []time.Duration{100 * time.Millisecond, 500 * time.Millisecond, 2 * time.Second} {
		s, err := scheduler.New(scheduler.Config{Name: "weave-scheduler", BatchSize: 100, BatchIdle: -1, Timeout: timeout, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		alloc := v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("16Gi"), v1.ResourcePods: resource.MustParse("110")}
		for i := 0; i < nodes; i++ {
			n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i), Labels: map[string]string{"kubernetes.io/hostname": fmt.Sprintf("node-%d", i)}},
				Status: v1.NodeStatus{Allocatable: alloc, Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}}
			if err := s.UpsertNode(ctx, toNode(n)); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < 100; i++ {
			p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "w", Name: fmt.Sprintf("p-%d", i)},
				Spec: v1.PodSpec{SchedulerName: "weave-scheduler", Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
					Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("128Mi")}}}}}}
			if err := s.UpsertPod(ctx, toPod(p)); err != nil {
				t.Fatal(err)
			}
		}
		t0 := time.Now()
		bs, us, err := s.ScheduleBatch(ctx)
		st := s.LastStats()
		t.Logf("timeout %v: placed %d, unplaced %d, err %v in %v (fetch %v ground %v solve %v; %d vars, %d constraints)", timeout, len(bs), len(us), err,
			time.Since(t0).Round(time.Millisecond), st.Fetch.Round(time.Millisecond), st.Ground.Round(time.Millisecond), st.Solve.Round(time.Millisecond), st.Variables, st.Constraints)
		s.Close()
	}
}
