package cp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// memberProp decides whether an open enforcement literal must be false by
// walking intervals (no Domain built): it must agree with the domain
// intersection it replaces, on bitset and interval variables, for
// membership and non-membership, sets reaching the int64 extremes
// included.
func TestMemberSatisfiableAgreesWithIntersection(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for iter := 0; iter < 20000; iter++ {
		span := int64(20)
		if rng.IntN(2) == 0 {
			span = 1 << 40 // an interval variable, not a bitset
		}
		base := rng.Int64N(41) - 20
		var vals []interval
		for a := base; a < base+span && len(vals) < 6; {
			w := 1 + rng.Int64N(max(1, span/8))
			vals = append(vals, interval{a, a + w - 1})
			a += w + 1 + rng.Int64N(max(1, span/8))
		}
		dom := domainFromIntervals(vals)
		var setIvs []interval
		for k := rng.IntN(5); k >= 0; k-- {
			a := base - 5 + rng.Int64N(span+10)
			setIvs = append(setIvs, interval{a, a + rng.Int64N(max(1, span/4))})
		}
		switch rng.IntN(6) {
		case 0:
			setIvs = append(setIvs, interval{math.MinInt64, base + rng.Int64N(span)})
		case 1:
			setIvs = append(setIvs, interval{base + rng.Int64N(span), math.MaxInt64})
		}
		set := domainFromIntervals(setIvs)
		m := NewModel()
		x := m.NewIntVarFromDomain(dom, "x")
		s, ok := newSolver(m, false)
		if !ok {
			t.Fatal("newSolver")
		}
		// Cut the domain further at the root: bounds and holes.
		for k := rng.IntN(4); k > 0; k-- {
			y := base + rng.Int64N(span)
			switch rng.IntN(3) {
			case 0:
				s.remove(x.idx, y)
			case 1:
				if y > s.lo[x.idx] {
					s.setMax(x.idx, y)
				}
			default:
				if y < s.hi[x.idx] {
					s.setMin(x.idx, y)
				}
			}
		}
		for _, neg := range []bool{false, true} {
			p := &memberProp{x: x.idx, set: set, neg: neg}
			allowed := set
			if neg {
				allowed = set.Complement()
			}
			want := !s.domain(x.idx).Intersect(allowed).IsEmpty()
			if got := p.satisfiable(s); got != want {
				t.Fatalf("domain %v, set %v, neg %v: satisfiable %v, want %v", s.domain(x.idx).ivs, set.ivs, neg, got, want)
			}
		}
	}
}

// BenchmarkMemberOpenLiteral: the enforced membership propagator while
// its literal is open, on a bitset variable of 4,096 values against a set
// of 64 intervals (allocations per call are the point).
func BenchmarkMemberOpenLiteral(b *testing.B) {
	for _, neg := range []bool{false, true} {
		name := "membership"
		if neg {
			name = "non-membership"
		}
		b.Run(name, func(b *testing.B) {
			m := NewModel()
			x := m.NewIntVar(0, 4095, "x")
			var ivs []interval
			for k := int64(0); k < 64; k++ {
				ivs = append(ivs, interval{k * 64, k*64 + 31})
			}
			s, _ := newSolver(m, false)
			for y := int64(1); y < 4095; y += 3 {
				s.remove(x.idx, y)
			}
			bv := s.newVar(NewDomain(0, 1)) // the open enforcement literal
			p := &memberProp{x: x.idx, set: Domain{ivs}, neg: neg, enf: []int32{bv << 1}}
			b.ReportAllocs()
			for b.Loop() {
				if !p.propagate(s) {
					b.Fatal("conflict")
				}
			}
		})
	}
}

// Memberships that list the same values share one copy of them (and so
// one domain in the solver); other values, or the same in another order,
// get their own; the caller's slice is never kept; and what Constraints
// returns is the caller's to change.
func TestMembershipValueSetsAreShared(t *testing.T) {
	m := NewModel()
	x := m.NewIntVar(0, 20, "x")
	y := m.NewIntVar(0, 20, "y")
	vals := []int64{2, 5, 7}
	a := m.AddMembership(x, vals)
	b := m.AddNonMembership(y, []int64{2, 5, 7})
	c := m.AddMembership(y, []int64{7, 5, 2})
	d := m.AddMembership(x, []int64{2, 5})
	vals[0] = 3 // the model keeps its own copy
	va, vb := m.cons[a.Index()].Values, m.cons[b.Index()].Values
	if &va[0] != &vb[0] {
		t.Errorf("the same values are stored twice")
	}
	if va[0] != 2 {
		t.Errorf("the model kept the caller's slice: %v", va)
	}
	for _, o := range []Constraint{c, d} {
		if v := m.cons[o.Index()].Values; &v[0] == &va[0] {
			t.Errorf("%v shares %v's values", v, va)
		}
	}
	info := m.Constraints()
	info[a.Index()].Values[0] = 9
	if va[0] != 2 || vb[0] != 2 {
		t.Errorf("changing Constraints' copy changed the model: %v %v", va, vb)
	}
	// y in {7,5,2} and y not in {2,5,7}: infeasible. The shared set must
	// keep each constraint's own polarity.
	r, err := m.Solve(context.Background(), Params{})
	if err != nil || r.Status != Infeasible {
		t.Fatalf("got %v, %v; want infeasible", r.Status, err)
	}
}
