package cp

import (
	"errors"
	"fmt"
	"slices"
)

// Verify checks the response's assignment against the model: every value
// is in its variable's domain, every constraint whose enforcement literals
// are all true holds, assumptions hold, and Response.Objective equals the
// objective's value. The error names the first violated constraint.
//
// It is deliberately plain code written from the definitions, independent
// of the propagators, so tests can use it as the referee.
func (m *Model) Verify(r *Response) error {
	if m.err != nil {
		return m.err
	}
	if r == nil || !r.HasSolution() {
		return errors.New("cp: response has no solution")
	}
	val := r.values
	if len(val) != len(m.doms) {
		return fmt.Errorf("cp: response has %d values, model %d variables", len(val), len(m.doms))
	}
	for i, d := range m.doms {
		if !d.Contains(val[i]) {
			return fmt.Errorf("cp: variable %v = %d is outside its domain", m.Var(i), val[i])
		}
	}
	lit := func(l Lit) bool {
		if l.IsNegated() {
			return val[l.idx>>1] == 0
		}
		return val[l.idx>>1] == 1
	}
	for i := range m.cons {
		c := &m.cons[i]
		active := true
		for _, l := range c.Enforcement {
			active = active && lit(l)
		}
		if !active {
			continue
		}
		if msg := checkConstraint(c, val, lit); msg != "" {
			return fmt.Errorf("cp: constraint #%d %s violated: %s", i, c.Label(), msg)
		}
	}
	for _, l := range m.assumptions {
		if !lit(l) {
			return fmt.Errorf("cp: assumption %v is false", l)
		}
	}
	if m.obj != nil {
		if got := evalExpr(m.obj.Expr, val); got != r.Objective {
			return fmt.Errorf("cp: objective is %d but response says %d", got, r.Objective)
		}
	}
	return nil
}

func evalExpr(e LinearExpr, val []int64) int64 {
	s := e.Offset
	for i, x := range e.Vars {
		s += e.Coeffs[i] * val[x.idx]
	}
	return s
}

func evalTerms(vars []IntVar, coeffs []int64, val []int64) int64 {
	var s int64
	for i, x := range vars {
		s += coeffs[i] * val[x.idx]
	}
	return s
}

// checkConstraint returns "" if c holds under val, else a description.
func checkConstraint(c *ConstraintInfo, val []int64, lit func(Lit) bool) string {
	switch c.Kind {
	case KindLinear:
		if s := evalTerms(c.Vars, c.Coeffs, val); s < c.Lo || s > c.Hi {
			return fmt.Sprintf("sum %d not in [%d, %d]", s, c.Lo, c.Hi)
		}
	case KindNotEqual:
		if s := evalTerms(c.Vars, c.Coeffs, val); s == c.Lo {
			return fmt.Sprintf("sum equals %d", s)
		}
	case KindBoolOr:
		for _, l := range c.Lits {
			if lit(l) {
				return ""
			}
		}
		return "no literal is true"
	case KindBoolAnd:
		for _, l := range c.Lits {
			if !lit(l) {
				return fmt.Sprintf("%v is false", l)
			}
		}
	case KindAtMostOne, KindExactlyOne:
		n := 0
		for _, l := range c.Lits {
			if lit(l) {
				n++
			}
		}
		if n > 1 || (c.Kind == KindExactlyOne && n != 1) {
			return fmt.Sprintf("%d literals are true", n)
		}
	case KindAllDifferent:
		seen := map[int64]IntVar{}
		for _, x := range c.Vars {
			if slices.Contains(c.Values, val[x.idx]) {
				continue // exempt: any number may take it
			}
			if y, dup := seen[val[x.idx]]; dup {
				return fmt.Sprintf("%v and %v both equal %d", y, x, val[x.idx])
			}
			seen[val[x.idx]] = x
		}
	case KindElement:
		i := val[c.Index.idx]
		if i < 0 || i >= int64(len(c.Values)) {
			return fmt.Sprintf("index %d out of range", i)
		}
		if val[c.Target.idx] != c.Values[i] {
			return fmt.Sprintf("target %d != values[%d] = %d", val[c.Target.idx], i, c.Values[i])
		}
	case KindVarElement:
		i := val[c.Index.idx]
		if i < 0 || i >= int64(len(c.Vars)) {
			return fmt.Sprintf("index %d out of range", i)
		}
		if val[c.Target.idx] != val[c.Vars[i].idx] {
			return fmt.Sprintf("target %d != vars[%d] = %d", val[c.Target.idx], i, val[c.Vars[i].idx])
		}
	case KindTable:
	tuples:
		for _, t := range c.Tuples {
			for j, x := range c.Vars {
				if val[x.idx] != t[j] {
					continue tuples
				}
			}
			return ""
		}
		return "assignment is not an allowed tuple"
	case KindMembership, KindNonMembership:
		in := false
		for _, v := range c.Values {
			in = in || v == val[c.Vars[0].idx]
		}
		if in != (c.Kind == KindMembership) {
			return fmt.Sprintf("%v = %d", c.Vars[0], val[c.Vars[0].idx])
		}
	case KindVarMembership:
		x := val[c.Vars[0].idx]
		for _, y := range c.Vars[1:] {
			if val[y.idx] == x {
				return ""
			}
		}
		return fmt.Sprintf("%v = %d equals none of %v", c.Vars[0], x, c.Vars[1:])
	case KindBinPacking:
		for j, b := range c.Bins {
			var load int64
			for i, x := range c.Vars {
				if val[x.idx] == b {
					load += c.Values[i]
				}
			}
			if load != val[c.Loads[j].idx] {
				return fmt.Sprintf("bin %d has load %d but %v = %d", b, load, c.Loads[j], val[c.Loads[j].idx])
			}
		}
	case KindMinEquality, KindMaxEquality:
		best := evalExpr(c.Exprs[0], val)
		for _, e := range c.Exprs[1:] {
			v := evalExpr(e, val)
			if (c.Kind == KindMinEquality) == (v < best) {
				best = v
			}
		}
		if val[c.Target.idx] != best {
			return fmt.Sprintf("target %d, expected %d", val[c.Target.idx], best)
		}
	case KindEqLit:
		if lit(c.Lits[0]) != (val[c.Vars[0].idx] == c.Values[0]) {
			return fmt.Sprintf("%v does not match %v == %d", c.Lits[0], c.Vars[0], c.Values[0])
		}
	case KindLeLit:
		if lit(c.Lits[0]) != (val[c.Vars[0].idx] <= c.Values[0]) {
			return fmt.Sprintf("%v does not match %v <= %d", c.Lits[0], c.Vars[0], c.Values[0])
		}
	default:
		return "unknown constraint kind"
	}
	return ""
}
