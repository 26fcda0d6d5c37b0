package cp

import "math"

// newVar adds an engine variable (model or auxiliary) with domain d.
func (s *solver) newVar(d Domain) int32 { return s.newVarKind(d, false) }

func (s *solver) newVarKind(d Domain, value bool) int32 {
	s.addVar(d, value)
	s.watch = append(s.watch, nil)
	s.notify = append(s.notify, nil)
	s.isBool = append(s.isBool, d.Min() >= 0 && d.Max() <= 1)
	s.cwatch = append(s.cwatch, nil, nil)
	s.varWeight = append(s.varWeight, 0)
	return int32(len(s.lo) - 1)
}

func litIdx(ls []Lit) []int32 {
	out := make([]int32, len(ls))
	for i, l := range ls {
		out[i] = l.idx
	}
	return out
}

func varIdx(vs []IntVar) []int32 {
	out := make([]int32, len(vs))
	for i, v := range vs {
		out[i] = v.idx
	}
	return out
}

func litVars(ls []int32) []int32 {
	out := make([]int32, len(ls))
	for i, l := range ls {
		out[i] = l >> 1
	}
	return out
}

func negLits(ls []int32) []int32 {
	out := make([]int32, len(ls))
	for i, l := range ls {
		out[i] = l ^ 1
	}
	return out
}

// exprVar returns an auxiliary variable equal to e.
func (s *solver) exprVar(e LinearExpr, con int) int32 {
	if len(e.Vars) == 1 && e.Coeffs[0] == 1 && e.Offset == 0 {
		return e.Vars[0].idx
	}
	lo, hi := e.Offset, e.Offset
	for i, x := range e.Vars {
		a, b := e.Coeffs[i]*s.lo[x.idx], e.Coeffs[i]*s.hi[x.idx]
		lo, hi = lo+min(a, b), hi+max(a, b)
	}
	a := s.newVar(NewDomain(lo, hi))
	vars := append(varIdx(e.Vars), a)
	coeffs := append(append([]int64(nil), e.Coeffs...), -1)
	s.addProp(&linearProp{vars: vars, coeffs: coeffs, lo: -e.Offset, hi: -e.Offset}, vars, 0, false, con)
	return a
}

