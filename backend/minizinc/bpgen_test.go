package minizinc

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weavesql/weave/cp"
)

// Bin-packing instance generators for the cp-vs-Gecode benchmarks
// (duplicated in cp's tests, which cannot be imported; keep them in step).

// maxMinInstance is a generated max-min spare-capacity packing.
type maxMinInstance struct {
	m     *cp.Model
	spare cp.IntVar
	// trivial is the area bound min_r floor((Σ_j cap_rj - Σ_i size_ri) / bins).
	trivial int64
}

// genMaxMin builds the max-min two-resource bin-packing benchmark:
// items with exponential sizes (mean 100, tail clipped at 150) onto
// identical bins at the given load (total size / total capacity),
// conflict pairs as x_i != x_j, maximise the minimum spare capacity over
// bins and resources. With at least one item per bin the capacity is
// ceil(total / (load * bins)), exactly the instance of cp/bench_test.go
// and of BenchmarkBinPackingMaxMin. With fewer items than bins (e.g.
// 5,000 items onto 10,000 bins) that load is unreachable without
// overfull bins, so the bins get capacity 1000 and a random existing
// usage (as nodes running other work) that brings the load to the
// target: residual capacities about 195 on average, 98 to 292.
func genMaxMin(items, bins, conflicts int, load float64, seed uint64) maxMinInstance {
	rng := rand.New(rand.NewPCG(seed, 11))
	m := cp.NewModel()
	x := make([]cp.IntVar, items)
	for i := range x {
		x[i] = m.NewIntVar(0, int64(bins-1), "x")
	}
	binVals := make([]int64, bins)
	for j := range binVals {
		binVals[j] = int64(j)
	}
	type resource struct {
		sizes []int64
		room  []int64 // capacity left for the items, per bin
	}
	var res [2]resource
	var maxRoom int64
	trivial := int64(math.MaxInt64)
	for r := range res {
		sizes := make([]int64, items)
		var total int64
		for i := range sizes {
			sizes[i] = min(1+int64(rng.ExpFloat64()*100), 150)
			total += sizes[i]
		}
		room := make([]int64, bins)
		if items >= bins {
			capacity := int64(math.Ceil(float64(total) / (load * float64(bins))))
			for j := range room {
				room[j] = capacity
			}
		} else {
			const capacity = 1000
			pre := (load*capacity*float64(bins) - float64(total)) / float64(bins)
			spread := 0.5 * min(pre, capacity-pre)
			for j := range room {
				room[j] = capacity - int64(pre+spread*(2*rng.Float64()-1))
			}
		}
		var sum int64
		for _, c := range room {
			sum += c
			maxRoom = max(maxRoom, c)
		}
		res[r] = resource{sizes, room}
		trivial = min(trivial, (sum-total)/int64(bins))
	}
	// spare <= room_j - load_j bounds spare; its domain stays within
	// Gecode's 32-bit integers.
	spare := m.NewIntVar(0, maxRoom, "spare")
	for _, r := range res {
		loads := make([]cp.IntVar, bins)
		for j := range loads {
			loads[j] = m.NewIntVar(0, r.room[j], "load")
			m.AddLessOrEqual(cp.LinearExpr{Vars: []cp.IntVar{spare, loads[j]}, Coeffs: []int64{1, 1}}, r.room[j])
		}
		m.AddBinPacking(x, r.sizes, binVals, loads).WithName("capacity")
	}
	for k := 0; k < conflicts; k++ {
		i, j := rng.IntN(items), rng.IntN(items)
		if i != j {
			m.AddNotEqual(cp.LinearExpr{Vars: []cp.IntVar{x[i], x[j]}, Coeffs: []int64{1, -1}}, 0).WithName("anti_affinity")
		}
	}
	m.Maximize(cp.LinearExpr{Vars: []cp.IntVar{spare}, Coeffs: []int64{1}})
	return maxMinInstance{m, spare, trivial}
}

