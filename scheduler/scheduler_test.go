package scheduler

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func newTest(t testing.TB, cfg Config) *Scheduler {
	t.Helper()
	if cfg.BatchIdle == 0 {
		cfg.BatchIdle = -1
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	cfg.Verify = true
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// emptyState deletes every pod and node of s, so that one scheduler (its
// models compiled once) serves several cases.
func emptyState(t testing.TB, s *Scheduler) {
	t.Helper()
	ctx := context.Background()
	st := s.State()
	for name := range st.Pods {
		if err := s.DeletePod(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	for name := range st.Nodes {
		if err := s.DeleteNode(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
}

func addNodes(t testing.TB, s *Scheduler, nodes ...Node) {
	t.Helper()
	for _, n := range nodes {
		if n.Pods == 0 {
			n.Pods = 110
		}
		if n.Storage == 0 {
			n.Storage = 100000
		}
		if err := s.UpsertNode(context.Background(), n); err != nil {
			t.Fatal(err)
		}
	}
}

func addPods(t testing.TB, s *Scheduler, pods ...Pod) {
	t.Helper()
	for _, p := range pods {
		if err := s.UpsertPod(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
}

func schedule(t testing.TB, s *Scheduler) (map[string]string, []Unschedulable) {
	t.Helper()
	bs, us, err := s.ScheduleBatch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, b := range bs {
		out[b.Pod] = b.Node
	}
	return out, us
}

func TestSmoke(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{})
	addNodes(t, s, Node{Name: "n1", CPU: 4000, Memory: 8000, Zone: "a"}, Node{Name: "n2", CPU: 4000, Memory: 8000, Zone: "b"})
	for i := 0; i < 4; i++ {
		addPods(t, s, Pod{Name: fmt.Sprintf("p%d", i), CPU: 1500, Memory: 1000})
	}
	placed, us := schedule(t, s)
	if len(placed) != 4 || len(us) != 0 {
		t.Fatalf("placed %v, unschedulable %v", placed, us)
	}
	t.Logf("%v stats %+v", placed, s.LastStats())
	addPods(t, s, Pod{Name: "big", CPU: 3000})
	placed, us = schedule(t, s)
	if len(placed) != 0 || len(us) != 1 {
		t.Fatalf("placed %v, unschedulable %v", placed, us)
	}
}
