package cp

import (
	"context"
	"math/rand/v2"
	"testing"
)

// genSymModel builds a small packing whose bins are mostly identical,
// with the things that make two bins differ mixed in at random: a bin of
// another capacity or lower bound, an item kept out of a bin, a
// membership test, a side constraint on one bin's load or between two
// loads, an objective term on one load or on an item.
func genSymModel(rng *rand.Rand) *Model {
	m := NewModel()
	nBins := 2 + rng.IntN(4)
	nItems := 3 + rng.IntN(6)
	nRes := 1 + rng.IntN(2)
	bins := make([]int64, nBins)
	for j := range bins {
		bins[j] = int64(2*j + 1)
	}
	items := make([]IntVar, nItems)
	for i := range items {
		vals := append([]int64(nil), bins...)
		if rng.IntN(5) == 0 {
			k := rng.IntN(len(vals))
			vals = append(vals[:k], vals[k+1:]...)
		}
		items[i] = m.NewIntVarFromDomain(DomainFromValues(vals...), "x")
	}
	// Large loads are branched on by halves (load <= mid), not fixed.
	scale := int64(1)
	if rng.IntN(3) == 0 {
		scale = 16
	}
	capa := make([][]int64, nRes)
	loads := make([][]IntVar, nRes)
	for r := range loads {
		c := int64(4+rng.IntN(6)) * scale
		sizes := make([]int64, nItems)
		for i := range sizes {
			sizes[i] = int64(1+rng.IntN(5)) * scale
		}
		capa[r] = make([]int64, nBins)
		loads[r] = make([]IntVar, nBins)
		var lo int64
		if rng.IntN(4) == 0 {
			lo = int64(rng.IntN(3))
		}
		for j := range loads[r] {
			cj, lj := c, lo
			if rng.IntN(5) == 0 {
				cj += (int64(rng.IntN(3)) - 1) * scale
			}
			if rng.IntN(8) == 0 {
				lj++
			}
			capa[r][j] = cj
			loads[r][j] = m.NewIntVar(lj, cj, "load")
		}
		m.AddBinPacking(items, sizes, bins, loads[r])
	}
	for range rng.IntN(4) {
		a, b := rng.IntN(nItems), rng.IntN(nItems)
		if a != b {
			m.AddNotEqual(LinearExpr{Vars: []IntVar{items[a], items[b]}, Coeffs: []int64{1, -1}}, 0)
		}
	}
	if rng.IntN(4) == 0 && nItems >= 3 {
		m.AddAllDifferent(items[0], items[1], items[2])
	}
	if rng.IntN(6) == 0 { // an item tied to another variable
		z := m.NewIntVar(0, 2, "z")
		m.AddLessOrEqual(LinearExpr{Vars: []IntVar{items[0], z}, Coeffs: []int64{1, 2}}, bins[nBins-1])
	}
	if rng.IntN(5) == 0 {
		m.AddMembership(items[rng.IntN(nItems)], bins[:1+rng.IntN(nBins)])
	}
	if rng.IntN(4) == 0 {
		// Branch on the first loads before the items: bins whose items
		// agree then differ in their load bounds.
		m.AddDecisionStrategy(append(append([]IntVar(nil), loads[0]...), items...))
	}
	one := func(v IntVar) LinearExpr { return LinearExpr{Vars: []IntVar{v}, Coeffs: []int64{1}} }
	switch rng.IntN(4) {
	case 0: // the same bound on every bin's first load
		k := int64(3 + rng.IntN(4))
		for _, l := range loads[0] {
			m.AddLessOrEqual(one(l), k)
		}
	case 1: // a bound on one bin
		m.AddLessOrEqual(one(loads[0][rng.IntN(nBins)]), int64(2+rng.IntN(4)))
	case 2: // two loads related
		if nBins >= 2 {
			m.AddLessOrEqual(LinearExpr{Vars: []IntVar{loads[0][0], loads[0][1]}, Coeffs: []int64{1, -1}}, 0)
		}
	}
	switch rng.IntN(5) {
	case 0: // maximise the least spare capacity
		spare := m.NewIntVar(0, 10*scale, "spare")
		for r := range loads {
			for j, l := range loads[r] {
				m.AddLessOrEqual(LinearExpr{Vars: []IntVar{spare, l}, Coeffs: []int64{1, 1}}, capa[r][j])
			}
		}
		m.Maximize(one(spare))
	case 1: // minimise the largest load
		t := m.NewIntVar(0, 20*scale, "t")
		var es []LinearExpr
		for _, l := range loads[0] {
			es = append(es, one(l))
		}
		m.AddMaxEquality(t, es)
		m.Minimize(one(t))
	case 2: // weigh the bins differently
		var e LinearExpr
		for j, l := range loads[0] {
			e.Vars = append(e.Vars, l)
			e.Coeffs = append(e.Coeffs, int64(1+j%2))
		}
		m.Maximize(e)
	case 3: // an item in the objective
		m.Minimize(one(items[0]))
	}
	return m
}

