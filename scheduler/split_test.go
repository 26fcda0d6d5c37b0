package scheduler

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weavesql/weave/cp"
)

// slowBackend answers no model of more than fit pods in time: it returns
// no solution (after the time limit if wait). It records the limits.
type slowBackend struct {
	fit    int
	wait   bool // wait out the limit before answering nothing
	mu     sync.Mutex
	limits []time.Duration
	sizes  []int
}

func (*slowBackend) Name() string { return "slow" }

func (b *slowBackend) Solve(ctx context.Context, m *cp.Model, p cp.Params) (*cp.Response, error) {
	pods := 0
	for i := 0; i < m.NumVars(); i++ {
		if n := m.VarName(i); strings.HasPrefix(n, "pending_pod[") && strings.HasSuffix(n, ".node_name") {
			pods++
		}
	}
	b.mu.Lock()
	b.limits, b.sizes = append(b.limits, p.TimeLimit), append(b.sizes, pods)
	b.mu.Unlock()
	if pods > b.fit {
		if b.wait {
			select {
			case <-time.After(p.TimeLimit):
			case <-ctx.Done():
			}
		}
		return &cp.Response{Status: cp.Unknown}, nil
	}
	return m.Solve(ctx, p)
}

// A batch no solve answers in time is solved in halves, each with its
// share of Timeout, and the whole batch stays within 4 × Timeout however
// far the halving goes.
func TestSplitBatchWithinBudget(t *testing.T) {
	setup := func(t *testing.T, fit, pods int, timeout time.Duration, wait bool) (*Scheduler, *slowBackend) {
		b := &slowBackend{fit: fit, wait: wait}
		s := newTest(t, Config{Timeout: timeout, Backend: b})
		for i := 0; i < 8; i++ {
			addNodes(t, s, Node{Name: fmt.Sprintf("n%d", i), CPU: 64000, Memory: 256000})
		}
		for i := 0; i < pods; i++ {
			addPods(t, s, Pod{Name: fmt.Sprintf("p%02d", i), CPU: 100, Memory: 100})
		}
		return s, b
	}
	t.Run("halves that solve place the whole batch", func(t *testing.T) {
		// No waiting, and time enough for the real solves of 10 pods (the
		// race detector slows them): only the limits are checked.
		const timeout = 4 * time.Second
		s, b := setup(t, 10, 40, timeout, false)
		placed, us := schedule(t, s)
		if len(placed) != 40 || len(us) != 0 {
			t.Fatalf("placed %d of 40, unschedulable %v", len(placed), us)
		}
		// 40 (no answer), 20 (no answer), 10 + 10, 20 (no answer), 10 + 10.
		want := []int{40, 20, 10, 10, 20, 10, 10}
		if fmt.Sprint(b.sizes) != fmt.Sprint(want) {
			t.Fatalf("solved batches of %v pods, want %v", b.sizes, want)
		}
		for i, l := range b.limits {
			if share := timeout * time.Duration(b.sizes[i]) / 40; l > share || l < share*3/4 {
				t.Errorf("solve %d of %d pods had %v, want its share %v", i, b.sizes[i], l, share)
			}
		}
	})
	t.Run("a batch nothing answers gives up within the budget", func(t *testing.T) {
		const timeout = 400 * time.Millisecond
		s, b := setup(t, 0, 40, timeout, true)
		placed, us := schedule(t, s)
		if len(placed) != 0 || len(us) != 40 {
			t.Fatalf("placed %d, unschedulable %d; want none placed, all 40 unschedulable for now", len(placed), len(us))
		}
		var total time.Duration
		for _, l := range b.limits {
			total += l
		}
		if total > splitBudget*timeout {
			t.Errorf("the solves had %v in all (%d solves), more than the budget %v", total, len(b.limits), splitBudget*timeout)
		}
		// Without the budget, the halving goes down to single pods: 79 solves.
		if len(b.limits) >= 2*40-1 {
			t.Errorf("%d solves: the halving was not cut short", len(b.limits))
		}
	})
}
