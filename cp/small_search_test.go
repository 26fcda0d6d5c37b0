package cp

import (
	"context"
	"math/rand/v2"
	"testing"
)

// Small models are proven: bin packings of 3 to 8 items into 2 to 5 bins
// (genSymModel) reach Optimal or Infeasible well within the limit. With LNS
// between Luby restarts, seeds 109, 228 and 278 were still "feasible"
// after 3 s and millions of conflicts; the complete search alone proves
// each in under 50,000. The limit is a number of branches, not a time,
// so that a loaded machine cannot stop a search short of its proof.
const smallModelBranches = 1_000_000

func TestSmallModelsAreProven(t *testing.T) {
	for seed := 0; seed < 300; seed++ {
		m := genSymModel(rand.New(rand.NewPCG(uint64(seed), 5)))
		r, err := m.Solve(context.Background(), Params{Seed: int64(seed), NodeLimit: smallModelBranches})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != Optimal && r.Status != Infeasible {
			t.Errorf("seed %d: %v after %d conflicts", seed, r.Status, r.Stats.Conflicts)
		}
		if r.HasSolution() {
			if err := m.Verify(r); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
	}
}

// restartLimit doubles on a small search and follows Luby's sequence
// otherwise.
func TestRestartLimit(t *testing.T) {
	for i, want := range []int64{64, 128, 256, 512} {
		if got := restartLimit(int64(i+1), true, 64); got != want {
			t.Errorf("small, restart %d: %d, want %d", i+1, got, want)
		}
	}
	for i, want := range []int64{64, 64, 128, 64, 64, 128, 256} {
		if got := restartLimit(int64(i+1), false, 64); got != want {
			t.Errorf("Luby, restart %d: %d, want %d", i+1, got, want)
		}
	}
}
