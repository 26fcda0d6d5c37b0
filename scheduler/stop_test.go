package scheduler

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// A batch on many nodes has load-balancing objectives the solver cannot
// prove optimal: by default the solve ends once the placement stops
// improving (ImprovementTimeout), not at Timeout, and still places the
// whole batch; with a negative ImprovementTimeout it runs to Timeout.
func TestBatchStopsWhenPlacementStopsImproving(t *testing.T) {
	const timeout = 20 * time.Second
	const pods = 90
	for _, tc := range []struct {
		name        string
		improvement time.Duration
		wantEarly   bool
	}{
		{"default: stop when the placement stops improving", 0, true},
		{"negative: run to the time limit", -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.wantEarly && testing.Short() {
				t.Skip("runs to the time limit")
			}
			cfg := Config{Timeout: timeout, ImprovementTimeout: tc.improvement}
			if !tc.wantEarly {
				cfg.Timeout = 2 * time.Second
			}
			s := newTest(t, cfg)
			// Uneven capacities and sizes: the balance is not proven
			// optimal within the limit.
			for i := 0; i < 40; i++ {
				addNodes(t, s, Node{Name: fmt.Sprintf("n%02d", i), CPU: 8000 + int64(i%5)*1000, Memory: 16000 + int64(i%7)*1500, Zone: fmt.Sprintf("z%d", i%3)})
			}
			for i := 0; i < pods; i++ {
				addPods(t, s, Pod{Name: fmt.Sprintf("p%02d", i), CPU: 100 + int64(i*37%11)*113, Memory: 200 + int64(i*53%7)*271})
			}
			placed, us := schedule(t, s)
			if len(placed) != pods || len(us) != 0 {
				t.Fatalf("placed %d of %d (unschedulable %v)", len(placed), pods, us)
			}
			solve := s.LastStats().Solve
			if tc.wantEarly && solve > timeout/4 {
				t.Errorf("the solve took %v of its %v limit: it did not stop when the placement stopped improving", solve, timeout)
			}
			if !tc.wantEarly && solve < cfg.Timeout*9/10 {
				t.Errorf("the solve took %v, want the whole %v limit (no improvement timeout)", solve, cfg.Timeout)
			}
		})
	}
}

// BenchmarkUpsertPod: writing a pending pod with labels, an affinity term
// and a toleration to the state database (every pod event does).
func BenchmarkUpsertPod(b *testing.B) {
	s := newTest(b, Config{})
	addNodes(b, s, Node{Name: "n1", CPU: 4000, Memory: 4000})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := Pod{Name: fmt.Sprintf("p%d", i), CPU: 100, Memory: 100, Labels: map[string]string{"app": "web", "tier": "front"},
			Affinity:    []PodAffinityTerm{{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"app": "web"}), TopologyKey: LabelHostname}},
			Tolerations: []Toleration{{Key: "dedicated", Operator: "Exists"}}}
		if err := s.UpsertPod(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
}
