package cp

import (
	"math/rand/v2"
)

// chooser drives random model generation, from a PRNG in tests or from
// fuzz bytes in FuzzModel.
type chooser interface{ intn(n int) int }

type rngChooser struct{ r *rand.Rand }

func (c rngChooser) intn(n int) int { return c.r.IntN(n) }

type byteChooser struct {
	b []byte
	i int
}

func (c *byteChooser) intn(n int) int {
	if c.i >= len(c.b) || n <= 1 {
		return 0
	}
	v := int(c.b[c.i])
	c.i++
	return v % n
}

func rangeIn(c chooser, lo, hi int64) int64 { return lo + int64(c.intn(int(hi-lo+1))) }

// genModel builds a tiny random model exercising every constraint kind,
// enforcement literals, encodings, objectives, hints and assumptions.
func genModel(c chooser) *Model {
	m := NewModel()
	var ints []IntVar
	for i := 0; i < 1+c.intn(4); i++ {
		lo := rangeIn(c, -3, 2)
		hi := lo + rangeIn(c, 0, 4)
		if c.intn(3) == 0 {
			var vals []int64
			for v := lo; v <= hi; v++ {
				if c.intn(3) > 0 {
					vals = append(vals, v)
				}
			}
			if len(vals) == 0 {
				vals = []int64{lo}
			}
			ints = append(ints, m.NewIntVarFromDomain(DomainFromValues(vals...), ""))
		} else {
			ints = append(ints, m.NewIntVar(lo, hi, ""))
		}
	}
	var bools []Lit
	for i := 0; i < c.intn(4); i++ {
		bools = append(bools, m.NewBoolVar(""))
	}
	pickVar := func() IntVar {
		if len(bools) > 0 && c.intn(4) == 0 {
			return bools[c.intn(len(bools))].Var()
		}
		return ints[c.intn(len(ints))]
	}
	pickLit := func() Lit {
		switch c.intn(8) {
		case 0:
			x := ints[c.intn(len(ints))]
			return m.EqLit(x, rangeIn(c, -3, 5))
		case 1:
			x := ints[c.intn(len(ints))]
			return m.LeLit(x, rangeIn(c, -3, 5))
		case 2:
			if c.intn(2) == 0 {
				return m.TrueLit()
			}
			return m.FalseLit()
		}
		if len(bools) == 0 {
			return m.EqLit(ints[0], rangeIn(c, -3, 5))
		}
		l := bools[c.intn(len(bools))]
		if c.intn(2) == 0 {
			l = l.Not()
		}
		return l
	}
	pickLits := func(lo, hi int) []Lit {
		var ls []Lit
		for i := 0; i < lo+c.intn(hi-lo+1); i++ {
			ls = append(ls, pickLit())
		}
		return ls
	}
	pickExpr := func(maxTerms int) LinearExpr {
		var e LinearExpr
		for i := 0; i < 1+c.intn(maxTerms); i++ {
			if c.intn(4) == 0 {
				e.AddLit(pickLit(), rangeIn(c, -3, 3))
			} else {
				e.AddTerm(pickVar(), rangeIn(c, -3, 3))
			}
		}
		e.AddConstant(rangeIn(c, -2, 2))
		return e
	}
	pickVars := func(lo, hi int) []IntVar {
		var vs []IntVar
		for i := 0; i < lo+c.intn(hi-lo+1); i++ {
			vs = append(vs, pickVar())
		}
		return vs
	}
	pickVals := func(lo, hi int) []int64 {
		var vs []int64
		for i := 0; i < lo+c.intn(hi-lo+1); i++ {
			vs = append(vs, rangeIn(c, -3, 5))
		}
		return vs
	}
	for i := 0; i < 1+c.intn(4); i++ {
		var ct Constraint
		switch c.intn(17) {
		case 0:
			lo := rangeIn(c, -8, 8)
			ct = m.AddLinear(pickExpr(3), lo, lo+rangeIn(c, 0, 6))
		case 1:
			ct = m.AddLessOrEqual(pickExpr(3), rangeIn(c, -6, 6))
		case 2:
			ct = m.AddEquality(pickExpr(3), rangeIn(c, -4, 4))
		case 3:
			ct = m.AddNotEqual(pickExpr(2), rangeIn(c, -4, 4))
		case 4:
			ct = m.AddBoolOr(pickLits(0, 3)...)
		case 5:
			ct = m.AddBoolAnd(pickLits(1, 2)...)
		case 6:
			if c.intn(2) == 0 {
				ct = m.AddAtMostOne(pickLits(0, 4)...)
			} else {
				ct = m.AddExactlyOne(pickLits(1, 4)...)
			}
		case 7:
			ct = m.AddImplication(pickLit(), pickLit())
		case 8:
			if c.intn(2) == 0 {
				ct = m.AddAllDifferent(pickVars(1, 3)...)
			} else {
				ct = m.AddAllDifferentExcept(pickVals(0, 2), pickVars(1, 4)...)
			}
		case 9:
			ct = m.AddElement(pickVar(), pickVals(1, 4), pickVar())
		case 10:
			ct = m.AddVarElement(pickVar(), pickVars(1, 3), pickVar())
		case 11:
			vs := pickVars(1, 2)
			var ts [][]int64
			for j := 0; j < c.intn(5); j++ {
				ts = append(ts, pickVals(len(vs), len(vs)))
			}
			ct = m.AddAllowedAssignments(vs, ts)
		case 12:
			if c.intn(2) == 0 {
				ct = m.AddMembership(pickVar(), pickVals(0, 3))
			} else {
				ct = m.AddNonMembership(pickVar(), pickVals(0, 3))
			}
		case 13:
			items := pickVars(1, 3)
			sizes := pickVals(len(items), len(items))
			for j := range sizes {
				sizes[j] = abs64(sizes[j]) % 4
			}
			bins := []int64{rangeIn(c, -1, 1)}
			if c.intn(2) == 0 {
				bins = append(bins, bins[0]+rangeIn(c, 1, 2))
			}
			var loads []IntVar
			for range bins {
				if c.intn(2) == 0 {
					loads = append(loads, m.NewIntVar(0, rangeIn(c, 0, 6), "load"))
				} else {
					loads = append(loads, pickVar())
				}
			}
			ct = m.AddBinPacking(items, sizes, bins, loads)
		case 14, 15:
			var es []LinearExpr
			for j := 0; j < 1+c.intn(3); j++ {
				es = append(es, pickExpr(2))
			}
			if c.intn(2) == 0 {
				ct = m.AddMinEquality(pickVar(), es)
			} else {
				ct = m.AddMaxEquality(pickVar(), es)
			}
		case 16:
			ct = m.AddVarMembership(pickVar(), pickVars(0, 3))
		}
		if c.intn(3) == 0 && enforceable[m.cons[len(m.cons)-1].Kind] && ct.Index() >= 0 {
			ct.OnlyEnforceIf(pickLits(1, 2)...)
		}
		ct.WithName("c")
	}
	if c.intn(2) == 0 {
		if c.intn(2) == 0 {
			m.Minimize(pickExpr(3))
		} else {
			m.Maximize(pickExpr(3))
		}
	}
	if c.intn(4) == 0 {
		m.AddHint(pickVar(), rangeIn(c, -3, 5))
	}
	if c.intn(4) == 0 {
		m.AddAssumptions(pickLits(1, 3)...)
	}
	return m
}

