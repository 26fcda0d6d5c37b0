package cp

import "math/bits"

// LinearExpr is Σ Coeffs[i]*Vars[i] + Offset. Build it with the Add*
// methods or as a literal; Vars and Coeffs must have equal length.
type LinearExpr struct {
	Vars   []IntVar
	Coeffs []int64
	Offset int64

	overflow bool // set when building the expression overflowed int64
}

// AddTerm adds c*x.
func (e *LinearExpr) AddTerm(x IntVar, c int64) *LinearExpr {
	e.Vars = append(e.Vars, x)
	e.Coeffs = append(e.Coeffs, c)
	return e
}

// AddLit adds c*l, where a negated literal counts as c*(1-v).
func (e *LinearExpr) AddLit(l Lit, c int64) *LinearExpr {
	if l.IsNegated() {
		e.AddConstant(c)
		if c == minInt64 {
			e.overflow = true
		}
		return e.AddTerm(l.Var(), -c)
	}
	return e.AddTerm(l.Var(), c)
}

// AddConstant adds k.
func (e *LinearExpr) AddConstant(k int64) *LinearExpr {
	s, ok := addChecked(e.Offset, k)
	e.Offset, e.overflow = s, e.overflow || !ok
	return e
}

// AddExpr adds c*o.
func (e *LinearExpr) AddExpr(o LinearExpr, c int64) *LinearExpr {
	for i, x := range o.Vars {
		var k int64
		if i < len(o.Coeffs) {
			k = o.Coeffs[i]
		}
		p, ok := mulChecked(k, c)
		e.overflow = e.overflow || !ok
		e.AddTerm(x, p)
	}
	p, ok := mulChecked(o.Offset, c)
	e.overflow = e.overflow || !ok || o.overflow || len(o.Coeffs) != len(o.Vars)
	return e.AddConstant(p)
}

const (
	minInt64 = -1 << 63
	maxInt64 = 1<<63 - 1
)

func addChecked(a, b int64) (int64, bool) {
	s := a + b
	return s, (a >= 0) != (b >= 0) || (s >= 0) == (a >= 0)
}

func mulChecked(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	if a == minInt64 || b == minInt64 {
		return 0, false
	}
	neg := (a < 0) != (b < 0)
	hi, lo := bits.Mul64(uint64(abs64(a)), uint64(abs64(b)))
	if hi != 0 || lo > uint64(maxInt64) {
		return 0, false
	}
	if neg {
		return -int64(lo), true
	}
	return int64(lo), true
}

func abs64(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

// normLinear validates e against m, merges duplicate variables, drops zero
// coefficients and checks that every partial sum of extremes stays within
// MaxMagnitude. It returns the merged terms, the offset and the
// expression's minimum and maximum over the variables' domains.
func (m *Model) normLinear(e LinearExpr, what string) (vars []IntVar, coeffs []int64, off, lo, hi int64, ok bool) {
	return m.normLinearNamed(e, func() string { return what })
}

// normLinearNamed is normLinear naming the expression only in an error:
// a min or max constraint over thousands of expressions formats no name
// for each.
func (m *Model) normLinearNamed(e LinearExpr, name func() string) (vars []IntVar, coeffs []int64, off, lo, hi int64, ok bool) {
	if e.overflow || len(e.Vars) != len(e.Coeffs) {
		m.failf("%s: malformed or overflowing linear expression", name())
		return nil, nil, 0, 0, 0, false
	}
	// Duplicates are found by a scan in a short expression, by a map in
	// a long one.
	const scanned = 16
	var pos map[int32]int
	if len(e.Vars) > scanned {
		pos = make(map[int32]int, len(e.Vars))
	}
	vars, coeffs = make([]IntVar, 0, len(e.Vars)), make([]int64, 0, len(e.Vars))
	for i, x := range e.Vars {
		if !m.owns(x) {
			m.failf("%s: variable does not belong to this model", name())
			return nil, nil, 0, 0, 0, false
		}
		j, seen := -1, false
		if pos != nil {
			j, seen = pos[x.idx]
		} else {
			for k, y := range vars {
				if y.idx == x.idx {
					j, seen = k, true
					break
				}
			}
		}
		if seen {
			s, ok := addChecked(coeffs[j], e.Coeffs[i])
			if !ok {
				m.failf("%s: coefficient overflow", name())
				return nil, nil, 0, 0, 0, false
			}
			coeffs[j] = s
			continue
		}
		if pos != nil {
			pos[x.idx] = len(vars)
		}
		vars = append(vars, x)
		coeffs = append(coeffs, e.Coeffs[i])
	}
	// Drop zero coefficients.
	n := 0
	for i := range vars {
		if coeffs[i] != 0 {
			vars[n], coeffs[n] = vars[i], coeffs[i]
			n++
		}
	}
	vars, coeffs = vars[:n], coeffs[:n]
	if abs64(e.Offset) > MaxMagnitude {
		m.failf("%s: offset %d exceeds MaxMagnitude (overflow)", name(), e.Offset)
		return nil, nil, 0, 0, 0, false
	}
	lo, hi = e.Offset, e.Offset
	var mag int64 = abs64(e.Offset)
	for i, x := range vars {
		d := m.doms[x.idx]
		a, ok1 := mulChecked(coeffs[i], d.Min())
		b, ok2 := mulChecked(coeffs[i], d.Max())
		if !ok1 || !ok2 || abs64(a) > MaxMagnitude || abs64(b) > MaxMagnitude {
			m.failf("%s: term %d*%v may overflow", name(), coeffs[i], x)
			return nil, nil, 0, 0, 0, false
		}
		mag += max(abs64(a), abs64(b))
		if mag > MaxMagnitude {
			m.failf("%s: expression magnitude may overflow int64 (limit MaxMagnitude)", name())
			return nil, nil, 0, 0, 0, false
		}
		lo += min(a, b)
		hi += max(a, b)
	}
	return vars, coeffs, e.Offset, lo, hi, true
}