// TestBinSymmetryAgainstPlainSearch: on packings with mostly identical
// bins, removing the interchangeable bins at each refutation never
// changes the answer of a complete search (status, optimum), every
// solution is verified, and the pruning does fire.
func TestBinSymmetryAgainstPlainSearch(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 300
	}
	removed0 := binSymRemovals.Load()
	compared := 0
	for seed := 0; seed < n; seed++ {
		m := genSymModel(rand.New(rand.NewPCG(uint64(seed), 5)))
		if err := m.Err(); err != nil {
			t.Fatal(err)
		}
		binSymOff = true
		want, err := m.Solve(context.Background(), Params{Seed: int64(seed), DisableLNS: true, NodeLimit: 200_000})
		binSymOff = false
		if err != nil {
			t.Fatal(err)
		}
		if want.Status != Optimal && want.Status != Infeasible {
			continue // not proven: nothing to compare with
		}
		compared++
		// The complete search must reach the same conclusion; with LNS
		// (which may not finish on these: it searches neighbourhoods
		// first) no solution may beat the optimum.
		for _, p := range []Params{{Seed: int64(seed), DisableLNS: true}, {Seed: int64(seed), NodeLimit: 20_000}} {
			got, err := m.Solve(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case got.Status == Optimal || got.Status == Infeasible || p.NodeLimit == 0:
				if got.Status != want.Status || got.Objective != want.Objective {
					t.Fatalf("seed %d (%+v): got %v, want %v\n%s", seed, p, got, want, dump(m))
				}
			case got.HasSolution():
				if want.Status == Infeasible || (m.obj.Maximize && got.Objective > want.Objective) || (!m.obj.Maximize && got.Objective < want.Objective) {
					t.Fatalf("seed %d (%+v): got %v, beyond %v\n%s", seed, p, got, want, dump(m))
				}
			}
			if got.HasSolution() {
				if err := m.Verify(got); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
			}
		}
	}
	if compared < n/2 {
		t.Fatalf("only %d of %d instances proven", compared, n)
	}
	if binSymRemovals.Load() == removed0 {
		t.Fatal("no value was removed by symmetry")
	}
}

// TestBinSymmetryClasses: bins are interchangeable only when the model
// treats them alike.
func TestBinSymmetryClasses(t *testing.T) {
	build := func(side func(m *Model, x []IntVar, loads []IntVar)) []int32 {
		m := NewModel()
		x := []IntVar{m.NewIntVar(0, 3, "x"), m.NewIntVar(0, 3, "x")}
		loads := make([]IntVar, 4)
		for j := range loads {
			loads[j] = m.NewIntVar(0, 10, "load")
		}
		m.AddBinPacking(x, []int64{3, 4}, []int64{0, 1, 2, 3}, loads)
		side(m, x, loads)
		s, _ := newSolver(m, true)
		s.initBinSym()
		if s.sym == nil {
			return nil
		}
		return s.sym.groups[0].class
	}
	one := func(v IntVar) LinearExpr { return LinearExpr{Vars: []IntVar{v}, Coeffs: []int64{1}} }
	same := func(c []int32, a, b int) bool { return c != nil && c[a] == c[b] }
	if c := build(func(*Model, []IntVar, []IntVar) {}); !same(c, 0, 3) {
		t.Fatalf("identical bins: classes %v", c)
	}
	if c := build(func(m *Model, _ []IntVar, l []IntVar) { m.AddLessOrEqual(one(l[2]), 5) }); same(c, 0, 2) || !same(c, 0, 1) {
		t.Fatalf("a bound on bin 2's load: classes %v", c)
	}
	if c := build(func(m *Model, _ []IntVar, l []IntVar) {
		m.AddLessOrEqual(LinearExpr{Vars: []IntVar{l[0], l[1]}, Coeffs: []int64{1, -1}}, 0)
	}); same(c, 0, 1) || same(c, 0, 2) || !same(c, 2, 3) {
		t.Fatalf("two loads related: classes %v", c)
	}
	if c := build(func(m *Model, x []IntVar, _ []IntVar) { m.AddMembership(x[0], []int64{0, 1}) }); same(c, 1, 2) || !same(c, 0, 1) || !same(c, 2, 3) {
		t.Fatalf("membership: classes %v", c)
	}
	if c := build(func(m *Model, x []IntVar, _ []IntVar) { m.AddLessOrEqual(one(x[0]), 2) }); c != nil {
		t.Fatalf("an item in a linear constraint: classes %v", c)
	}
	if c := build(func(m *Model, x []IntVar, _ []IntVar) {
		z := m.NewIntVar(0, 3, "z")
		m.AddLessOrEqual(LinearExpr{Vars: []IntVar{x[0], z}, Coeffs: []int64{1, 1}}, 4)
	}); c != nil {
		t.Fatalf("an item with another variable: classes %v", c)
	}
	if c := build(func(m *Model, x []IntVar, _ []IntVar) { m.Minimize(one(x[1])) }); c != nil {
		t.Fatalf("an item in the objective: classes %v", c)
	}
	if c := build(func(m *Model, _ []IntVar, l []IntVar) {
		m.Maximize(LinearExpr{Vars: []IntVar{l[0], l[1], l[2]}, Coeffs: []int64{1, 1, 2}})
	}); !same(c, 0, 1) || same(c, 1, 2) || same(c, 2, 3) {
		t.Fatalf("objective terms on loads: classes %v", c)
	}
}

