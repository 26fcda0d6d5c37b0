package scheduler

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/weavesql/weave/cp"
)

// recordingBackend solves with the native engine and keeps the parameters of each solve.
type recordingBackend struct {
	mu     sync.Mutex
	params []cp.Params
}

func (b *recordingBackend) Name() string { return "recording" }

func (b *recordingBackend) Solve(ctx context.Context, m *cp.Model, p cp.Params) (*cp.Response, error) {
	b.mu.Lock()
	b.params = append(b.params, p)
	b.mu.Unlock()
	return m.Solve(ctx, p)
}

// A placement batch asks the solver to keep searching for
// UnplacedImprovementTimeout while the gap is at least one pod's reward
// (baseWeight), and ImprovementTimeout once it is below; a preemption plan
// waits PreemptionUnplacedImprovementTimeout while the gap is at least a
// preemptor's reward (here priority 5 over one pod of priority 1: twice
// baseWeight), then PreemptionImprovementTimeout. Negative turns the
// longer waits off.
func TestUnplacedImprovementTimeoutReachesTheSolver(t *testing.T) {
	for _, c := range []struct {
		set, want         time.Duration
		planSet, planWant time.Duration
	}{{0, 100 * time.Millisecond, 0, 500 * time.Millisecond}, {time.Second, time.Second, 200 * time.Millisecond, 200 * time.Millisecond}, {-1, 0, -1, 0}} {
		rec := &recordingBackend{}
		s := newTest(t, Config{Backend: rec, UnplacedImprovementTimeout: c.set, PreemptionUnplacedImprovementTimeout: c.planSet})
		addNodes(t, s, Node{Name: "n1", CPU: 2000, Memory: 2000})
		addPods(t, s, Pod{Name: "low", CPU: 2000, Memory: 100, Priority: 1, NodeName: "n1", Phase: PhaseRunning},
			Pod{Name: "p", CPU: 1000, Memory: 100, Priority: 5})
		schedule(t, s)
		if _, _, _, err := s.PreemptPods(context.Background(), []string{"p"}); err != nil {
			t.Fatal(err)
		}
		if len(rec.params) < 2 {
			t.Fatalf("set %v: %d solves recorded, want a placement batch and a preemption plan", c.set, len(rec.params))
		}
		place, plan := rec.params[0], rec.params[len(rec.params)-1]
		if place.ImprovementTimeout != 5*time.Millisecond || place.WideGapImprovementTimeout != c.want || place.WideGap != baseWeight-1 {
			t.Errorf("set %v: placement batch waits %v, %v above a gap of %d; want 5ms, %v above %d",
				c.set, place.ImprovementTimeout, place.WideGapImprovementTimeout, place.WideGap, c.want, baseWeight-1)
		}
		if plan.ImprovementTimeout != 50*time.Millisecond || plan.WideGapImprovementTimeout != c.planWant || plan.WideGap != 2*baseWeight-1 {
			t.Errorf("set %v: preemption plan waits %v, %v above a gap of %d; want 50ms, %v above %d",
				c.planSet, plan.ImprovementTimeout, plan.WideGapImprovementTimeout, plan.WideGap, c.planWant, 2*baseWeight-1)
		}
	}
}
