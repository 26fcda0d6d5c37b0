package ground

import (
	"math"
	"testing"

	"github.com/weavesql/weave/cp"
)

func TestFormsFoldConstantsAndDedupe(t *testing.T) {
	m := cp.NewModel()
	x := m.NewIntVar(0, 5, "x")
	atom := fEq{x: x, v: 3}
	cases := []struct {
		name string
		got  form
		want form
	}{
		{"true is the unit of and", and(fTrue, atom), atom},
		{"false absorbs and", and(atom, fFalse), fFalse},
		{"false is the unit of or", or(fFalse, atom), atom},
		{"true absorbs or", or(atom, fTrue), fTrue},
		{"a repeated atom is kept once", and(atom, atom), atom},
		{"and2 skips constants", and2(fTrue, atom), atom},
		{"negation of an equality flips it", neg(atom), fEq{x: x, v: 3, not: true}},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %#v, want %#v", c.name, c.got, c.want)
		}
	}
	// The negation of a conjunction is decided by its equalities first:
	// "not (x = 3 and x <> 4)" is "x <> 3"; "not (x = 3 and x = 4)" is
	// true; atoms of another variable stay.
	y := m.NewIntVar(0, 5, "y")
	for _, c := range []struct {
		name string
		got  form
		want form
	}{
		{"not (x = 3 and x <> 4)", neg(and(atom, fEq{x: x, v: 4, not: true})), fEq{x: x, v: 3, not: true}},
		{"not (x <> 4 and x = 3 and x <> 5)", neg(and(fEq{x: x, v: 4, not: true}, atom, fEq{x: x, v: 5, not: true})), fEq{x: x, v: 3, not: true}},
		{"not (x = 3 and x = 4)", neg(and(atom, fEq{x: x, v: 4})), fTrue},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %#v, want %#v", c.name, c.got, c.want)
		}
	}
	if got, ok := neg(and(atom, fEq{x: y, v: 4, not: true})).(fOr); !ok || len(got) != 2 {
		t.Errorf("not (x = 3 and y <> 4) = %#v, want both atoms", neg(and(atom, fEq{x: y, v: 4, not: true})))
	}
	if got, ok := neg(and(atom, fEq{x: x, v: 3, not: true})).(fOr); !ok || len(got) != 2 {
		t.Errorf("not (x = 3 and x <> 3) = %#v, want both atoms", neg(and(atom, fEq{x: x, v: 3, not: true})))
	}
	// De Morgan: not (a and b) = (not a) or (not b).
	b := fEq{x: y, v: 4}
	got, ok := neg(and(atom, b)).(fOr)
	if !ok || len(got) != 2 || got[0] != neg(atom) || got[1] != neg(b) {
		t.Errorf("not (a and b) = %#v", neg(and(atom, b)))
	}
	// A linear atom's negation covers both sides of its interval.
	l := fLin{e: varLin(x), lo: 2, hi: 3}
	if n, ok := neg(l).(fOr); !ok || len(n) != 2 {
		t.Errorf("not (2 <= x <= 3) = %#v", neg(l))
	}
}

func TestConstKeysDistinguishTypesAndBoundaries(t *testing.T) {
	keys := map[string]bool{}
	for _, vals := range [][]value{
		{constVal(int64(1))},
		{constVal("1")},
		{constVal(true)},
		{constVal(nil)},
		{constVal("a"), constVal("bc")},
		{constVal("ab"), constVal("c")},
	} {
		k, ok := constKey(vals)
		if !ok {
			t.Fatalf("constant key refused for %v", vals)
		}
		if keys[k] {
			t.Errorf("key %q is shared by two different tuples", k)
		}
		keys[k] = true
	}
	if _, ok := constKey([]value{{k: kInt}}); ok {
		t.Error("a symbolic value must not get a constant key")
	}
}

func TestHoldsWhenEmptyAndPairs(t *testing.T) {
	m := cp.NewModel()
	l := m.NewIntVar(0, 10, "load")
	other := m.NewIntVar(0, 10, "load of another bin")
	x := m.NewIntVar(0, 3, "x")
	g := &grounder{loadVars: map[cp.IntVar]binKey{l: {v: 1}, other: {v: 2}}}
	key := binKey{v: 1}
	if !g.holdsWhenEmpty(fLin{e: varLin(l), lo: minInt, hi: 4}, key) {
		t.Error("load <= 4 holds with no member present")
	}
	if g.holdsWhenEmpty(fLin{e: varLin(l).add(constLin(-5), 1), lo: 0, hi: maxInt}, key) {
		t.Error("load - 5 >= 0 does not hold at zero")
	}
	if g.holdsWhenEmpty(fLin{e: varLin(x), lo: minInt, hi: 4}, key) {
		t.Error("a non-load variable is not known at zero")
	}
	if g.holdsWhenEmpty(fLin{e: varLin(l).add(varLin(other), 1), lo: minInt, hi: 4}, key) {
		t.Error("the load of another bin is not 0 when this one is empty")
	}
	y := m.NewIntVar(0, 3, "y")
	if a, b, ok := asPairNe(varLin(y).add(varLin(x), -1), 0); !ok || a != y || b != x {
		t.Errorf("y - x != 0 not recognised as a pair: %v %v %v", a, b, ok)
	}
	if _, _, ok := asPairNe(varLin(y).add(varLin(x), -2), 0); ok {
		t.Error("y - 2x != 0 is not a pairwise inequality")
	}
}

// negates restates sameAtom(c, neg(f)) without building neg(f): it must
// agree with it on every pair of atoms, negations of each other or not.
func TestNegatesAgreesWithSameAtomOfNeg(t *testing.T) {
	m := cp.NewModel()
	x, y := m.NewIntVar(0, 9, "x"), m.NewIntVar(0, 9, "y")
	ex := varLin(x).add(varLin(y), 2)
	forms := []form{fTrue, fFalse, fLit{m.NewBoolVar("b")}, fEq{x: x, v: 3}, fEq{x: x, v: 3, not: true}, fEq{x: y, v: 3},
		fNe{e: ex, k: 4}, fNe{e: constLin(2), k: 4}, fIn{x: x, vals: []int64{1, 2}}}
	for _, lo := range []int64{math.MinInt64, 2, 5} {
		for _, hi := range []int64{4, 5, math.MaxInt64} {
			forms = append(forms, fLin{e: ex, lo: lo, hi: hi}, fLin{e: varLin(x), lo: lo, hi: hi})
		}
	}
	var lit fLit = forms[2].(fLit)
	forms = append(forms, fLit{lit.l.Not()})
	for _, f := range forms {
		forms = append(forms, neg(f)) // the negations themselves, as candidates c
	}
	matched := 0
	for _, f := range forms {
		for _, c := range forms {
			want := sameAtom(c, neg(f))
			if got := negates(c, f); got != want {
				t.Errorf("negates(%#v, %#v) = %v, sameAtom(c, neg(f)) = %v", c, f, got, want)
			}
			if want {
				matched++
			}
		}
	}
	if matched < 10 {
		t.Fatalf("only %d pairs negate each other: the cases do not exercise negates", matched)
	}
}
