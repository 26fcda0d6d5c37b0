package cp_test

import (
	"context"
	"fmt"
	"log"

	"github.com/weavesql/weave/cp"
)

// A knapsack: pick items of the largest total value within a weight
// limit of 10. Each item is a Boolean variable; the weight left over is
// an integer variable tied to them by a linear equality. The best choice
// (b and d, value 90, weight 7) is the only one of that value, so the
// printed solution is the same on every run.
func ExampleModel_Solve() {
	items := []struct {
		name          string
		weight, value int64
	}{{"a", 5, 10}, {"b", 4, 40}, {"c", 6, 30}, {"d", 3, 50}}

	m := cp.NewModel()
	take := make([]cp.Lit, len(items))
	var weight, value cp.LinearExpr
	for i, it := range items {
		take[i] = m.NewBoolVar("take_" + it.name)
		weight.AddLit(take[i], it.weight)
		value.AddLit(take[i], it.value)
	}
	// spare = 10 - weight, and spare >= 0 by its domain.
	spare := m.NewIntVar(0, 10, "spare")
	var sum cp.LinearExpr
	sum.AddExpr(weight, 1).AddTerm(spare, 1)
	m.AddEquality(sum, 10).WithName("weight_limit")
	m.Maximize(value)

	// One worker and a seed: the search is deterministic. The model is
	// small enough to be searched completely, so no time limit is needed
	// for the optimum to be proven.
	resp, err := m.Solve(context.Background(), cp.Params{Seed: 1, Workers: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", resp.Status)
	fmt.Println("value:", resp.Objective, "bound:", resp.Bound)
	for i, it := range items {
		fmt.Printf("take %s: %v\n", it.name, resp.LitValue(take[i]))
	}
	fmt.Println("spare:", resp.Value(spare))
	// Verify re-checks the solution against every constraint.
	fmt.Println("verified:", m.Verify(resp) == nil)
	// Output:
	// status: OPTIMAL
	// value: 90 bound: 90
	// take a: false
	// take b: true
	// take c: false
	// take d: true
	// spare: 3
	// verified: true
}

// Infeasibility is a status, not an error: two integers in [0, 3] cannot
// sum to 7, which Solve proves, returning no values.
func ExampleStatus() {
	m := cp.NewModel()
	x := m.NewIntVar(0, 3, "x")
	y := m.NewIntVar(0, 3, "y")
	var e cp.LinearExpr
	e.AddTerm(x, 1).AddTerm(y, 1)
	m.AddEquality(e, 7)

	resp, err := m.Solve(context.Background(), cp.Params{Seed: 1, Workers: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", resp.Status, "has solution:", resp.HasSolution())
	// Output:
	// status: INFEASIBLE has solution: false
}