// bruteForce enumerates every assignment of every variable and returns
// whether one satisfies all constraints and assumptions, and the best
// objective value. ok is false if the space is too large.
func bruteForce(m *Model, assumptions []Lit, limit int) (feasible bool, best int64, ok bool) {
	size := 1
	for _, d := range m.doms {
		size *= int(d.Size())
		if size > limit {
			return false, 0, false
		}
	}
	vals := make([]int64, len(m.doms))
	lit := func(l Lit) bool {
		if l.IsNegated() {
			return vals[l.idx>>1] == 0
		}
		return vals[l.idx>>1] == 1
	}
	var rec func(i int)
	rec = func(i int) {
		if i == len(vals) {
			for _, a := range assumptions {
				if !lit(a) {
					return
				}
			}
			for k := range m.cons {
				c := &m.cons[k]
				active := true
				for _, l := range c.Enforcement {
					active = active && lit(l)
				}
				if active && checkConstraint(c, vals, lit) != "" {
					return
				}
			}
			var obj int64
			if m.obj != nil {
				obj = evalExpr(m.obj.Expr, vals)
			}
			if !feasible || (m.obj != nil && (m.obj.Maximize == (obj > best))) {
				best = obj
			}
			feasible = true
			return
		}
		for _, v := range m.doms[i].Values() {
			vals[i] = v
			rec(i + 1)
		}
	}
	rec(0)
	return feasible, best, true
}
