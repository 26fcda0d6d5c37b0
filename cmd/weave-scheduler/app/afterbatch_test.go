package app

import (
	"sync"
	"testing"
	"time"
)

// AfterBatch reports each batch that decided pods: its pods, those placed, Weave's statistics of the
// solve and the batch's whole time, which includes the solve.
func TestAfterBatchReportsEachBatch(t *testing.T) {
	f := newFakeAPI(t, testNode("n1", "2", ""), testPod("fits", "1", 1, ""), testPod("too-big", "3", 1, ""))
	var mu sync.Mutex
	var reports []BatchReport
	startFakeWith(t, f, nil, func(s *Server) {
		s.Hooks.AfterBatch = func(r BatchReport) {
			mu.Lock()
			defer mu.Unlock()
			reports = append(reports, r)
		}
	})
	eventually(t, "fits bound", 20*time.Second, func() bool { return f.pod(t, "w", "fits").Spec.NodeName != "" })
	// The binding goes out before the batch ends (the batch then records too-big's failure), so the report
	// may follow the binding.
	eventually(t, "a batch reported", 20*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(reports) > 0
	})
	mu.Lock()
	defer mu.Unlock()
	r := reports[0]
	if r.Size != 2 || r.Placed != 1 {
		t.Errorf("first batch: %d pods, %d placed; want 2 and 1 (too-big fits no node)", r.Size, r.Placed)
	}
	if r.Start.IsZero() || r.Stats.Variables == 0 || r.Stats.Solve <= 0 {
		t.Errorf("first batch: start %v, %d variables, solve %v: the solve's statistics are missing", r.Start, r.Stats.Variables, r.Stats.Solve)
	}
	if decide := r.Stats.Ground + r.Stats.Solve + r.Stats.Extract; r.Total < decide {
		t.Errorf("first batch: total %v shorter than its own ground and solve (%v)", r.Total, decide)
	}
}
