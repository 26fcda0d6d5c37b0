package weave

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"testing"
	"time"

	"github.com/weavesql/weave/cp"
)

// The core behind an explanation, checked by fresh solves rather than by
// the checker that found it: on random infeasible clusters, the core alone
// is infeasible (its constraints with every other one free), and when the
// explanation says Minimal, dropping any one member makes the rest
// satisfiable.
func TestExplanationCoresAgainstFreshSolves(t *testing.T) {
	src, err := os.ReadFile("testdata/explain/scheduler.sql")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	infeasible := 0
	for seed := int64(0); infeasible < 12 && seed < 200; seed++ {
		m, err := Compile(string(src))
		if err != nil {
			t.Fatal(err)
		}
		db := OpenSQLite(t)
		if err := m.CreateSchema(ctx, db); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewSource(seed))
		var stmts []string
		nodes := 2 + rng.Intn(2)
		for i := 0; i < nodes; i++ {
			stmts = append(stmts, fmt.Sprintf("insert into node values ('n%d', %d, %v)", i, 2+rng.Intn(4), rng.Intn(4) == 0))
			if rng.Intn(2) == 0 {
				stmts = append(stmts, fmt.Sprintf("insert into node_label values ('n%d', 'disk', 'ssd')", i))
			}
		}
		pods := 3 + rng.Intn(3)
		for i := 0; i < pods; i++ {
			stmts = append(stmts, fmt.Sprintf("insert into pod values ('p%d', 'a%d', %d, null)", i, rng.Intn(2), 1+rng.Intn(3)))
			if rng.Intn(4) == 0 {
				stmts = append(stmts, fmt.Sprintf("insert into pod_selector values ('p%d', 'disk', 'ssd')", i))
			}
			switch rng.Intn(5) {
			case 0:
				stmts = append(stmts, fmt.Sprintf("insert into pod_affinity values ('p%d', 'a%d')", i, rng.Intn(2)))
			case 1:
				stmts = append(stmts, fmt.Sprintf("insert into pod_anti_affinity values ('p%d', 'a%d')", i, rng.Intn(2)))
			}
		}
		for _, s := range stmts {
			if _, err := db.Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		if err := m.Connect(db); err != nil {
			t.Fatal(err)
		}
		if checkCore(t, m, seed) {
			infeasible++
		}
	}
	t.Logf("%d infeasible clusters checked", infeasible)
	if infeasible < 5 {
		t.Fatalf("only %d infeasible clusters generated: the test checks too little", infeasible)
	}
}

// The same check through a grouped view: the paper's capacity as a filter
// over spare_capacity_per_node, where each node's row of the view is an
// item of its own, on random clusters that often do not fit.
func TestExplanationCoresThroughGroupedViews(t *testing.T) {
	paper, err := os.ReadFile("testdata/paper.sql")
	if err != nil {
		t.Fatal(err)
	}
	filter, err := os.ReadFile("testdata/paper_capacity_filter.sql")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	infeasible := 0
	for seed := int64(0); infeasible < 8 && seed < 100; seed++ {
		m, err := Compile(string(paper) + string(filter))
		if err != nil {
			t.Fatal(err)
		}
		db := OpenSQLite(t)
		if err := m.CreateSchema(ctx, db); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewSource(seed))
		var stmts []string
		for i := 0; i < 2+rng.Intn(2); i++ {
			stmts = append(stmts, fmt.Sprintf("insert into node values ('n%d', %v, false, false, true, %d)", i, rng.Intn(4) == 0, 2+rng.Intn(4)))
		}
		for i := 0; i < 3+rng.Intn(3); i++ {
			stmts = append(stmts, fmt.Sprintf("insert into pending_pod values ('p%d', 'Pending', 'default', null, %d, false)", i, 1+rng.Intn(3)))
		}
		for _, s := range stmts {
			if _, err := db.Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		if err := m.Connect(db); err != nil {
			t.Fatal(err)
		}
		if checkCore(t, m, seed) {
			infeasible++
		}
	}
	t.Logf("%d infeasible clusters checked", infeasible)
	if infeasible < 5 {
		t.Fatalf("only %d infeasible clusters generated: the test checks too little", infeasible)
	}
}

// checkCore solves m; when it is infeasible, it checks the explanation's
// core by fresh solves (the core alone is infeasible; when reported
// minimal, each member dropped leaves a satisfiable rest) and reports
// true.
func checkCore(t *testing.T, m *Model, seed int64) bool {
	t.Helper()
	ctx := context.Background()
	res, err := m.Solve(ctx, SolveOptions{Timeout: 5 * time.Second, NoExplain: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != Infeasible {
		return false
	}
	snap, err := m.fetch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gr, core, minimal, err := m.explainCore(ctx, snap, 5*time.Second)
	if err != nil || gr == nil {
		t.Fatalf("seed %d: no core (%v)", seed, err)
	}
	solve := func(assume []cp.Lit) cp.Status {
		gr.Model.ClearAssumptions()
		gr.Model.AddAssumptions(assume...)
		r, err := gr.Model.Solve(ctx, cp.Params{TimeLimit: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status
	}
	if st := solve(core); st != cp.Infeasible {
		t.Errorf("seed %d: the core (%d members) alone is %s, want INFEASIBLE", seed, len(core), st)
	}
	if !minimal {
		t.Logf("seed %d: core of %d not proven minimal", seed, len(core))
		return true
	}
	for i := range core {
		rest := append(append([]cp.Lit(nil), core[:i]...), core[i+1:]...)
		if st := solve(rest); st != cp.Optimal && st != cp.Feasible {
			t.Errorf("seed %d: the core is reported minimal, but without member %d (%s) it is still %s",
				seed, i, gr.BlameOf(core[i]).Label(gr), st)
		}
	}
	return true
}
