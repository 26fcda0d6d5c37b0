package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/weavesql/weave/scheduler"
)

// BenchmarkFailed: the loop's time in failed, the triage after a batch, for 10 pods that fit no node (too
// big for any node; a node selector no node matches; anti-affinity to pods in every zone) on 100 nodes
// running 1,000 pods, preemption off. The reports (message, event, condition) run in the background; each
// iteration waits for them outside the timer and queues the pods again. The triage stops checking pods after
// triageBudget (1 s); those left unchecked stay queued.
func BenchmarkFailed(b *testing.B) {
	var objs []runtime.Object
	for i := 0; i < 100; i++ {
		n := testNode(fmt.Sprintf("n-%04d", i), "64", fmt.Sprintf("z%d", i%3))
		n.Labels["pool"] = fmt.Sprint(i % 4)
		objs = append(objs, n)
	}
	for i := 0; i < 1000; i++ {
		p := testPod(fmt.Sprintf("r-%d", i), "100m", 0, fmt.Sprintf("n-%04d", i%100))
		p.Labels = map[string]string{"app": fmt.Sprint("app-", i%50)}
		objs = append(objs, p)
	}
	var us []scheduler.Unschedulable
	for i := 0; i < 10; i++ {
		p := testPod(fmt.Sprintf("p-%d", i), "100m", 0, "")
		switch i % 3 {
		case 0:
			p = testPod(p.Name, "128", 0, "")
		case 1:
			p.Spec.NodeSelector = map[string]string{"pool": "9"}
		case 2:
			p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "app-7"}}, TopologyKey: v1.LabelTopologyZone}}}}
		}
		objs = append(objs, p)
		us = append(us, scheduler.Unschedulable{Pod: "w/" + p.Name, Reason: "left by the batch"})
	}
	cfg := DefaultConfig()
	cfg.LeaderElect, cfg.Serving, cfg.DisablePreemption = false, nil, true
	cfg.InitialBackoff, cfg.MaxBackoff = time.Hour, time.Hour // the benchmark queues the pods again itself
	s, err := NewWithClient(cfg, fake.NewClientset(objs...), quiet)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.startInformers(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.failed(ctx, us)
		b.StopTimer()
		time.Sleep(300 * time.Millisecond) // the reports
		s.mu.Lock()
		backedOff := 0
		for _, u := range us {
			if s.backoff[u.Pod] != nil { // the others were left unchecked (triageBudget)
				backedOff++
				s.requeueLocked(u.Pod)
			}
		}
		s.mu.Unlock()
		if backedOff == 0 {
			b.Fatal("no pod reported")
		}
		b.StartTimer()
	}
}
