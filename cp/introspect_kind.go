package cp

// ConstraintKindAt returns the kind and name of constraint i without
// copying it (Constraints copies everything), for per-source statistics.
func (m *Model) ConstraintKindAt(i int) (ConstraintKind, string) {
	return m.cons[i].Kind, m.cons[i].Name
}
