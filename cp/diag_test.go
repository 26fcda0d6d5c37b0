package cp

import (
	"context"
	"testing"
	"time"
)

func TestDiagMaxMin(t *testing.T) {
	for _, lf := range []float64{0.6, 0.7, 0.75, 0.8, 0.85} {
		loadFactor = lf
		m, _, bound := maxMinModel(100, 50, 20, 1)
		r, _ := m.Solve(context.Background(), Params{TimeLimit: 2 * time.Second, Seed: 1})
		t.Logf("lf %.2f %v trivial %d sols %d lns %d/%d", lf, r, bound, r.Stats.Solutions, r.Stats.LNSImprovements, r.Stats.LNSRounds)
	}
	loadFactor = 0.85
}
