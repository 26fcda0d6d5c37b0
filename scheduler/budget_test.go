package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// TestPreemptionCountsDisruptionBudgets: a plan evicts at most a budget's
// allowed disruptions of its pods (P3). p needs a whole node: emptying n1
// takes two evictions, both under budget "a", emptying n2 three without a
// budget. With "a" allowing 2 the plan empties n1 (fewest evictions); with
// 1 it empties n2, not n1, where the Eviction API would refuse the second
// eviction after the first; with P3 disabled it empties n1 regardless.
// Each victim alone passes Evictable (the budget allows a disruption).
func TestPreemptionCountsDisruptionBudgets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		allowed  int64
		disabled []string
		want     []string
	}{
		{2, nil, []string{"a0", "a1"}},
		{1, nil, []string{"c0", "c1", "c2"}},
		{1, []string{"P3"}, []string{"a0", "a1"}},
	} {
		t.Run(fmt.Sprintf("allowed=%d/disabled=%v", c.allowed, c.disabled), func(t *testing.T) {
			budget := func(p *Pod) (string, int64) {
				if p.Group == "a" {
					return "default/a", c.allowed
				}
				return "", 0
			}
			s := newTest(t, Config{DisruptionBudget: budget, DisabledPolicies: c.disabled})
			addNodes(t, s, Node{Name: "n1", CPU: 3000, Memory: 3000}, Node{Name: "n2", CPU: 3000, Memory: 3000})
			addPods(t, s,
				Pod{Name: "a0", Group: "a", CPU: 1500, Memory: 100, Priority: 1, NodeName: "n1", Phase: PhaseRunning},
				Pod{Name: "a1", Group: "a", CPU: 1500, Memory: 100, Priority: 1, NodeName: "n1", Phase: PhaseRunning},
				Pod{Name: "c0", Group: "c", CPU: 1000, Memory: 100, Priority: 1, NodeName: "n2", Phase: PhaseRunning},
				Pod{Name: "c1", Group: "c", CPU: 1000, Memory: 100, Priority: 1, NodeName: "n2", Phase: PhaseRunning},
				Pod{Name: "c2", Group: "c", CPU: 1000, Memory: 100, Priority: 1, NodeName: "n2", Phase: PhaseRunning},
				Pod{Name: "p", CPU: 3000, Memory: 100, Priority: 5})
			bs, ev, us, err := s.PreemptPods(ctx, []string{"p"})
			if err != nil {
				t.Fatal(err)
			}
			if got := evicted(ev); len(bs) != 1 || !slices.Equal(got, c.want) {
				t.Fatalf("bindings %v evictions %v unschedulable %v; want p bound evicting %v", bs, got, us, c.want)
			}
		})
	}
}

// TestCheckBudgetsRestatesP3: the independent check refuses a plan that
// evicts more of a budget's pods than it allows, and only then.
func TestCheckBudgetsRestatesP3(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{DisruptionBudget: func(p *Pod) (string, int64) {
		if p.Group == "a" {
			return "default/a", 1
		}
		return "", 0
	}})
	addNodes(t, s, Node{Name: "n1", CPU: 3000, Memory: 3000})
	addPods(t, s,
		Pod{Name: "a0", Group: "a", CPU: 100, Memory: 100, NodeName: "n1", Phase: PhaseRunning},
		Pod{Name: "a1", Group: "a", CPU: 100, Memory: 100, NodeName: "n1", Phase: PhaseRunning},
		Pod{Name: "c0", Group: "c", CPU: 100, Memory: 100, NodeName: "n1", Phase: PhaseRunning})
	if err := s.checkBudgets([]Eviction{{"a0", "n1"}, {"a1", "n1"}}); !errors.Is(err, ErrCheck) {
		t.Errorf("two evictions under a budget allowing one: %v, want ErrCheck", err)
	}
	if err := s.checkBudgets([]Eviction{{"a0", "n1"}, {"c0", "n1"}}); err != nil {
		t.Errorf("one eviction under the budget: %v", err)
	}
}
