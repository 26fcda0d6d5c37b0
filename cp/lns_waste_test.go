package cp

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
)

// genTightSmall is a small version of backend/minizinc's genTight: bins
// of capacity 1000 in two resources, each filled by 2 to 4 items to a
// random fraction in [load-0.01, load+0.01] (so a packing exists), items
// shuffled, a few conflicts between items of different bins.
func genTightSmall(bins int, load float64, seed uint64) *Model {
	rng := rand.New(rand.NewPCG(seed, 17))
	var sizes [2][]int64
	var hidden []int64
	for j := 0; j < bins; j++ {
		k := 2 + rng.IntN(3)
		for r := range sizes {
			f := load - 0.01 + rng.Float64()*(min(load+0.01, 1)-(load-0.01))
			fill := int64(f * 1000)
			cuts := []int64{0, fill}
			for len(cuts) < k+1 {
				if c := 1 + rng.Int64N(fill-1); !slices.Contains(cuts, c) {
					cuts = append(cuts, c)
				}
			}
			slices.Sort(cuts)
			for t := 0; t < k; t++ {
				sizes[r] = append(sizes[r], cuts[t+1]-cuts[t])
			}
		}
		for t := 0; t < k; t++ {
			hidden = append(hidden, int64(j))
		}
	}
	n := len(hidden)
	perm := rng.Perm(n)
	m := NewModel()
	x := make([]IntVar, n)
	for i := range x {
		x[i] = m.NewIntVar(0, int64(bins-1), "x")
	}
	binVals := make([]int64, bins)
	for j := range binVals {
		binVals[j] = int64(j)
	}
	for r := range sizes {
		sz := make([]int64, n)
		for i, p := range perm {
			sz[i] = sizes[r][p]
		}
		loads := make([]IntVar, bins)
		for j := range loads {
			loads[j] = m.NewIntVar(0, 1000, "load")
		}
		m.AddBinPacking(x, sz, binVals, loads)
	}
	for k := 0; k < n/5; {
		a, b := rng.IntN(n), rng.IntN(n)
		if hidden[perm[a]] != hidden[perm[b]] {
			m.AddNotEqual(LinearExpr{Vars: []IntVar{x[a], x[b]}, Coeffs: []int64{1, -1}}, 0)
			k++
		}
	}
	return m
}

// TestWastefulBins: the partial neighbourhood ranks the bins holding a
// placed item by the room they leave (normalised, summed over the
// resources), most first; empty bins are not listed.
func TestWastefulBins(t *testing.T) {
	m := NewModel()
	x := make([]IntVar, 4)
	for i := range x {
		x[i] = m.NewIntVar(0, 3, "x")
	}
	loads := func() []IntVar {
		ls := make([]IntVar, 4)
		for j := range ls {
			ls[j] = m.NewIntVar(0, 10, "load")
		}
		return ls
	}
	m.AddBinPacking(x, []int64{9, 2, 5, 4}, []int64{0, 1, 2, 3}, loads())
	m.AddBinPacking(x, []int64{1, 1, 5, 4}, []int64{0, 1, 2, 3}, loads())
	s, ok := newSolver(m, false)
	if !ok || !s.propagate() {
		t.Fatal("root")
	}
	s.rootHi = append([]int64(nil), s.hi...)
	c := &searchCtl{}
	c.partial = make([]int64, len(s.decisionVars))
	for k, v := range s.decisionVars {
		c.partial[k] = []int64{0, 1, 2, partialUnset}[v] // items 0..3 are variables 0..3
	}
	// Rooms: bin 0: 1/10 + 9/10, bin 1: 8/10 + 9/10, bin 2: 5/10 + 5/10.
	got := s.wastefulBins(c, &lnsState{})
	if !slices.Equal(got, []int64{1, 0, 2}) {
		t.Fatalf("wasteful bins %v, want [1 0 2]", got)
	}
}

// TestTightPackingsSolved: tight feasible packings (97% full) are solved
// within a node budget (the partial LNS repairs the deepest dive), every
// solution verified, and the search is deterministic for a seed.
func TestTightPackingsSolved(t *testing.T) {
	solved := 0
	for seed := uint64(1); seed <= 8; seed++ {
		m := genTightSmall(12, 0.97, seed)
		var first *Response
		for range 2 {
			r, err := m.Solve(context.Background(), Params{Seed: 1, NodeLimit: 20000})
			if err != nil || r.Status == Infeasible {
				t.Fatalf("seed %d: %v %v", seed, r, err)
			}
			if r.HasSolution() {
				if err := m.Verify(r); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
			}
			if first == nil {
				first = r
			} else if r.Status != first.Status || r.Stats.Branches != first.Stats.Branches {
				t.Fatalf("seed %d: not deterministic: %v then %v", seed, first, r)
			}
		}
		if first.HasSolution() {
			solved++
		}
	}
	if solved < 6 {
		t.Fatalf("solved %d of 8 tight packings", solved)
	}
}