// newSolver compiles the model into an engine. ok is false if the model
// is already infeasible while posting (e.g. an empty clause).
func newSolver(m *Model, withObjective bool) (s *solver, ok bool) {
	s = &solver{m: m, cur: -1, failedProp: -1}
	s.touch = s.onTouch
	valueVar := make([]bool, len(m.doms))
	aux := 1 // auxiliary variables: one per expression, and the objective's
	for ci := range m.cons {
		c := &m.cons[ci]
		aux += len(c.Exprs)
		switch c.Kind {
		case KindBinPacking, KindAllDifferent, KindMembership, KindNonMembership, KindEqLit, KindVarMembership:
			for _, x := range c.Vars {
				valueVar[x.idx] = true
			}
		}
	}
	n := len(m.doms) + aux
	s.lo, s.hi, s.base = make([]int64, 0, n), make([]int64, 0, n), make([]int64, 0, n)
	s.bits, s.ivs = make([][]uint64, 0, n), make([][]interval, 0, n)
	s.wstamp, s.sz, s.szOK = make([][]uint32, 0, n), make([]int64, 0, n), make([]bool, 0, n)
	s.watch, s.notify = make([][]int32, 0, n), make([][]notifyEnt, 0, n)
	s.isBool, s.cwatch, s.varWeight = make([]bool, 0, n), make([][]int32, 0, 2*n), make([]int64, 0, n)
	s.props = make([]propInfo, 0, len(m.cons))
	s.inQ = make([]bool, 0, len(m.cons))
	for v, d := range m.doms {
		s.newVarKind(d, valueVar[v])
	}
	ok = true
	used := usedOutsideEncodings(m)
	s.isDerived = make([]bool, len(m.doms))
	s.dropped = make([]bool, len(m.cons))
	enc := map[int32]*encodingProp{}
	sets := map[*int64]Domain{}
	for ci := range m.cons {
		c := &m.cons[ci]
		enf := litIdx(c.Enforcement)
		ev := litVars(enf)
		switch c.Kind {
		case KindLinear:
			if len(c.Vars) == 1 && len(enf) == 0 {
				// Presolve: a unary constraint is a domain cut, not a
				// propagator (e.g. capacities bounding loads).
				x, k := c.Vars[0].idx, c.Coeffs[0]
				lo, hi := c.Lo, c.Hi
				if k < 0 {
					k, lo, hi = -k, -hi, -lo
				}
				ok = ok && s.setMin(x, ceilDiv(lo, k)) && s.setMax(x, floorDiv(hi, k))
				s.folded++
				continue
			}
			vars := varIdx(c.Vars)
			s.addProp(&linearProp{vars: vars, coeffs: c.Coeffs, lo: c.Lo, hi: c.Hi, enf: enf}, append(vars, ev...), 0, false, ci)
		case KindNotEqual:
			vars := varIdx(c.Vars)
			s.addProp(&notEqualProp{vars: vars, coeffs: c.Coeffs, k: c.Lo, enf: enf}, append(vars, ev...), 0, true, ci)
		case KindBoolOr:
			ok = ok && s.addClause(append(negLits(enf), litIdx(c.Lits)...))
		case KindBoolAnd:
			for _, l := range c.Lits {
				ok = ok && s.addClause(append(negLits(enf), l.idx))
			}
		case KindAtMostOne, KindExactlyOne:
			ls := litIdx(c.Lits)
			s.addProp(&amoProp{lits: ls, exact: c.Kind == KindExactlyOne}, litVars(ls), 0, true, ci)
		case KindAllDifferent:
			vars := varIdx(c.Vars)
			s.addProp(&allDiffProp{vars: vars, enf: enf, except: c.Values}, append(vars, ev...), 0, true, ci)
		case KindElement:
			s.addProp(&elementProp{index: c.Index.idx, target: c.Target.idx, values: c.Values}, []int32{c.Index.idx, c.Target.idx}, 1, true, ci)
		case KindVarElement:
			vars := varIdx(c.Vars)
			s.addProp(&varElementProp{index: c.Index.idx, target: c.Target.idx, vars: vars},
				append([]int32{c.Index.idx, c.Target.idx}, vars...), 1, true, ci)
		case KindTable:
			vars := varIdx(c.Vars)
			s.addProp(&tableProp{vars: vars, tuples: c.Tuples}, vars, 1, true, ci)
		case KindMembership, KindNonMembership:
			x := c.Vars[0].idx
			var set Domain
			if len(c.Values) > 0 {
				// Memberships over the same values share their slice
				// (Model.valueSet), and so one domain.
				var found bool
				if set, found = sets[&c.Values[0]]; !found {
					set = DomainFromValues(c.Values...)
					sets[&c.Values[0]] = set
				}
			}
			p := &memberProp{x: x, set: set, neg: c.Kind == KindNonMembership, enf: enf}
			if len(enf) == 0 {
				ok = ok && p.propagate(s) // unconditional: a root domain cut
				continue
			}
			s.addProp(p, append([]int32{x}, ev...), 1, true, ci)
		case KindVarMembership:
			vars := varIdx(c.Vars)
			s.addProp(&varMemberProp{x: vars[0], vars: vars[1:], enf: enf}, append(vars, ev...), 1, true, ci)
		case KindBinPacking:
			s.addBinPacking(c, ci)
		case KindMinEquality, KindMaxEquality:
			args := make([]int32, len(c.Exprs))
			for i, e := range c.Exprs {
				args[i] = s.exprVar(e, ci)
			}
			vars := append(append([]int32{c.Target.idx}, args...), ev...)
			s.addProp(&minMaxProp{target: c.Target.idx, args: args, isMax: c.Kind == KindMaxEquality, enf: enf}, vars, 0, true, ci)
		case KindEqLit, KindLeLit:
			x := c.Vars[0].idx
			if b := c.Lits[0].idx >> 1; !used[b] && m.origin[b] == originEncoding && len(m.assumptions) == 0 {
				// Presolve: nothing else mentions the literal, so it is
				// not propagated; its value is derived from x in every
				// solution.
				s.derived = append(s.derived, derivedLit{b: b, x: x, val: c.Values[0], eq: c.Kind == KindEqLit})
				s.isDerived[b] = true
				s.dropped[ci] = true
				continue
			}
			p := enc[x]
			if p == nil {
				p = &encodingProp{x: x}
				enc[x] = p
			}
			e := encLit{val: c.Values[0], b: c.Lits[0].idx >> 1}
			if c.Kind == KindEqLit {
				p.eqs = append(p.eqs, e)
			} else {
				p.les = append(p.les, e)
			}
		}
	}
	// Encoding propagators in variable order, for determinism.
	for x := int32(0); x < int32(len(m.doms)); x++ {
		if p := enc[x]; p != nil {
			vars := []int32{x}
			for _, e := range p.eqs {
				vars = append(vars, e.b)
			}
			for _, e := range p.les {
				vars = append(vars, e.b)
			}
			s.addProp(p, vars, 0, true, -1)
		}
	}
	if withObjective && m.obj != nil {
		e := m.obj.Expr
		if m.obj.Maximize {
			neg := LinearExpr{Offset: -e.Offset}
			neg.AddExpr(LinearExpr{Vars: e.Vars, Coeffs: e.Coeffs}, -1)
			e = neg
		}
		s.hasObj = true
		s.objVar = s.exprVarAlways(e)
		s.objUB = s.hi[s.objVar]
		s.objProp = s.addProp(objProp{}, []int32{s.objVar}, 0, true, -1)
	}
	for p := range s.props {
		for _, v := range s.props[p].vars {
			s.varWeight[v]++
		}
	}
	s.initHeuristics()
	s.initTiers()
	return s, ok
}

