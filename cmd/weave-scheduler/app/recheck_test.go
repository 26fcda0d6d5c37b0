package app

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weavesql/weave/scheduler"
)

// The re-check before binding judges each placement on the state as it is after the solve: a node
// filled meanwhile (no_longer_fits), a pod the state no longer has on its node (state_changed) and a
// node the state lost while the informer still lists it (node_gone) each drop the placement and
// requeue the pod, which a later batch binds to the other node.
func TestRecheckDropsWhatNoLongerHolds(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		reason string
		change func(s *Server, b scheduler.Binding) error
	}{
		{"no_longer_fits", func(s *Server, b scheduler.Binding) error {
			return s.brain.UpsertPod(ctx, scheduler.Pod{Name: "w/filler", Namespace: "w", SchedulerName: "other",
				Phase: scheduler.PhaseRunning, NodeName: b.Node, CPU: 4000, Memory: 1})
		}},
		{"state_changed", func(s *Server, b scheduler.Binding) error {
			p := *s.brain.State().Pods[b.Pod]
			p.NodeName = ""
			return s.brain.UpsertPod(ctx, p)
		}},
		{"node_gone", func(s *Server, b scheduler.Binding) error { return s.brain.DeleteNode(ctx, b.Node) }},
	} {
		t.Run(c.reason, func(t *testing.T) {
			f := newFakeAPI(t, testNode("n1", "4", ""), testNode("n2", "4", ""), testPod("p", "1", 1, ""))
			var once sync.Once
			var first atomic.Pointer[scheduler.Binding] // set in the scheduling loop
			s := startFakeWith(t, f, nil, func(s *Server) {
				s.Hooks.AfterSolve = func(_ context.Context, bs []scheduler.Binding) {
					once.Do(func() {
						first.Store(&bs[0])
						if err := c.change(s, bs[0]); err != nil {
							t.Error(err)
						}
					})
				}
			})
			eventually(t, "p bound", 20*time.Second, func() bool { return f.pod(t, "w", "p").Spec.NodeName != "" })
			if v := metricValue(s, `weave_scheduler_placements_dropped_total{reason="`+c.reason+`"}`); v != 1 {
				t.Errorf("placements dropped for %s: %v, want 1", c.reason, v)
			}
			if on := f.pod(t, "w", "p").Spec.NodeName; c.reason != "state_changed" && on == first.Load().Node {
				t.Errorf("p bound to %s, which the first placement lost", on)
			}
		})
	}
}
