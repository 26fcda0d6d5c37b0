package minizinc

import (
	"context"
	"testing"
	"time"

	"github.com/weavesql/weave/backend/minizinc/mzntest"
	"github.com/weavesql/weave/cp"
)

// An objective without variables (every soft view constant on this
// snapshot) is emitted as "solve satisfy": the first solution is optimal,
// as the native engine says, though minizinc prints no "==========".
func TestConstantObjectiveIsOptimal(t *testing.T) {
	mzntest.Require(t)
	m := cp.NewModel()
	x := m.NewIntVar(0, 3, "x")
	m.AddNotEqual(cp.LinearExpr{Vars: []cp.IntVar{x}, Coeffs: []int64{1}}, 0)
	m.Maximize(cp.LinearExpr{})
	r, err := Backend{}.Solve(context.Background(), m, cp.Params{TimeLimit: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != cp.Optimal || r.Objective != 0 {
		t.Fatalf("status %v objective %d, want optimal 0", r.Status, r.Objective)
	}
	if err := m.Verify(r); err != nil {
		t.Fatal(err)
	}
}