// exprVarAlways is exprVar but always creates a fresh variable, so the
// objective variable is never a user variable shared with other roles.
func (s *solver) exprVarAlways(e LinearExpr) int32 {
	lo, hi := e.Offset, e.Offset
	for i, x := range e.Vars {
		a, b := e.Coeffs[i]*s.lo[x.idx], e.Coeffs[i]*s.hi[x.idx]
		lo, hi = lo+min(a, b), hi+max(a, b)
	}
	a := s.newVar(NewDomain(lo, hi))
	vars := append(varIdx(e.Vars), a)
	coeffs := append(append([]int64(nil), e.Coeffs...), -1)
	s.addProp(&linearProp{vars: vars, coeffs: coeffs, lo: -e.Offset, hi: -e.Offset}, vars, 0, false, -1)
	return a
}

func (s *solver) addBinPacking(c *ConstraintInfo, ci int) {
	p := &binPackProp{items: varIdx(c.Vars), sizes: c.Values, bins: c.Bins, loads: varIdx(c.Loads),
		req: make([]int64, len(c.Bins)), pos: make([]int64, len(c.Bins))}
	binSet := DomainFromValues(c.Bins...)
	p.closed = true
	if lo, hi := binSet.Min(), binSet.Max(); hi-lo < 1<<16 {
		p.binLo = lo
		p.dense = make([]int32, hi-lo+1)
		for k := range p.dense {
			p.dense[k] = -1
		}
		for j, b := range c.Bins {
			p.dense[b-lo] = int32(j)
		}
	} else {
		// Only spread-out bin values need the map (a map of 10,000 bins
		// cost 2.5 ms per solve on placement models, which are dense).
		p.binOf = make(map[int64]int, len(c.Bins))
		for j, b := range c.Bins {
			p.binOf[b] = j
		}
	}
	for i, x := range c.Vars {
		p.total += c.Values[i]
		d := s.m.doms[x.idx]
		if !d.subsetOf(binSet) {
			p.closed = false
		}
	}
	if p.total > math.MaxInt64/4 {
		p.closed = false
	}
	inc := p.initIncremental(s)
	s.addProp(p, append(append([]int32(nil), p.items...), p.loads...), 1, !inc, ci)
}

// usedOutsideEncodings marks the variables that a constraint other than
// eq_lit/le_lit, the objective, a hint or the decision strategy mentions.
func usedOutsideEncodings(m *Model) []bool {
	used := make([]bool, len(m.doms))
	for ci := range m.cons {
		c := &m.cons[ci]
		if c.Kind == KindEqLit || c.Kind == KindLeLit {
			used[c.Vars[0].idx] = true // x itself stays
			continue
		}
		for _, x := range c.Vars {
			used[x.idx] = true
		}
		for _, l := range c.Lits {
			used[l.idx>>1] = true
		}
		for _, l := range c.Enforcement {
			used[l.idx>>1] = true
		}
		for _, x := range c.Loads {
			used[x.idx] = true
		}
		for _, e := range c.Exprs {
			for _, x := range e.Vars {
				used[x.idx] = true
			}
		}
		switch c.Kind {
		case KindElement, KindVarElement, KindMinEquality, KindMaxEquality:
			used[c.Target.idx] = true
			used[c.Index.idx] = true
		}
	}
	if m.obj != nil {
		for _, x := range m.obj.Expr.Vars {
			used[x.idx] = true
		}
	}
	for _, h := range m.hints {
		used[h.v] = true
	}
	for _, v := range m.strategy {
		used[v] = true
	}
	for _, l := range m.assumptions {
		used[l.idx>>1] = true
	}
	return used
}
