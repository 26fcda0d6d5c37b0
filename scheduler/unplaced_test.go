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
// UnplacedImprovementTimeout while the gap is above half a pod's reward
// (wideGapPlacement), and ImprovementTimeout once it is below; a preemption plan
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
		if place.ImprovementTimeout != 5*time.Millisecond || place.WideGapImprovementTimeout != c.want || place.WideGap != wideGapPlacement {
			t.Errorf("set %v: placement batch waits %v, %v above a gap of %d; want 5ms, %v above %d",
				c.set, place.ImprovementTimeout, place.WideGapImprovementTimeout, place.WideGap, c.want, wideGapPlacement)
		}
		if plan.ImprovementTimeout != 50*time.Millisecond || plan.WideGapImprovementTimeout != c.planWant || plan.WideGap != 2*baseWeight-1 {
			t.Errorf("set %v: preemption plan waits %v, %v above a gap of %d; want 50ms, %v above %d",
				c.planSet, plan.ImprovementTimeout, plan.WideGapImprovementTimeout, plan.WideGap, c.planWant, 2*baseWeight-1)
		}
	}
}

// firstSolutionBackend stops at the solver's first solution, the hint's,
// and keeps the parameters and objective of each solve.
type firstSolutionBackend struct {
	stopFirst bool
	params    []cp.Params
	objective []int64
}

func (b *firstSolutionBackend) Name() string { return "first-solution" }

func (b *firstSolutionBackend) Solve(ctx context.Context, m *cp.Model, p cp.Params) (*cp.Response, error) {
	b.params = append(b.params, p)
	p.StopAfterFirstSolution = b.stopFirst
	r, err := m.Solve(ctx, p)
	if err == nil {
		b.objective = append(b.objective, r.Objective)
	}
	return r, err
}

// TestOnePodMoreIsAWideGap: the gap between a placement that strands a
// gang and the one that places it too is above the WideGap a placement
// batch passes, so the solver searches for UnplacedImprovementTimeout, not
// ImprovementTimeout, from the stranding hint. Placing the stranded pod
// costs soft points (N4, N5, balancing), so the gain is below a whole
// reward: with baseWeight − 1 as WideGap the batch got 5 ms and, on a
// loaded machine, kept the hint (TestGangStrandingSim). The instance is
// best fit's stranding: nodes of 4 and 3 GPUs in one rack, gang A 2 × 2
// GPUs, gang B 1 × 3 GPUs; the greedy hint puts A's first pod on the
// 3-GPU node.
func TestOnePodMoreIsAWideGap(t *testing.T) {
	run := func(stopFirst bool) (map[string]string, *firstSolutionBackend) {
		b := &firstSolutionBackend{stopFirst: stopFirst}
		s := newTest(t, Config{Backend: b, Verify: true})
		addNodes(t, s, gpuNode("n4", "r1", 4), gpuNode("n3", "r1", 3))
		addGroups(t, s, PodGroup{Name: "A", MinCount: 2, TopologyKey: "rack"}, PodGroup{Name: "B", MinCount: 1, TopologyKey: "rack"})
		addPods(t, s, gangPod("a-0", "A", 2), gangPod("a-1", "A", 2), gangPod("b-0", "B", 3))
		placed, _ := schedule(t, s)
		if len(b.objective) == 0 {
			t.Fatal("no solve recorded")
		}
		return placed, b
	}
	hinted, hb := run(true)
	best, bb := run(false)
	if len(hinted) != 2 || hinted["b-0"] != "" {
		t.Fatalf("the first solution (the greedy hint) placed %v; want gang A only, B stranded", hinted)
	}
	if len(best) != 3 {
		t.Fatalf("the solve placed %v; want all three pods", best)
	}
	gain := bb.objective[0] - hb.objective[0]
	if wide := bb.params[0].WideGap; gain <= wide {
		t.Errorf("placing the stranded gang gains %d (objective %d -> %d), not above the WideGap %d a placement batch passes: "+
			"the solver would wait ImprovementTimeout, not UnplacedImprovementTimeout, from the hint", gain, hb.objective[0], bb.objective[0], wide)
	}
	if gain >= baseWeight {
		t.Errorf("placing one more pod gains %d, a whole reward (%d) or more: the case the test stands for is gone", gain, baseWeight)
	}
}
