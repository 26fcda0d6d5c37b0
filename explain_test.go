package weave_test

import (
	"context"
	"database/sql"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weavesql/weave"
)

// explainCase is an infeasible situation and what a person would name.
type explainCase struct {
	name  string
	state []string
	// views maps each view the explanation must name to rows ("table
	// key=value") it must list; no other view may appear.
	views map[string][]string
}

func TestExplanationsNameTheViewsAndRows(t *testing.T) {
	src, err := os.ReadFile("testdata/explain/scheduler.sql")
	if err != nil {
		t.Fatal(err)
	}
	cases := []explainCase{
		{
			name: "resources exhausted: three 3-cpu pods on two 4-cpu nodes",
			state: []string{
				"insert into node values ('n1', 4, false), ('n2', 4, false)",
				"insert into pod values ('p1', 'a', 3, null), ('p2', 'a', 3, null), ('p3', 'b', 3, null)",
			},
			views: map[string][]string{"capacity": {"node name=n1", "node name=n2", "pod name=p1", "pod name=p2", "pod name=p3"}},
		},
		{
			name: "a node selector matching no node",
			state: []string{
				"insert into node values ('n1', 8, false), ('n2', 8, false)",
				"insert into node_label values ('n1', 'disk', 'hdd'), ('n2', 'disk', 'hdd')",
				"insert into pod values ('p1', 'a', 1, null), ('p7', 'b', 1, null)",
				"insert into pod_selector values ('p7', 'disk', 'ssd')",
			},
			views: map[string][]string{"node_selector": {"pod name=p7"}},
		},
		{
			name: "the only matching node is cordoned",
			state: []string{
				"insert into node values ('n1', 8, false), ('n2', 8, true)",
				"insert into node_label values ('n2', 'gpu', 'yes')",
				"insert into pod values ('p1', 'a', 1, null)",
				"insert into pod_selector values ('p1', 'gpu', 'yes')",
			},
			views: map[string][]string{"node_selector": {"pod name=p1"}, "schedulable": {"pod name=p1"}},
		},
		{
			name: "affinity and anti-affinity to the same group",
			state: []string{
				"insert into node values ('n1', 8, false), ('n2', 8, false)",
				"insert into pod values ('w1', 'web', 1, null), ('x', 'cache', 1, null), ('y', 'db', 1, null)",
				"insert into pod_affinity values ('x', 'web')",
				"insert into pod_anti_affinity values ('x', 'web')",
			},
			views: map[string][]string{"affinity": {"pod name=x", "pod name=w1"}, "anti_affinity": {"pod name=x", "pod name=w1"}},
		},
		{
			name: "a tightened policy conflicts with capacity (the paper's anecdote)",
			state: []string{
				"insert into node values ('n1', 4, false), ('n2', 4, false)",
				"insert into pod values ('p1', 'a', 3, null), ('p2', 'b', 3, null)",
				"insert into pod_affinity values ('p1', 'b')",
			},
			views: map[string][]string{"affinity": {"pod name=p1", "pod name=p2"}, "capacity": {"node name=n1", "node name=n2"}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, db *sql.DB) { explainOne(t, db, string(src), c) })
		})
	}
}

func explainOne(t *testing.T, db *sql.DB, src string, c explainCase) {
	{
		{
			m, err := weave.Compile(src)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := m.CreateSchema(ctx, db); err != nil {
				t.Fatal(err)
			}
			mustExec(t, db, c.state...)
			if err := m.Connect(db); err != nil {
				t.Fatal(err)
			}
			res, err := m.Solve(ctx, weave.SolveOptions{Timeout: 5 * time.Second, ExplainTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != weave.Infeasible {
				t.Fatalf("status %s, want INFEASIBLE", res.Status)
			}
			e := res.Explanation
			if e == nil {
				t.Fatal("no explanation")
			}
			text := e.String()
			if !e.Minimal {
				t.Errorf("explanation not proven minimal:\n%s", text)
			}
			var got []string
			for _, ec := range e.Constraints {
				got = append(got, ec.View)
				if ec.Line <= 0 {
					t.Errorf("view %s without a line", ec.View)
				}
			}
			var want []string
			for v := range c.views {
				want = append(want, v)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("views %v, want %v\n%s", got, want, text)
			}
			for _, ec := range e.Constraints {
				for _, row := range c.views[ec.View] {
					table, kv, _ := strings.Cut(row, " ")
					k, v, _ := strings.Cut(kv, "=")
					found := false
					for _, r := range ec.Rows {
						if r.Table == table && r.Row[k] == v {
							found = true
						}
					}
					if !found {
						t.Errorf("%s does not name %s:\n%s", ec.View, row, text)
					}
				}
			}
			t.Logf("\n%s", text)
		}
	}
}
