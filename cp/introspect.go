package cp

// This file is the read-only view of a model, for translators to other
// solvers (e.g. MiniZinc) and for diagnostics. Everything returned is a
// copy; mutating it does not affect the model.

// NumVars returns the number of variables, including constants and the
// literals created by EqLit and LeLit. Variable indices are 0..NumVars-1.
func (m *Model) NumVars() int { return len(m.doms) }

// Var returns the variable with index i.
func (m *Model) Var(i int) IntVar { return IntVar{m: m, idx: int32(i)} }

// VarDomain returns the initial domain of variable i.
func (m *Model) VarDomain(i int) Domain { return m.doms[i] }

// VarName returns the name of variable i.
func (m *Model) VarName(i int) string { return m.names[i] }

// IsEncodingVar reports whether variable i was created by EqLit or LeLit
// (its value is determined by the channelling constraint).
func (m *Model) IsEncodingVar(i int) bool { return m.origin[i] == originEncoding }

// NumConstraints returns the number of constraints, including the eq_lit
// and le_lit channelling constraints.
func (m *Model) NumConstraints() int { return len(m.cons) }

// Constraints returns a description of every constraint, in creation
// order (Constraint.Index is the position).
func (m *Model) Constraints() []ConstraintInfo {
	out := make([]ConstraintInfo, len(m.cons))
	for i := range m.cons {
		out[i] = m.cons[i].clone()
	}
	return out
}

// Objective returns the objective and true, or false if there is none.
func (m *Model) Objective() (Objective, bool) {
	if m.obj == nil {
		return Objective{}, false
	}
	o := *m.obj
	o.Expr = cloneExpr(o.Expr)
	return o, true
}

// Hints returns the solution hints as variable → value.
func (m *Model) Hints() map[IntVar]int64 {
	out := make(map[IntVar]int64, len(m.hints))
	for _, h := range m.hints {
		out[IntVar{m: m, idx: h.v}] = h.val
	}
	return out
}

// Assumptions returns the current assumption literals.
func (m *Model) Assumptions() []Lit { return append([]Lit(nil), m.assumptions...) }

func cloneExpr(e LinearExpr) LinearExpr {
	return LinearExpr{Vars: append([]IntVar(nil), e.Vars...), Coeffs: append([]int64(nil), e.Coeffs...), Offset: e.Offset}
}

func (c ConstraintInfo) clone() ConstraintInfo {
	c.Enforcement = append([]Lit(nil), c.Enforcement...)
	c.Vars = append([]IntVar(nil), c.Vars...)
	c.Coeffs = append([]int64(nil), c.Coeffs...)
	c.Lits = append([]Lit(nil), c.Lits...)
	c.Values = append([]int64(nil), c.Values...)
	c.Bins = append([]int64(nil), c.Bins...)
	c.Loads = append([]IntVar(nil), c.Loads...)
	if c.Tuples != nil {
		ts := make([][]int64, len(c.Tuples))
		for i, t := range c.Tuples {
			ts[i] = append([]int64(nil), t...)
		}
		c.Tuples = ts
	}
	if c.Exprs != nil {
		es := make([]LinearExpr, len(c.Exprs))
		for i, e := range c.Exprs {
			es[i] = cloneExpr(e)
		}
		c.Exprs = es
	}
	return c
}
