package cp

import (
	"fmt"
	"strings"
)

func fmtDomain(d Domain) string {
	var parts []string
	for _, iv := range d.ivs {
		if iv.lo == iv.hi {
			parts = append(parts, fmt.Sprint(iv.lo))
		} else {
			parts = append(parts, fmt.Sprintf("%d..%d", iv.lo, iv.hi))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// String renders the domain, e.g. "{0..3,5}".
func (d Domain) String() string { return fmtDomain(d) }

func formatTerms(vars []IntVar, coeffs []int64, off int64) string {
	var b strings.Builder
	for i, x := range vars {
		if i > 0 {
			b.WriteString(" + ")
		}
		fmt.Fprintf(&b, "%d*%v", coeffs[i], x)
	}
	if off != 0 || len(vars) == 0 {
		fmt.Fprintf(&b, " + %d", off)
	}
	return b.String()
}

func formatConstraint(c ConstraintInfo) string {
	s := c.Label() + ": "
	switch c.Kind {
	case KindLinear:
		s += fmt.Sprintf("%d <= %s <= %d", c.Lo, formatTerms(c.Vars, c.Coeffs, 0), c.Hi)
	case KindNotEqual:
		s += fmt.Sprintf("%s != %d", formatTerms(c.Vars, c.Coeffs, 0), c.Lo)
	case KindElement, KindVarElement:
		s += fmt.Sprintf("%v == %v[%v] %v", c.Target, c.Values, c.Index, c.Vars)
	case KindVarMembership:
		s += fmt.Sprintf("%v in %v", c.Vars[0], c.Vars[1:])
	case KindMinEquality, KindMaxEquality:
		var es []string
		for _, e := range c.Exprs {
			es = append(es, formatTerms(e.Vars, e.Coeffs, e.Offset))
		}
		s += fmt.Sprintf("%v == (%s)", c.Target, strings.Join(es, ", "))
	default:
		s += fmt.Sprintf("vars=%v lits=%v values=%v bins=%v loads=%v tuples=%v", c.Vars, c.Lits, c.Values, c.Bins, c.Loads, c.Tuples)
	}
	if len(c.Enforcement) > 0 {
		s += fmt.Sprintf(" if %v", c.Enforcement)
	}
	return s
}

func formatObjective(o Objective) string {
	dir := "minimize"
	if o.Maximize {
		dir = "maximize"
	}
	return dir + " " + formatTerms(o.Expr.Vars, o.Expr.Coeffs, o.Expr.Offset)
}

// String renders the model in a readable form, one constraint per line
// (for debugging and test failure messages).
func (m *Model) String() string {
	var b strings.Builder
	for i := range m.doms {
		fmt.Fprintf(&b, "%v in %v\n", m.Var(i), m.doms[i])
	}
	for i := range m.cons {
		b.WriteString(formatConstraint(m.cons[i]) + "\n")
	}
	if m.obj != nil {
		b.WriteString(formatObjective(*m.obj) + "\n")
	}
	return b.String()
}
