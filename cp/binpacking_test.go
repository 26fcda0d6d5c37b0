package cp

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBinPackingAgainstBruteForce checks the (incremental) bin-packing
// propagator and the search on random small packings: several resources
// over shared items, items that may stay outside the bins, loads with
// holes and bounds, conflicts, and a max-min or min-max objective.
func TestBinPackingAgainstBruteForce(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 400
	}
	for seed := 0; seed < n; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 99))
		nItems := 2 + rng.IntN(5)
		nBins := 1 + rng.IntN(4)
		nRes := 1 + rng.IntN(2)
		m := NewModel()
		binVals := make([]int64, nBins)
		for j := range binVals {
			binVals[j] = int64(j*3+rng.IntN(2)) + 1
		}
		items := make([]IntVar, nItems)
		for i := range items {
			var vals []int64
			for _, b := range binVals {
				if rng.IntN(4) > 0 {
					vals = append(vals, b)
				}
			}
			if rng.IntN(4) == 0 {
				vals = append(vals, 0) // outside the bins
			}
			if len(vals) == 0 {
				vals = append(vals, binVals[0])
			}
			items[i] = m.NewIntVarFromDomain(DomainFromValues(vals...), "x")
		}
		sizes := make([][]int64, nRes)
		loads := make([][]IntVar, nRes)
		for r := range sizes {
			sizes[r] = make([]int64, nItems)
			for i := range sizes[r] {
				sizes[r][i] = int64(rng.IntN(6))
			}
			loads[r] = make([]IntVar, nBins)
			for j := range loads[r] {
				lo := int64(rng.IntN(3))
				hi := lo + int64(rng.IntN(10))
				if rng.IntN(5) == 0 {
					var vals []int64
					for v := lo; v <= hi; v++ {
						if rng.IntN(3) > 0 {
							vals = append(vals, v)
						}
					}
					if len(vals) == 0 {
						vals = []int64{lo}
					}
					loads[r][j] = m.NewIntVarFromDomain(DomainFromValues(vals...), "load")
				} else {
					loads[r][j] = m.NewIntVar(lo, hi, "load")
				}
			}
			m.AddBinPacking(items, sizes[r], binVals, loads[r])
		}
		var conflicts [][2]int
		for k := 0; k < rng.IntN(3); k++ {
			a, b := rng.IntN(nItems), rng.IntN(nItems)
			if a != b {
				conflicts = append(conflicts, [2]int{a, b})
				m.AddNotEqual(LinearExpr{Vars: []IntVar{items[a], items[b]}, Coeffs: []int64{1, -1}}, 0)
			}
		}
		objKind := rng.IntN(3) // 0 none, 1 maximise min load, 2 minimise max load
		var target IntVar
		if objKind > 0 {
			target = m.NewIntVar(0, 20, "t")
			var es []LinearExpr
			for _, l := range loads[0] {
				es = append(es, LinearExpr{Vars: []IntVar{l}, Coeffs: []int64{1}})
			}
			if objKind == 1 {
				m.AddMinEquality(target, es)
				m.Maximize(LinearExpr{Vars: []IntVar{target}, Coeffs: []int64{1}})
			} else {
				m.AddMaxEquality(target, es)
				m.Minimize(LinearExpr{Vars: []IntVar{target}, Coeffs: []int64{1}})
			}
		}
		// Brute force over the items; loads are determined.
		feasible, best := false, int64(0)
		assign := make([]int64, nItems)
		var rec func(i int)
		rec = func(i int) {
			if i == nItems {
				for _, c := range conflicts {
					if assign[c[0]] == assign[c[1]] {
						return
					}
				}
				var mn, mx int64 = 1 << 40, -1 << 40
				for r := range sizes {
					for j, b := range binVals {
						var l int64
						for k := range assign {
							if assign[k] == b {
								l += sizes[r][k]
							}
						}
						if !m.doms[loads[r][j].idx].Contains(l) {
							return
						}
						if r == 0 {
							mn, mx = min(mn, l), max(mx, l)
						}
					}
				}
				var obj int64
				switch objKind {
				case 1:
					obj = mn
				case 2:
					obj = mx
				}
				if objKind > 0 && (obj < 0 || obj > 20) {
					return
				}
				if !feasible || (objKind == 1 && obj > best) || (objKind == 2 && obj < best) {
					best = obj
				}
				feasible = true
				return
			}
			for _, v := range m.doms[items[i].idx].Values() {
				assign[i] = v
				rec(i + 1)
			}
		}
		rec(0)
		for _, p := range []Params{{Seed: int64(seed)}, {Seed: int64(seed), DisableLNS: true}} {
			res, err := m.Solve(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if !feasible {
				if res.Status != Infeasible {
					t.Fatalf("seed %d: infeasible by brute force, got %v\n%s", seed, res, dump(m))
				}
				continue
			}
			if res.Status != Optimal {
				t.Fatalf("seed %d: feasible (best %d), got %v\n%s", seed, best, res, dump(m))
			}
			if err := m.Verify(res); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if objKind > 0 && (res.Objective != best || res.Bound != best) {
				t.Fatalf("seed %d: objective %d bound %d, want %d\n%s", seed, res.Objective, res.Bound, best, dump(m))
			}
		}
	}
}

