package minizinc

import (
	"math/rand/v2"

	"github.com/weavesql/weave/cp"
)

// genModel builds a small random cp model from seed. It covers every
// constraint kind, enforcement literals (including EqLit/LeLit encodings
// and constant literals), domains with holes, negative values, objectives
// in both directions, hints and assumptions, while staying small enough
// for both solvers to prove in milliseconds.
func genModel(seed uint64) *cp.Model {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	in := func(lo, hi int64) int64 { return lo + r.Int64N(hi-lo+1) }
	m := cp.NewModel()
	var ints []cp.IntVar
	for i := 0; i < 2+r.IntN(4); i++ {
		lo := in(-4, 3)
		hi := lo + in(0, 5)
		if r.IntN(3) == 0 {
			var vals []int64
			for v := lo; v <= hi; v++ {
				if r.IntN(3) > 0 {
					vals = append(vals, v)
				}
			}
			if len(vals) == 0 {
				vals = []int64{hi}
			}
			ints = append(ints, m.NewIntVarFromDomain(cp.DomainFromValues(vals...), "h"))
		} else {
			ints = append(ints, m.NewIntVar(lo, hi, "i"))
		}
	}
	var bools []cp.Lit
	for i := 0; i < r.IntN(4); i++ {
		bools = append(bools, m.NewBoolVar("b"))
	}
	pickInt := func() cp.IntVar { return ints[r.IntN(len(ints))] }
	pickVar := func() cp.IntVar {
		switch {
		case r.IntN(8) == 0:
			// An encoding literal as a 0/1 term (what the Naive style
			// rewrites into filtered sums).
			if r.IntN(2) == 0 {
				return m.EqLit(pickInt(), in(-4, 6)).Var()
			}
			return m.LeLit(pickInt(), in(-4, 6)).Var()
		case len(bools) > 0 && r.IntN(4) == 0:
			return bools[r.IntN(len(bools))].Var()
		}
		return pickInt()
	}
	pickLit := func() cp.Lit {
		switch r.IntN(10) {
		case 0, 1:
			return m.EqLit(pickInt(), in(-4, 6))
		case 2, 3:
			return m.LeLit(pickInt(), in(-4, 6))
		case 4:
			if r.IntN(2) == 0 {
				return m.TrueLit()
			}
			return m.FalseLit()
		}
		if len(bools) == 0 {
			return m.EqLit(pickInt(), in(-4, 6))
		}
		l := bools[r.IntN(len(bools))]
		if r.IntN(2) == 0 {
			l = l.Not()
		}
		return l
	}
	pickLits := func(lo, hi int) []cp.Lit {
		var ls []cp.Lit
		for i := 0; i < lo+r.IntN(hi-lo+1); i++ {
			ls = append(ls, pickLit())
		}
		return ls
	}
	pickExpr := func(maxTerms int) cp.LinearExpr {
		var e cp.LinearExpr
		for i := 0; i < 1+r.IntN(maxTerms); i++ {
			if r.IntN(4) == 0 {
				e.AddLit(pickLit(), in(-3, 3))
			} else {
				e.AddTerm(pickVar(), in(-3, 3))
			}
		}
		e.AddConstant(in(-3, 3))
		return e
	}
	pickVars := func(lo, hi int) []cp.IntVar {
		var vs []cp.IntVar
		for i := 0; i < lo+r.IntN(hi-lo+1); i++ {
			vs = append(vs, pickVar())
		}
		return vs
	}
	pickVals := func(lo, hi int) []int64 {
		var vs []int64
		for i := 0; i < lo+r.IntN(hi-lo+1); i++ {
			vs = append(vs, in(-4, 6))
		}
		return vs
	}
	for i := 0; i < 1+r.IntN(4); i++ {
		var ct cp.Constraint
		enforceable := true
		switch r.IntN(20) {
		case 0:
			lo := in(-8, 6)
			ct = m.AddLinear(pickExpr(4), lo, lo+in(0, 8))
		case 1:
			ct = m.AddLessOrEqual(pickExpr(4), in(-4, 8))
		case 2:
			ct = m.AddGreaterOrEqual(pickExpr(4), in(-8, 4))
		case 3:
			ct = m.AddEquality(pickExpr(3), in(-4, 4))
		case 4:
			ct = m.AddNotEqual(pickExpr(3), in(-4, 4))
		case 5:
			ct = m.AddBoolOr(pickLits(r.IntN(8)/7, 3)...) // rarely empty
		case 6:
			ct = m.AddBoolAnd(pickLits(0, 2)...)
		case 7:
			enforceable = false
			if r.IntN(2) == 0 {
				ct = m.AddAtMostOne(pickLits(0, 4)...)
			} else {
				ct = m.AddExactlyOne(pickLits(r.IntN(8)/7, 4)...)
			}
		case 8:
			ct = m.AddImplication(pickLit(), pickLit())
		case 9:
			enforceable = false
			if r.IntN(2) == 0 {
				ct = m.AddAllDifferent(pickVars(0, 4)...)
			} else {
				ct = m.AddAllDifferentExcept(pickVals(0, 2), pickVars(0, 4)...)
			}
		case 10:
			enforceable = false
			ct = m.AddElement(pickVar(), pickVals(1, 5), pickVar())
		case 11:
			enforceable = false
			ct = m.AddVarElement(pickVar(), pickVars(1, 4), pickVar())
		case 12:
			enforceable = false
			vs := pickVars(1, 3)
			var ts [][]int64
			for j := 0; j < r.IntN(6); j++ {
				t := make([]int64, len(vs))
				for k, x := range vs {
					if d := m.VarDomain(x.Index()); r.IntN(4) > 0 {
						// mostly values of the domain, so tables are not trivially empty
						t[k] = in(d.Min(), d.Max())
					} else {
						t[k] = in(-4, 6)
					}
				}
				ts = append(ts, t)
			}
			ct = m.AddAllowedAssignments(vs, ts)
		case 13:
			ct = m.AddMembership(pickVar(), pickVals(0, 4))
		case 14:
			ct = m.AddNonMembership(pickVar(), pickVals(0, 4))
		case 15, 16:
			enforceable = false
			ct = genBinPacking(m, r, in, pickVar, pickInt)
		case 17, 18:
			var es []cp.LinearExpr
			for j := 0; j < 1+r.IntN(3); j++ {
				es = append(es, pickExpr(2))
			}
			if r.IntN(2) == 0 {
				ct = m.AddMinEquality(pickVar(), es)
			} else {
				ct = m.AddMaxEquality(pickVar(), es)
			}
		case 19:
			ct = m.AddVarMembership(pickVar(), pickVars(0, 4))
		}
		if enforceable && r.IntN(3) == 0 {
			ct.OnlyEnforceIf(pickLits(1, 2)...)
		}
	}
	switch r.IntN(3) {
	case 0:
		m.Minimize(pickExpr(4))
	case 1:
		m.Maximize(pickExpr(4))
	}
	if r.IntN(5) == 0 {
		m.AddHint(pickVar(), in(-4, 6))
	}
	if r.IntN(6) == 0 {
		m.AddAssumptions(pickLits(1, 2)...)
	}
	return m
}

