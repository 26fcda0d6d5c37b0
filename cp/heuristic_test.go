package cp

import (
	"context"
	"fmt"
	"testing"
)

// An item that may stay out of every bin (a pod left unplaced: a value
// outside the bins) is packed by the first solution when a bin has room:
// the value choice must not take "no bin" for the bin with the most room.
func TestFirstSolutionPacksOptionalItems(t *testing.T) {
	const items, bins = 40, 8
	m := NewModel()
	unplaced := int64(-1)
	var xs []IntVar
	var sizes []int64
	var placed LinearExpr
	binVals := make([]int64, bins)
	for b := range binVals {
		binVals[b] = int64(b)
	}
	for i := 0; i < items; i++ {
		x := m.NewIntVarFromDomain(DomainFromValues(append([]int64{unplaced}, binVals...)...), fmt.Sprintf("x%d", i))
		xs = append(xs, x)
		sizes = append(sizes, int64(1+i%3))
		placed.AddLit(m.EqLit(x, unplaced).Not(), 1)
	}
	loads := make([]IntVar, bins)
	for b := range loads {
		loads[b] = m.NewIntVar(0, 20, fmt.Sprintf("load%d", b)) // room for every item: 8 × 20 ≥ 79
	}
	m.AddBinPacking(xs, sizes, binVals, loads)
	m.Maximize(placed)
	r, err := m.Solve(context.Background(), Params{StopAfterFirstSolution: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != Feasible && r.Status != Optimal {
		t.Fatalf("status %s", r.Status)
	}
	left := 0
	for _, x := range xs {
		if r.Value(x) == unplaced {
			left++
		}
	}
	if left != 0 {
		t.Errorf("the first solution leaves %d of %d items unpacked though every bin has room", left, items)
	}
}
