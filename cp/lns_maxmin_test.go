package cp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// maxMinFamily builds a two-resource max-min packing shaped like the one
// Weave grounds from a policy (issue 25's family): items with exponential
// sizes clipped to [1, 80] at 85% of bins with capacities in [80, 120],
// conflict pairs, and the objective the smallest spare over every bin and
// resource, as one min over cap - load expressions (every bin is used at
// this load, so the presence terms of the grounded form are left out).
func maxMinFamily(items, bins int, seed uint64) *Model {
	rng := rand.New(rand.NewPCG(seed, 25))
	m := NewModel()
	x := make([]IntVar, items)
	for i := range x {
		x[i] = m.NewIntVar(0, int64(bins-1), "x")
	}
	binVals := make([]int64, bins)
	for j := range binVals {
		binVals[j] = int64(j)
	}
	var spares []LinearExpr
	for range 2 {
		caps := make([]int64, bins)
		var total float64
		for j := range caps {
			caps[j] = 80 + rng.Int64N(41)
			total += float64(caps[j])
		}
		raw := make([]float64, items)
		var sum float64
		for i := range raw {
			raw[i] = rng.ExpFloat64()
			sum += raw[i]
		}
		sizes := make([]int64, items)
		for i := range sizes {
			sizes[i] = int64(math.Round(math.Min(80, math.Max(1, raw[i]*0.85*total/sum))))
		}
		loads := make([]IntVar, bins)
		for j := range loads {
			loads[j] = m.NewIntVar(0, caps[j], "load")
			var e LinearExpr
			e.AddTerm(loads[j], -1).AddConstant(caps[j])
			spares = append(spares, e)
		}
		m.AddBinPacking(x, sizes, binVals, loads)
	}
	for range items / 5 {
		i, j := rng.IntN(items), rng.IntN(items)
		if i != j {
			m.AddNotEqual(LinearExpr{Vars: []IntVar{x[i], x[j]}, Coeffs: []int64{1, -1}}, 0)
		}
	}
	t := m.NewIntVar(0, 120, "min spare")
	m.AddMinEquality(t, spares)
	m.Maximize(LinearExpr{Vars: []IntVar{t}, Coeffs: []int64{1}})
	return m
}

// The bottleneck rounds find the max-min structure (one argument per bin
// and resource, each linked to its bin), and with them the search gets
// further than without within the same number of branches, on every
// seed; each solution satisfies the model.
func TestMaxMinRounds(t *testing.T) {
	m := maxMinFamily(60, 30, 1)
	s, _ := newSolver(m, true)
	st := &lnsState{}
	s.linkObjectiveBins(st)
	s.initMaxMin(st)
	if st.maxMin == nil || len(st.maxMin.args) != 60 {
		t.Fatalf("max-min structure not found: %+v", st.maxMin)
	}
	for k, bs := range st.maxMin.bins {
		if len(bs) != 1 || bs[0] != int64(k%30) {
			t.Fatalf("argument %d linked to bins %v, want [%d]", k, bs, k%30)
		}
	}
	defer func() { maxMinOff = false }()
	var with, without int64
	for seed := uint64(1); seed <= 4; seed++ {
		m := maxMinFamily(60, 30, seed)
		var obj [2]int64
		for i, off := range []bool{false, true} {
			maxMinOff = off
			r, err := m.Solve(context.Background(), Params{NodeLimit: 6000, Seed: 1})
			if err != nil || !r.HasSolution() {
				t.Fatalf("seed %d: %v %v", seed, r, err)
			}
			if err := m.Verify(r); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			obj[i] = r.Objective
		}
		t.Logf("seed %d: min spare %d with bottleneck rounds, %d without", seed, obj[0], obj[1])
		if obj[0] < obj[1] {
			t.Errorf("seed %d: %d with bottleneck rounds < %d without", seed, obj[0], obj[1])
		}
		with, without = with+obj[0], without+obj[1]
	}
	if with <= without {
		t.Errorf("bottleneck rounds reach %d in all, no more than %d without", with, without)
	}
}
