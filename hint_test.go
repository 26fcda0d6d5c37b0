package weave_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weavesql/weave"
	"github.com/weavesql/weave/cp"
	"github.com/weavesql/weave/internal/testdb"
)

// The stored values of the decision columns warm-start the search: with
// FirstSolution the answer is the stored configuration when it is valid.
// A stored NULL is a row still to decide unless HintNulls says it is a
// choice too.
func TestStoredValuesAreHints(t *testing.T) {
	m, err := weave.Compile(`
create table node (name varchar(10) primary key);
-- @variable_columns (node nullable)
create table pod (name varchar(10) primary key, node varchar(10) references node(name));
-- @soft_constraint
create view placed as select count(*) from pod where node is not null;
`)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db := testdb.OpenSQLite(t)
	if err := m.CreateSchema(ctx, db); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "insert into node values ('n1'), ('n2'), ('n3')",
		"insert into pod values ('p1', 'n2'), ('p2', null), ('p3', 'n3'), ('p4', null)")
	if err := m.Connect(db); err != nil {
		t.Fatal(err)
	}
	solve := func(hintNulls bool) (string, int) {
		rec := &hintRecorder{}
		res, err := m.Solve(ctx, weave.SolveOptions{FirstSolution: true, HintNulls: hintNulls, Seed: 1, Timeout: 5 * time.Second, Backend: rec})
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, r := range res.Table("pod").Rows {
			out += fmt.Sprintf("%v=%v ", r["name"], r["node"])
		}
		return out, rec.hints
	}
	got, hints := solve(true)
	if want := "p1=n2 p2=<nil> p3=n3 p4=<nil> "; got != want || hints != 4 {
		t.Errorf("HintNulls: first solution %q from %d hints, want the stored configuration %q from 4", got, hints, want)
	}
	if got, hints := solve(false); !strings.HasPrefix(got, "p1=n2 ") || !strings.Contains(got, " p3=n3 ") || hints != 2 {
		t.Errorf("without HintNulls: first solution %q from %d hints, want p1=n2 and p3=n3 from 2 (a stored NULL is no hint)", got, hints)
	}
}

// hintRecorder counts the hints of the model it solves with the native
// engine.
type hintRecorder struct{ hints int }

func (h *hintRecorder) Name() string { return "hint recorder" }

func (h *hintRecorder) Solve(ctx context.Context, m *cp.Model, p cp.Params) (*cp.Response, error) {
	h.hints = len(m.Hints())
	return m.Solve(ctx, p)
}
