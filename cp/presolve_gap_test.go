package cp

import (
	"math/rand/v2"
	"testing"
)

// containsDomainOf (which looks at the gaps of the domain) against a
// value-by-value reference on random domains.
func TestContainsDomainOfRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for it := 0; it < 3000; it++ {
		// Odd iterations spread the values (span > bitsetSpan: an
		// interval-list variable); even ones keep a bitset.
		mul := int64(1 + 99*(it%2))
		var vals, dvals []int64
		for x := int64(-5); x < 60; x++ {
			if rng.IntN(3) > 0 {
				vals = append(vals, x*mul)
			}
			if rng.IntN(4) > 0 {
				dvals = append(dvals, x*mul)
			}
		}
		if len(vals) == 0 {
			continue
		}
		m := NewModel()
		x := m.NewIntVarFromDomain(DomainFromValues(vals...), "x")
		s, _ := newSolver(m, false)
		d := DomainFromValues(dvals...)
		if it%3 == 0 {
			d = NewDomain((int64(rng.IntN(10))-5)*mul, int64(rng.IntN(70))*mul)
		}
		want := true
		for _, v := range vals {
			want = want && d.Contains(v)
		}
		if got := d.containsDomainOf(s, x.idx); got != want {
			t.Fatalf("domain %v in %v: got %v, want %v", vals, d, got, want)
		}
	}
}

// subsetOf (a walk over both interval lists) against a value-by-value
// reference on random domains, adjacent and overlapping intervals of the
// superset included (Union keeps them apart only where they are not).
func TestSubsetOfRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	randDomain := func(p int) Domain {
		var vals []int64
		for x := int64(-8); x < 24; x++ {
			if rng.IntN(10) < p {
				vals = append(vals, x)
			}
		}
		return DomainFromValues(vals...)
	}
	for it := 0; it < 5000; it++ {
		d, o := randDomain(1+rng.IntN(9)), randDomain(1+rng.IntN(9))
		if it%4 == 0 {
			// o as adjacent pieces [a, b] [b+1, c]: a subset may span them.
			lo, mid, hi := int64(rng.IntN(10))-8, int64(rng.IntN(10)), int64(10+rng.IntN(14))
			o = Domain{ivs: []interval{{lo, mid}, {mid + 1, hi}}}
		}
		want := true
		for _, v := range d.Values() {
			want = want && o.Contains(v)
		}
		if got := d.subsetOf(o); got != want {
			t.Fatalf("%v subset of %v: got %v, want %v", d, o, got, want)
		}
	}
}
