package cp

import (
	"math/rand/v2"
	"testing"
)

// genVarMembership builds models centred on var_membership: a few
// variables with holey domains (bitsets) or wide ranges (intervals), one to
// three "x equals one of ys" (x sometimes among its ys, sometimes no ys),
// some under an enforcement literal, sometimes with an all_different that
// spreads the ys apart, and an objective over the xs that rewards the
// values a too-eager pruning would lose.
func genVarMembership(rng *rand.Rand) *Model {
	m := NewModel()
	var vars []IntVar
	for i := 0; i < 2+rng.IntN(4); i++ {
		lo := rng.Int64N(5) - 2
		hi := lo + rng.Int64N(5)
		if rng.IntN(2) == 0 {
			var vals []int64
			for v := lo; v <= hi; v++ {
				if rng.IntN(3) > 0 {
					vals = append(vals, v)
				}
			}
			if len(vals) == 0 {
				vals = []int64{hi}
			}
			vars = append(vars, m.NewIntVarFromDomain(DomainFromValues(vals...), ""))
		} else {
			vars = append(vars, m.NewIntVar(lo, hi, ""))
		}
	}
	pick := func() IntVar { return vars[rng.IntN(len(vars))] }
	var obj LinearExpr
	for k := 0; k < 1+rng.IntN(3); k++ {
		x := pick()
		var ys []IntVar
		for j := 0; j < rng.IntN(4); j++ {
			ys = append(ys, pick())
		}
		c := m.AddVarMembership(x, ys)
		if rng.IntN(3) == 0 {
			b := m.NewBoolVar("b")
			c.OnlyEnforceIf(b)
			obj.AddLit(b, rng.Int64N(5)-1)
		}
		obj.AddTerm(x, rng.Int64N(7)-3)
	}
	if rng.IntN(3) == 0 {
		a, b := pick(), pick()
		if a != b {
			m.AddAllDifferent(a, b)
		}
	}
	if rng.IntN(4) > 0 {
		m.Maximize(obj)
	}
	return m
}

// TestVarMembershipAgreesWithBruteForce: on random var_membership models,
// Solve's status and optimum are brute force's, and every solution it
// returns, complete or truncated, satisfies the model.
func TestVarMembershipAgreesWithBruteForce(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	checked, infeasible := 0, 0
	for seed := 0; seed < n; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 0x7a))
		m := genVarMembership(rng)
		if m.Err() != nil {
			t.Fatalf("seed %d: %v", seed, m.Err())
		}
		ok, feasible := agreesWithBruteForce(t, seed, m)
		if !ok {
			continue
		}
		checked++
		if !feasible {
			infeasible++
		}
	}
	if checked < n*9/10 || infeasible == 0 || infeasible == checked {
		t.Fatalf("%d of %d models checked, %d infeasible: the generator no longer covers both outcomes", checked, n, infeasible)
	}
}

// TestVarMembershipPrunesToTheFixedCandidates: once every candidate is
// fixed, x keeps exactly their values (the propagation the scheduler's
// pod affinity relies on), and with a single candidate the two are equal.
func TestVarMembershipPrunesToTheFixedCandidates(t *testing.T) {
	m := NewModel()
	x := m.NewIntVarFromDomain(DomainFromValues(1, 2, 3, 5, 8, 13), "x")
	a := m.NewIntVarFromDomain(DomainFromValues(2), "a")
	b := m.NewIntVarFromDomain(DomainFromValues(8), "b")
	c := m.NewIntVarFromDomain(DomainFromValues(4, 6), "c") // never equal to x
	m.AddVarMembership(x, []IntVar{a, b, c})
	s, ok := newSolver(m, false)
	if !ok || !s.propagate() {
		t.Fatal("root propagation failed")
	}
	if got := s.domain(int32(x.Index())).Values(); len(got) != 2 || got[0] != 2 || got[1] != 8 {
		t.Fatalf("x = %v, want [2 8]", got)
	}

	m = NewModel()
	x = m.NewIntVarFromDomain(DomainFromValues(1, 3, 5, 7), "x")
	y := m.NewIntVarFromDomain(DomainFromValues(3, 4, 5, 6), "y")
	z := m.NewIntVarFromDomain(DomainFromValues(10, 11), "z")
	m.AddVarMembership(x, []IntVar{y, z})
	s, ok = newSolver(m, false)
	if !ok || !s.propagate() {
		t.Fatal("root propagation failed")
	}
	for _, v := range []IntVar{x, y} {
		if got := s.domain(int32(v.Index())).Values(); len(got) != 2 || got[0] != 3 || got[1] != 5 {
			t.Fatalf("%v = %v, want [3 5]", v, got)
		}
	}
}
