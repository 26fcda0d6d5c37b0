package weave_test

import (
	"context"
	"math/rand"
	"os"
	"testing"
	"time"

	"github.com/weavesql/weave"
)

// The paper's capacity constraint in its own SQL style (a hard view that
// filters the grouped view spare_capacity_per_node, as testdata/paper.sql
// defines it) and as a having clause over the same join.
// The paper's capacity constraint in its two forms (testdata), each
// appended to testdata/paper.sql.
var (
	paperCapacityFilter = mustRead("testdata/paper_capacity_filter.sql")
	paperCapacityHaving = mustRead("testdata/paper_capacity_having.sql")
)

// mustRead returns a test file's text; a missing file is a broken checkout.
func mustRead(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// paperWith returns testdata/paper.sql followed by extra views.
func paperWith(t testing.TB, extra string) string {
	t.Helper()
	src, err := os.ReadFile("testdata/paper.sql")
	if err != nil {
		t.Fatal(err)
	}
	return string(src) + extra
}

// TestPaperCapacityFormsGroundAlike: the paper's filter over the grouped
// view is a bound on each node's load, as the having form is, with no
// literal per node: at 100 pods × 50 nodes both forms have the same
// number of variables and constraints.
func TestPaperCapacityFormsGroundAlike(t *testing.T) {
	sizes := map[string][2]int{}
	for _, f := range []struct{ name, view string }{{"filter", paperCapacityFilter}, {"having", paperCapacityHaving}} {
		m, err := weave.Compile(paperWith(t, f.view))
		if err != nil {
			t.Fatal(err)
		}
		db := weave.OpenSQLite(t)
		ctx := context.Background()
		if err := m.CreateSchema(ctx, db); err != nil {
			t.Fatal(err)
		}
		newPaperCluster(t, db, rand.New(rand.NewSource(1)), 50, 100)
		if err := m.Connect(db); err != nil {
			t.Fatal(err)
		}
		res, err := m.Solve(ctx, weave.SolveOptions{Timeout: 50 * time.Millisecond, NoExplain: true})
		if err != nil {
			t.Fatal(err)
		}
		st := res.Stats
		vs := st.Views["constraint_capacity"]
		t.Logf("%s: %d variables, %d constraints %v; the capacity view: %d variables, %v", f.name, st.Variables, st.Constraints, st.ByKind, vs.Variables, vs.ByKind)
		if vs.Variables != 0 {
			t.Errorf("%s: the capacity view adds %d variables, want none (a bound on each node's load)", f.name, vs.Variables)
		}
		sizes[f.name] = [2]int{st.Variables, st.Constraints}
	}
	if sizes["filter"] != sizes["having"] {
		t.Errorf("the capacity forms differ in size (variables, constraints): %v", sizes)
	}
}
