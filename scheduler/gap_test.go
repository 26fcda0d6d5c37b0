package scheduler

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weavesql/weave/cp"
)

// gapBackend solves with the native engine and records the gap limit each
// solve was given and what it returned.
type gapBackend struct {
	mu   sync.Mutex
	gaps []int64
	resp []*cp.Response
}

func (*gapBackend) Name() string { return "gap" }

func (b *gapBackend) Solve(ctx context.Context, m *cp.Model, p cp.Params) (*cp.Response, error) {
	r, err := m.Solve(ctx, p)
	b.mu.Lock()
	b.gaps, b.resp = append(b.gaps, p.AbsoluteGapLimit), append(b.resp, r)
	b.mu.Unlock()
	return r, err
}

// TestGapLimitEndsAPlacementBatch: a placement batch whose solve would wait
// a minute for an improvement ends once its placement is proven within
// GapLimit (default 50) of the best: every pod placed, the bound within 50
// of the objective. A negative GapLimit passes no limit to the solver.
func TestGapLimitEndsAPlacementBatch(t *testing.T) {
	// 30 pods onto 60 nodes: the solver's bound comes within 50 (about 40).
	setup := func(t *testing.T) (*Scheduler, *gapBackend) {
		b := &gapBackend{}
		s := newTest(t, Config{Timeout: time.Minute, ImprovementTimeout: time.Minute, Backend: b})
		for i := 0; i < 60; i++ {
			addNodes(t, s, Node{Name: fmt.Sprintf("n%02d", i), CPU: 64000, Memory: 256000, Pods: 110, Zone: fmt.Sprintf("z%d", i%3)})
		}
		for i := 0; i < 30; i++ {
			addPods(t, s, Pod{Name: fmt.Sprintf("p%02d", i), Group: fmt.Sprintf("g%d", i%3), CPU: 1000, Memory: 1000})
		}
		return s, b
	}
	t.Run("default", func(t *testing.T) {
		s, b := setup(t)
		t0 := time.Now()
		placed, us := schedule(t, s)
		if took := time.Since(t0); took > 30*time.Second {
			t.Fatalf("the batch took %v: it waited for the improvement timeout", took)
		}
		if len(placed) != 30 || len(us) != 0 {
			t.Fatalf("placed %d of 30, unschedulable %v", len(placed), us)
		}
		if len(b.gaps) != 1 || b.gaps[0] != 50 {
			t.Fatalf("gap limits %v, want one solve with 50", b.gaps)
		}
		if r := b.resp[0]; (r.Status != cp.Feasible && r.Status != cp.Optimal) || r.Bound-r.Objective > 50 || r.Bound < r.Objective {
			t.Fatalf("%v objective %d bound %d", r.Status, r.Objective, r.Bound)
		}
	})
	t.Run("off", func(t *testing.T) {
		b := &gapBackend{}
		s := newTest(t, Config{GapLimit: -1, Backend: b})
		addNodes(t, s, Node{Name: "n0", CPU: 4000, Memory: 8000, Pods: 110})
		addPods(t, s, Pod{Name: "p0", CPU: 100, Memory: 100})
		if placed, _ := schedule(t, s); len(placed) != 1 {
			t.Fatalf("placed %v", placed)
		}
		if len(b.gaps) != 1 || b.gaps[0] != 0 {
			t.Fatalf("gap limits %v, want none (0)", b.gaps)
		}
	})
}
