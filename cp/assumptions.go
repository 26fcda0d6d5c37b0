package cp

import (
	"context"
	"time"
)

// CheckAssumptions decides whether the model's constraints (ignoring its
// objective and its own assumptions) are satisfiable when exactly the given
// literals are assumed true. It returns Infeasible, Feasible, or Unknown
// when neither was shown within the deadline and the conflict budget. It is
// the building block of core minimisation (deletion, QuickXplain) done by a
// caller that knows what each assumption stands for.
func (m *Model) CheckAssumptions(ctx context.Context, lits []Lit, deadline time.Time, conflicts int64) Status {
	if m.err != nil {
		return ModelInvalid
	}
	for _, l := range lits {
		if !m.okLit(l, "CheckAssumptions") {
			return ModelInvalid
		}
	}
	switch st := m.feasibleUnder(ctx, lits, deadline, conflicts); st {
	case Optimal:
		return Feasible
	default:
		return st
	}
}