// genBinPacking adds a bin_packing constraint: either items placed into a
// contiguous range of bins (the bin_packing_load translation) or items
// over arbitrary bins, possibly outside them (explicit sums).
func genBinPacking(m *cp.Model, r *rand.Rand, in func(lo, hi int64) int64, pickVar, pickInt func() cp.IntVar) cp.Constraint {
	nb := 1 + r.IntN(3)
	var items []cp.IntVar
	var bins []int64
	if r.IntN(2) == 0 {
		lo := in(-2, 1)
		for j := 0; j < nb; j++ {
			bins = append(bins, lo+int64(j))
		}
		r.Shuffle(len(bins), func(i, j int) { bins[i], bins[j] = bins[j], bins[i] })
		for i := 0; i < 1+r.IntN(4); i++ {
			items = append(items, m.NewIntVar(lo, lo+int64(nb-1), "item"))
		}
	} else {
		seen := map[int64]bool{}
		for len(bins) < nb {
			if b := in(-3, 4); !seen[b] {
				seen[b] = true
				bins = append(bins, b)
			}
		}
		for i := 0; i < 1+r.IntN(3); i++ {
			if r.IntN(3) == 0 {
				items = append(items, pickVar())
			} else {
				items = append(items, pickInt())
			}
		}
	}
	sizes := make([]int64, len(items))
	for i := range sizes {
		sizes[i] = in(0, 4)
	}
	loads := make([]cp.IntVar, nb)
	for j := range loads {
		if r.IntN(5) == 0 {
			loads[j] = pickVar()
		} else {
			loads[j] = m.NewIntVar(0, in(2, 10), "load")
		}
	}
	return m.AddBinPacking(items, sizes, bins, loads)
}
