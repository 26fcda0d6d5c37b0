package weave_test

import (
	"context"
	"database/sql"
	"fmt"
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

// The benchmark's situation (BenchmarkExplain) at a smaller size: the ten
// pods of an anti-affine app need ten distinct nodes, but only 5 of 40
// nodes are schedulable. The anti-affinity of the app is posted as one
// all_different under its assumption, so the pigeonhole is found by
// propagation: the explanation is proven minimal and names the
// anti-affinity view and the node predicates of six of the app's pods
// (six pods on five nodes), nothing else.
func TestExplainAntiAffinityPigeonhole(t *testing.T) {
	src, err := os.ReadFile("testdata/bench/placement.sql")
	if err != nil {
		t.Fatal(err)
	}
	eachDB(t, func(t *testing.T, db *sql.DB) {
		m, err := weave.Compile(string(src))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := m.CreateSchema(ctx, db); err != nil {
			t.Fatal(err)
		}
		var stmts []string
		for i := 0; i < 40; i++ {
			stmts = append(stmts, fmt.Sprintf("insert into node values ('node-%02d', 64, 256, %v, true, 'z%d')", i, i >= 5, i%3))
		}
		for i := 0; i < 20; i++ {
			app, anti := "web", true
			if i%2 == 1 {
				app, anti = fmt.Sprintf("batch-%d", i%4), false
			}
			stmts = append(stmts, fmt.Sprintf("insert into pending_pod values ('pod-%02d', '%s', %v, 1, 1, null)", i, app, anti))
		}
		mustExec(t, db, stmts...)
		if err := m.Connect(db); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		res, err := m.Solve(ctx, weave.SolveOptions{Timeout: 5 * time.Second, ExplainTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != weave.Infeasible || res.Explanation == nil {
			t.Fatalf("status %s, explanation %v", res.Status, res.Explanation)
		}
		e := res.Explanation
		text := e.String()
		t.Logf("solve + explain %v (explain %v)\n%s", time.Since(start), res.Stats.Explain, text)
		if !e.Minimal {
			t.Errorf("explanation not proven minimal:\n%s", text)
		}
		var views []string
		for _, c := range e.Constraints {
			views = append(views, c.View)
		}
		if !slices.Equal(views, []string{"node_predicates", "anti_affinity"}) {
			t.Fatalf("views %v, want [node_predicates anti_affinity]\n%s", views, text)
		}
		pods := 0
		for _, r := range e.Constraints[0].Rows {
			if r.Table != "pending_pod" || r.Role != "decision" {
				continue
			}
			pods++
			if r.Row["app"] != "web" {
				t.Errorf("node_predicates names pod %v of app %v, not of the anti-affine app", r.Row["name"], r.Row["app"])
			}
		}
		if pods != 6 {
			t.Errorf("node_predicates names %d pods, want 6 (six pods on five nodes)\n%s", pods, text)
		}
		// The anti-affinity group is named by its key, as a person would.
		if g := e.Constraints[1].Groups; len(g) != 1 || g[0]["app"] != "web" {
			t.Errorf("anti_affinity groups %v, want [app=web]", g)
		}
		if !strings.Contains(text, "anti_affinity (line 35) for app=web") {
			t.Errorf("the text does not name the group:\n%s", text)
		}
	})
}