// TestRefuteSymmetricChecksTheNode: after x = 0 is refuted, x loses the
// bins that are interchangeable with bin 0 at this node, and keeps a bin
// whose load bound differs (a decision on it) or that another item's
// domain tells apart.
func TestRefuteSymmetricChecksTheNode(t *testing.T) {
	m := NewModel()
	x := []IntVar{m.NewIntVar(0, 4, "x"), m.NewIntVar(0, 4, "x"), m.NewIntVar(0, 4, "x")}
	loads := make([]IntVar, 5)
	for j := range loads {
		loads[j] = m.NewIntVar(0, 10, "load")
	}
	m.AddBinPacking(x, []int64{3, 4, 5}, []int64{0, 1, 2, 3, 4}, loads)
	s, ok := newSolver(m, true)
	if !ok || !s.propagate() {
		t.Fatal("root")
	}
	s.pushLevel()
	if !s.setMax(loads[1].idx, 6) || !s.remove(x[1].idx, 3) || !s.propagate() {
		t.Fatal("node")
	}
	if !s.remove(x[0].idx, 0) || !s.refuteSymmetric(decision{v: x[0].idx, op: opEq, val: 0}) {
		t.Fatal("refutation")
	}
	if got := s.domain(x[0].idx).String(); got != "{1,3}" {
		t.Fatalf("x0 in %s, want {1,3}", got)
	}
}

// TestDomWindow: the 64-value windows of a domain agree with contains,
// for bitset and interval domains, with bounds that cut into the bitset
// (its bits outside them are stale) and windows that start before it.
func TestDomWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 300; trial++ {
		m := NewModel()
		lo := int64(rng.IntN(100)) - 50
		var vals []int64
		for v := lo; v < lo+int64(1+rng.IntN(300)); v++ {
			if rng.IntN(3) > 0 {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			vals = []int64{lo}
		}
		x := m.NewIntVarFromDomain(DomainFromValues(vals...), "x")
		s, ok := newSolver(m, false)
		if !ok {
			t.Fatal("root")
		}
		v := x.idx
		s.pushLevel()
		if a, b := vals[rng.IntN(len(vals))], vals[rng.IntN(len(vals))]; a <= b && (!s.setMin(v, a) || !s.setMax(v, b)) {
			t.Fatal("bounds")
		}
		for range 5 {
			start := lo - 100 + int64(rng.IntN(500))
			mask := rng.Uint64()
			var want uint64
			for b := 0; b < 64; b++ {
				if mask>>b&1 != 0 && s.contains(v, start+int64(b)) {
					want |= 1 << b
				}
			}
			if got := s.domWindow(v, start, mask); got != want {
				t.Fatalf("trial %d: domain %v, window at %d: got %x, want %x (bitset %v)", trial, s.domain(v), start, got, want, s.bits[v] != nil)
			}
		}
	}
}