// TestPlacementModelDeterministic solves the real placement model twice
// with the same seed and a node limit: same answer, verified, and a
// decision strategy gives the same quality.
func TestPlacementModelDeterministic(t *testing.T) {
	m, err := loadModel("testdata/placement500.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	var first []int64
	for k := 0; k < 2; k++ {
		r, err := m.Solve(context.Background(), Params{Seed: 3, NodeLimit: 1500})
		if err != nil || !r.HasSolution() {
			t.Fatalf("%v %v", r, err)
		}
		if err := m.Verify(r); err != nil {
			t.Fatal(err)
		}
		if r.Bound < r.Objective {
			t.Fatalf("bound %d below objective %d (maximising)", r.Bound, r.Objective)
		}
		if k == 0 {
			first = r.Values()
		} else if !slices.Equal(first, r.Values()) {
			t.Fatal("two solves with the same seed differ")
		}
	}
	// The same model with an explicit decision strategy over the pods.
	var pods []IntVar
	for i := 0; i < m.NumVars(); i++ {
		if strings.HasSuffix(m.VarName(i), ".node_name") {
			pods = append(pods, m.Var(i))
		}
	}
	if len(pods) != 100 {
		t.Fatalf("%d pod variables", len(pods))
	}
	m.AddDecisionStrategy(pods)
	r, err := m.Solve(context.Background(), Params{Seed: 3, StopAfterFirstSolution: true})
	if err != nil || !r.HasSolution() {
		t.Fatalf("%v %v", r, err)
	}
	if err := m.Verify(r); err != nil {
		t.Fatal(err)
	}
	if r.Stats.Branches > 100 || r.Objective < 30 {
		t.Fatalf("first solution: %v", r)
	}
}

// TestImpliedCliqueProvesInfeasible: four items larger than half a bin
// cannot go into three bins; the implied all_different proves it at the
// root, without search. The 85% max-min benchmark instance (seed 1) has
// such a clique of 51 items for 50 bins.
func TestImpliedCliqueProvesInfeasible(t *testing.T) {
	m := NewModel()
	var x []IntVar
	for i := 0; i < 4; i++ {
		x = append(x, m.NewIntVar(0, 2, "x"))
	}
	var loads []IntVar
	for j := 0; j < 3; j++ {
		loads = append(loads, m.NewIntVar(0, 10, "load"))
	}
	m.AddBinPacking(x, []int64{6, 7, 6, 8}, []int64{0, 1, 2}, loads)
	r, err := m.Solve(context.Background(), Params{Seed: 1})
	if err != nil || r.Status != Infeasible || r.Stats.Branches != 0 {
		t.Fatalf("%v %v", r, err)
	}
	mm, _, _ := maxMinModel(100, 50, 20, 1) // loadFactor 0.85
	r, err = mm.Solve(context.Background(), Params{Seed: 1, TimeLimit: 10 * time.Second})
	if err != nil || r.Status != Infeasible {
		t.Fatalf("85%% max-min instance: %v %v", r, err)
	}
}
