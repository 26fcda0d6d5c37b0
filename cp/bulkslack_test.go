package cp

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBulkSlackMatchesPerBin checks that the item-by-item removals of
// bulkSlack leave the domains the per-bin scans leave, at the root (every
// bin's slack drops from unbounded) and under a decision that lowers
// every capacity at once, and that backtracking restores the root
// domains: random packings over 64-200 bin values with gaps, items whose
// domains start at other offsets than the bins (unaligned words), values
// outside the bins, zero sizes, fixed items and two resources.
func TestBulkSlackMatchesPerBin(t *testing.T) {
	saved := bulkSlackMinBins
	defer func() { bulkSlackMinBins = saved }()
	for seed := 0; seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 5))
		m := NewModel()
		nBins := 64 + rng.IntN(137)
		binLo := int64(rng.IntN(200)) - 100
		bins := make([]int64, nBins)
		x := binLo
		for j := range bins {
			bins[j] = x
			x += 1 + int64(rng.IntN(2))
		}
		nItems := 10 + rng.IntN(60)
		items := make([]IntVar, nItems)
		for i := range items {
			var vals []int64
			for _, b := range bins {
				if rng.IntN(5) > 0 {
					vals = append(vals, b)
				}
			}
			if rng.IntN(3) == 0 {
				vals = append(vals, binLo-1-int64(rng.IntN(100))) // outside, shifts the base
			}
			if rng.IntN(4) == 0 {
				vals = append(vals, x+int64(rng.IntN(70)))
			}
			if len(vals) == 0 || rng.IntN(10) == 0 {
				vals = []int64{bins[rng.IntN(nBins)]}
			}
			items[i] = m.NewIntVarFromDomain(DomainFromValues(vals...), "x")
		}
		spare := m.NewIntVar(0, 30, "spare")
		for range 2 {
			sizes := make([]int64, nItems)
			for i := range sizes {
				sizes[i] = int64(rng.IntN(25))
			}
			loads := make([]IntVar, nBins)
			for j := range loads {
				c := int64(rng.IntN(60))
				loads[j] = m.NewIntVar(0, c, "load")
				m.AddLessOrEqual(LinearExpr{Vars: []IntVar{spare, loads[j]}, Coeffs: []int64{1, 1}}, c+5)
			}
			m.AddBinPacking(items, sizes, bins, loads)
		}
		raise := int64(1 + rng.IntN(25))
		run := func(minBins int) (root, under []Domain, rootOK, underOK bool) {
			bulkSlackMinBins = minBins
			s, ok := newSolver(m, false)
			if !ok {
				return nil, nil, false, false
			}
			snap := func() []Domain {
				var ds []Domain
				for v := range m.doms {
					ds = append(ds, s.domain(int32(v)))
				}
				return ds
			}
			if rootOK = s.propagate(); !rootOK {
				return nil, nil, false, false
			}
			root = snap()
			s.pushLevel()
			underOK = s.setMin(spare.idx, raise) && s.propagate()
			if underOK {
				under = snap()
			}
			s.backtrackTo(0)
			for v, d := range snap() {
				if !slices.Equal(d.ivs, root[v].ivs) {
					t.Fatalf("seed %d: var %d after backtrack %v, root %v", seed, v, d, root[v])
				}
			}
			return root, under, rootOK, underOK
		}
		r0, u0, ok0, uok0 := run(1 << 30)
		r1, u1, ok1, uok1 := run(1)
		if ok0 != ok1 || uok0 != uok1 {
			t.Fatalf("seed %d: per-bin ok %v/%v, bulk ok %v/%v", seed, ok0, uok0, ok1, uok1)
		}
		for v := range r0 {
			if !slices.Equal(r0[v].ivs, r1[v].ivs) {
				t.Fatalf("seed %d: root var %d: per-bin %v, bulk %v", seed, v, r0[v], r1[v])
			}
		}
		for v := range u0 {
			if !slices.Equal(u0[v].ivs, u1[v].ivs) {
				t.Fatalf("seed %d: under bound, var %d: per-bin %v, bulk %v", seed, v, u0[v], u1[v])
			}
		}
	}
}