// genTight builds a tight two-resource feasibility packing that has a
// solution by construction: every one of bins bins (capacity 1000 per
// resource) is first filled to a random fraction in [load-0.01,
// min(load+0.01, 1)] of each resource by 2 to 4 items (random cut
// points per resource), the items are shuffled, and conflict pairs
// (items/5) only join items of different bins of that packing. It
// returns the model and the hidden assignment (item -> bin).
func genTight(bins int, load float64, seed uint64) (*cp.Model, []int64) {
	const capacity = 1000
	rng := rand.New(rand.NewPCG(seed, 17))
	var sizes [2][]int64
	var hidden []int64
	for j := 0; j < bins; j++ {
		k := 2 + rng.IntN(3)
		for r := range sizes {
			f := load - 0.01 + rng.Float64()*(min(load+0.01, 1)-(load-0.01))
			fill := int64(f * capacity)
			cuts := []int64{0, fill}
			for len(cuts) < k+1 {
				c := 1 + rng.Int64N(fill-1)
				dup := false
				for _, d := range cuts {
					dup = dup || d == c
				}
				if !dup {
					cuts = append(cuts, c)
				}
			}
			sortInt64(cuts)
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
	m := cp.NewModel()
	x := make([]cp.IntVar, n)
	for i := range x {
		x[i] = m.NewIntVar(0, int64(bins-1), "x")
	}
	binVals := make([]int64, bins)
	for j := range binVals {
		binVals[j] = int64(j)
	}
	shuffled := make([]int64, n)
	for r := range sizes {
		sz := make([]int64, n)
		for i, p := range perm {
			sz[i] = sizes[r][p]
			shuffled[i] = hidden[p]
		}
		loads := make([]cp.IntVar, bins)
		for j := range loads {
			loads[j] = m.NewIntVar(0, capacity, "load")
		}
		m.AddBinPacking(x, sz, binVals, loads).WithName("capacity")
	}
	for k := 0; k < n/5; {
		a, b := rng.IntN(n), rng.IntN(n)
		if shuffled[a] != shuffled[b] {
			m.AddNotEqual(cp.LinearExpr{Vars: []cp.IntVar{x[a], x[b]}, Coeffs: []int64{1, -1}}, 0).WithName("anti_affinity")
			k++
		}
	}
	return m, shuffled
}

func sortInt64(a []int64) {
	for i := 1; i < len(a); i++ {
		for k := i; k > 0 && a[k] < a[k-1]; k-- {
			a[k], a[k-1] = a[k-1], a[k]
		}
	}
}

// hiddenResponse completes genTight's hidden assignment with the loads
// it implies, as a response to Verify.
func hiddenResponse(m *cp.Model, hidden []int64) *cp.Response {
	vals := make([]int64, m.NumVars())
	copy(vals, hidden) // the items are the first variables
	for _, c := range m.Constraints() {
		if c.Kind != cp.KindBinPacking {
			continue
		}
		for i := range c.Vars {
			vals[c.Loads[hidden[i]].Index()] += c.Values[i]
		}
	}
	return m.NewResponseFromValues(vals)
}

// TestGenTightFeasibleByConstruction: the hidden packing of every tight
// instance satisfies the model (cp.Verify), its loads are within 1% of
// the target per bin on average, and cp solves a few of them (verified).
func TestGenTightFeasibleByConstruction(t *testing.T) {
	for _, load := range []float64{0.95, 0.99} {
		for seed := uint64(1); seed <= 10; seed++ {
			m, hidden := genTight(50, load, seed)
			if err := m.Err(); err != nil {
				t.Fatal(err)
			}
			r := hiddenResponse(m, hidden)
			if err := m.Verify(r); err != nil {
				t.Fatalf("load %.2f seed %d: hidden packing: %v", load, seed, err)
			}
			var used, capacity int64
			for _, c := range m.Constraints() {
				if c.Kind == cp.KindBinPacking {
					for _, l := range c.Loads {
						used += r.Value(l)
						capacity += m.VarDomain(l.Index()).Max()
					}
				}
			}
			if f := float64(used) / float64(capacity); f < load-0.011 || f > load+0.011 {
				t.Fatalf("load %.2f seed %d: actual load %.4f", load, seed, f)
			}
			if seed == 1 {
				res, err := m.Solve(context.Background(), cp.Params{Seed: 1, TimeLimit: time.Second})
				if err != nil || res.Status == cp.Infeasible {
					t.Fatalf("load %.2f seed %d: %v %v", load, seed, res, err)
				}
				if res.HasSolution() {
					if err := m.Verify(res); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
}

// TestGenMaxMinSizes: the generated instances have the announced shape,
// and the large one's load reaches the target through the bins'
// existing usage.
func TestGenMaxMinSizes(t *testing.T) {
	in := genMaxMin(100, 50, 20, 0.85, 2)
	if in.m.NumVars() != 100+1+2*50 || in.trivial != 26 {
		t.Fatalf("100x50: %d variables, trivial bound %d", in.m.NumVars(), in.trivial)
	}
	in = genMaxMin(50, 100, 10, 0.85, 2)
	if err := in.m.Err(); err != nil || in.trivial <= 0 {
		t.Fatalf("fewer items than bins: %v, trivial %d", err, in.trivial)
	}
}
