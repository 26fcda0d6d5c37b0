package weave_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weavesql/weave"
)

// Each shape a hard constraint can take on its way to the rows it blames,
// explained on SQLite and PostgreSQL: every item of the explanation names
// its view, its groups (the view's own, or those of a grouped view it
// reads) and its rows, exactly. The paper's own capacity style — a hard
// filter over the grouped view spare_capacity_per_node — is the case that
// used to be explained as just "constraint_capacity (line N)".

// shapeCase is an infeasible situation and the explanation it must get.
type shapeCase struct {
	name   string
	schema string
	opts   []weave.CompileOption
	state  []string
	// items are the explanation's items, each as its view, its groups
	// ("VIEW key=value, ...") and its rows ("decision TABLE KEY", "data
	// TABLE KEY", a row without a key as "data TABLE (col=value, ...)",
	// "more N" for rows not listed), in any order.
	items []shapeItem
	// lines are the text's lines, in order, with "@VIEW" standing for
	// the view's line number.
	lines []string
}

type shapeItem struct {
	view   string
	groups []string
	rows   []string
}

// shapeBase is a small cluster: nodes, pods placed on them, node labels.
const shapeBase = `create table node (
  name varchar(10) not null primary key,
  cpu integer not null,
  unschedulable boolean not null
);
-- @variable_columns (node)
create table pod (
  name varchar(10) not null primary key,
  app varchar(10) not null,
  cpu integer not null,
  anti boolean not null,
  node varchar(10) references node(name)
);
`

const shapeNodeCapacity = `
-- @hard_constraint
create view capacity as
select node.name from node join pod on pod.node = node.name
group by node.name
having sum(pod.cpu) <= node.cpu;
`

func shapeCases(t *testing.T) []shapeCase {
	paper := func(view string) string { return paperWith(t, view) }
	scheduler, err := os.ReadFile("testdata/explain/scheduler.sql")
	if err != nil {
		t.Fatal(err)
	}
	paperState := []string{
		"insert into node values ('n1', false, false, false, true, 4), ('n2', false, false, false, true, 4)",
		"insert into pending_pod values ('p1', 'Pending', 'default', null, 3, false), ('p2', 'Pending', 'default', null, 3, false), ('p3', 'Pending', 'default', null, 3, false)",
	}
	paperPods := []string{"decision pending_pod p1", "decision pending_pod p2", "decision pending_pod p3"}
	binState := []string{
		"insert into bin (id, cpu_cap, mem_cap) values (1, 10, 10), (2, 10, 10)",
		"insert into item (id, cpu, mem, bin) values (1, 6, 1, null), (2, 6, 1, null), (3, 6, 1, null)",
	}
	items := []string{"decision item 1", "decision item 2", "decision item 3"}
	var many []string
	for i := 1; i <= 20; i++ {
		many = append(many, fmt.Sprintf("('p%02d', 'a', 1, false, null)", i))
	}
	return []shapeCase{
		{
			name:   "a hard filter over a grouped view (the paper's spare_capacity_per_node)",
			schema: paper(paperCapacityFilter),
			state:  paperState,
			items: []shapeItem{
				{"constraint_capacity", []string{"spare_capacity_per_node name=n1"}, append([]string{"data node n1"}, paperPods...)},
				{"constraint_capacity", []string{"spare_capacity_per_node name=n2"}, append([]string{"data node n2"}, paperPods...)},
			},
			lines: []string{
				"constraint_capacity (line @constraint_capacity) for node n1 (available_cpu_capacity=4) in spare_capacity_per_node: pending_pod p1 (cpu_request=3), p2 (cpu_request=3), p3 (cpu_request=3)",
				"constraint_capacity (line @constraint_capacity) for node n2 (available_cpu_capacity=4) in spare_capacity_per_node: pending_pod p1 (cpu_request=3), p2 (cpu_request=3), p3 (cpu_request=3)",
			},
		},
		{
			name:   "the paper's capacity as a having clause (a grouped hard view)",
			schema: paper(paperCapacityHaving),
			state:  paperState,
			items: []shapeItem{
				{"constraint_capacity", []string{"constraint_capacity name=n1"}, append([]string{"data node n1"}, paperPods...)},
				{"constraint_capacity", []string{"constraint_capacity name=n2"}, append([]string{"data node n2"}, paperPods...)},
			},
			lines: []string{
				"constraint_capacity (line @constraint_capacity) for node n1 (available_cpu_capacity=4): pending_pod p1 (cpu_request=3), p2 (cpu_request=3), p3 (cpu_request=3)",
				"constraint_capacity (line @constraint_capacity) for node n2 (available_cpu_capacity=4): pending_pod p1 (cpu_request=3), p2 (cpu_request=3), p3 (cpu_request=3)",
			},
		},
		{
			name: "an intermediate view over a grouped view",
			schema: shapeBase + `
create view node_spare as
select node.name as node, node.cpu - sum(pod.cpu) as spare
from node join pod on pod.node = node.name
group by node.name, node.cpu;

create view node_headroom as
select node, spare - 1 as headroom from node_spare;

-- @hard_constraint
create view headroom as
select * from node_headroom where headroom >= 0;
`,
			state: []string{
				"insert into node values ('n1', 4, false), ('n2', 4, false)",
				"insert into pod values ('p1', 'a', 2, false, null), ('p2', 'a', 2, false, null), ('p3', 'a', 2, false, null)",
			},
			items: []shapeItem{
				{"headroom", []string{"node_spare cpu=4, name=n1"}, []string{"data node n1", "decision pod p1", "decision pod p2", "decision pod p3"}},
				{"headroom", []string{"node_spare cpu=4, name=n2"}, []string{"data node n2", "decision pod p1", "decision pod p2", "decision pod p3"}},
			},
			lines: []string{
				"headroom (line @headroom) for node n1 (cpu=4) in node_spare: pod p1 (cpu=2), p2 (cpu=2), p3 (cpu=2)",
				"headroom (line @headroom) for node n2 (cpu=4) in node_spare: pod p1 (cpu=2), p2 (cpu=2), p3 (cpu=2)",
			},
		},
		{
			name: "a pushed-down view that filters a table: its rows are the table's",
			schema: shapeBase + `
create view ready_node as
select name, cpu from node where unschedulable = false;

-- @hard_constraint
create view capacity as
select ready_node.name from ready_node join pod on pod.node = ready_node.name
group by ready_node.name, ready_node.cpu
having sum(pod.cpu) <= ready_node.cpu;

-- @hard_constraint
create view schedulable as
select * from pod join node on pod.node = node.name
where node.unschedulable = false;
`,
			state: []string{
				"insert into node values ('n1', 4, false), ('n2', 8, true)",
				"insert into pod values ('p1', 'a', 3, false, null), ('p2', 'a', 3, false, null)",
			},
			items: []shapeItem{
				{"capacity", []string{"capacity cpu=4, name=n1"}, []string{"data node n1 via ready_node", "decision pod p1", "decision pod p2"}},
				{"schedulable", nil, []string{"decision pod p1", "data node n2"}},
				{"schedulable", nil, []string{"decision pod p2", "data node n2"}},
			},
			lines: []string{
				"capacity (line @capacity) for node n1 (cpu=4): pod p1 (cpu=3), p2 (cpu=3)",
				"schedulable (line @schedulable): pod p1; node n2 (unschedulable=true)",
				"schedulable (line @schedulable): pod p2; node n2 (unschedulable=true)",
			},
		},
		{
			name:   "a pushed-down join read by an in subquery",
			schema: string(scheduler),
			state: []string{
				"insert into node values ('n1', 8, false), ('n2', 8, true)",
				"insert into node_label values ('n2', 'gpu', 'yes')",
				"insert into pod values ('p1', 'a', 1, null)",
				"insert into pod_selector values ('p1', 'gpu', 'yes')",
			},
			items: []shapeItem{
				{"schedulable", nil, []string{"decision pod p1", "data node n2"}},
				{"node_selector", nil, []string{"decision pod p1", "data pod_selector (k=gpu, pod=p1, v=yes)", "data selector_nodes (node=n2, pod=p1) via selector_nodes"}},
			},
			lines: []string{
				"schedulable (line @schedulable): pod p1; node n2 (unschedulable=true)",
				"node_selector (line @node_selector): pod p1; pod_selector (k=gpu, pod=p1, v=yes); selector_nodes (node=n2, pod=p1)",
			},
		},
		{
			name: "a not exists subquery names the rows it reads",
			schema: shapeBase + `
-- @hard_constraint
create view spread as
select * from pod p
where not p.anti
   or not exists (select 1 from pod q where q.app = p.app and q.name <> p.name and q.node = p.node);
`,
			state: []string{
				"insert into node values ('n1', 4, false)",
				"insert into pod values ('a', 'web', 1, true, null), ('b', 'web', 1, false, null), ('c', 'db', 1, false, null)",
			},
			items: []shapeItem{{"spread", nil, []string{"decision pod a", "decision pod b"}}},
			lines: []string{"spread (line @spread): pod a (anti=true, app=web), b (anti=false, app=web)"},
		},
		{
			name: "a not in subquery names the rows it reads",
			schema: shapeBase + `
-- @hard_constraint
create view spread as
select * from pod p
where not p.anti
   or p.node not in (select q.node from pod q where q.app = p.app and q.name <> p.name);
`,
			state: []string{
				"insert into node values ('n1', 4, false)",
				"insert into pod values ('a', 'web', 1, true, null), ('b', 'web', 1, false, null), ('c', 'db', 1, false, null)",
			},
			items: []shapeItem{{"spread", nil, []string{"decision pod a", "decision pod b"}}},
			lines: []string{"spread (line @spread): pod a (anti=true, app=web), b (anti=false, app=web)"},
		},
		{
			name: "an exists subquery names the rows it reads",
			schema: shapeBase + shapeNodeCapacity + `
-- @hard_constraint
create view near_web as
select * from pod p
where not p.anti
   or exists (select 1 from pod q where q.app = 'web' and q.node = p.node);
`,
			state: []string{
				"insert into node values ('n1', 4, false), ('n2', 4, false)",
				"insert into pod values ('w', 'web', 3, false, null), ('x', 'cache', 3, true, null)",
			},
			items: []shapeItem{
				{"capacity", []string{"capacity name=n1"}, []string{"data node n1", "decision pod w", "decision pod x"}},
				{"capacity", []string{"capacity name=n2"}, []string{"data node n2", "decision pod w", "decision pod x"}},
				{"near_web", nil, []string{"decision pod w", "decision pod x"}},
			},
			lines: []string{
				"capacity (line @capacity) for node n1 (cpu=4): pod w (cpu=3), x (cpu=3)",
				"capacity (line @capacity) for node n2 (cpu=4): pod w (cpu=3), x (cpu=3)",
				"near_web (line @near_web): pod x (anti=true, app=cache), w (anti=false, app=web)",
			},
		},
		{
			name: "a user-defined aggregate against capacity",
			schema: shapeBase + shapeNodeCapacity + `
-- @hard_constraint
create view together as
select all_equal(pod.node) from pod group by pod.app;
`,
			opts: []weave.CompileOption{weave.WithAggregate(allEqual)},
			state: []string{
				"insert into node values ('n1', 4, false), ('n2', 4, false)",
				"insert into pod values ('a1', 'a', 3, false, null), ('a2', 'a', 3, false, null), ('b1', 'b', 1, false, null)",
			},
			items: []shapeItem{
				{"capacity", []string{"capacity name=n1"}, []string{"data node n1", "decision pod a1", "decision pod a2", "decision pod b1"}},
				{"capacity", []string{"capacity name=n2"}, []string{"data node n2", "decision pod a1", "decision pod a2", "decision pod b1"}},
				{"together", []string{"together app=a"}, []string{"decision pod a1", "decision pod a2"}},
			},
			lines: []string{
				"capacity (line @capacity) for node n1 (cpu=4): pod a1 (cpu=3), a2 (cpu=3), b1 (cpu=1)",
				"capacity (line @capacity) for node n2 (cpu=4): pod a1 (cpu=3), a2 (cpu=3), b1 (cpu=1)",
				"together (line @together) for app=a: pod a1 (app=a), a2 (app=a)",
			},
		},
		{
			name:   "bin-packing loads through a grouped view (filter form, min(case ...) objective)",
			schema: binpackTables + binpackCapacityFilter + binpackObjectiveCase,
			state:  binState,
			items: []shapeItem{
				{"constraint_capacity", []string{"bin_spare cpu_cap=10, id=1, mem_cap=10"}, append([]string{"data bin 1"}, items...)},
				{"constraint_capacity", []string{"bin_spare cpu_cap=10, id=2, mem_cap=10"}, append([]string{"data bin 2"}, items...)},
			},
			lines: []string{
				"constraint_capacity (line @constraint_capacity) for bin 1 (cpu_cap=10, mem_cap=10) in bin_spare: item 1 (cpu=6, mem=1), 2 (cpu=6, mem=1), 3 (cpu=6, mem=1)",
				"constraint_capacity (line @constraint_capacity) for bin 2 (cpu_cap=10, mem_cap=10) in bin_spare: item 1 (cpu=6, mem=1), 2 (cpu=6, mem=1), 3 (cpu=6, mem=1)",
			},
		},
		{
			name:   "bin-packing loads in a grouped hard view (having form)",
			schema: binpackTables + binpackCapacityHaving + binpackObjectiveViews,
			state:  binState,
			items: []shapeItem{
				{"constraint_capacity", []string{"constraint_capacity cpu_cap=10, id=1, mem_cap=10"}, append([]string{"data bin 1"}, items...)},
				{"constraint_capacity", []string{"constraint_capacity cpu_cap=10, id=2, mem_cap=10"}, append([]string{"data bin 2"}, items...)},
			},
			lines: []string{
				"constraint_capacity (line @constraint_capacity) for bin 1 (cpu_cap=10, mem_cap=10): item 1 (cpu=6, mem=1), 2 (cpu=6, mem=1), 3 (cpu=6, mem=1)",
				"constraint_capacity (line @constraint_capacity) for bin 2 (cpu_cap=10, mem_cap=10): item 1 (cpu=6, mem=1), 2 (cpu=6, mem=1), 3 (cpu=6, mem=1)",
			},
		},
		{
			name:   "a group of many candidates lists 16 and counts the rest",
			schema: shapeBase + shapeNodeCapacity,
			state: []string{
				"insert into node values ('n1', 19, false)",
				"insert into pod values " + strings.Join(many, ", "),
			},
			items: []shapeItem{{"capacity", []string{"capacity name=n1"}, []string{"data node n1",
				"decision pod p01", "decision pod p02", "decision pod p03", "decision pod p04", "decision pod p05", "decision pod p06", "decision pod p07", "decision pod p08",
				"decision pod p09", "decision pod p10", "decision pod p11", "decision pod p12", "decision pod p13", "decision pod p14", "decision pod p15", "decision pod p16",
				"more 4"}}},
			lines: []string{"capacity (line @capacity) for node n1 (cpu=19): pod p01 (cpu=1), p02 (cpu=1), p03 (cpu=1), p04 (cpu=1), p05 (cpu=1), p06 (cpu=1), p07 (cpu=1), p08 (cpu=1), " +
				"p09 (cpu=1), p10 (cpu=1), p11 (cpu=1), p12 (cpu=1), p13 (cpu=1), p14 (cpu=1), p15 (cpu=1), p16 (cpu=1); and 4 more rows"},
		},
	}
}

func TestExplanationShapes(t *testing.T) {
	for _, c := range shapeCases(t) {
		t.Run(c.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, db *sql.DB) { explainShape(t, db, c) })
		})
	}
}

func explainShape(t *testing.T, db *sql.DB, c shapeCase) {
	m, err := weave.Compile(c.schema, c.opts...)
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
	if res.Status != weave.Infeasible || res.Explanation == nil {
		t.Fatalf("status %s, explanation %v", res.Status, res.Explanation)
	}
	e := res.Explanation
	text := e.String()
	t.Logf("\n%s", text)
	if !e.Minimal {
		t.Errorf("explanation not proven minimal")
	}
	// The items, as data.
	var got, want []string
	for _, ec := range e.Constraints {
		for _, it := range ec.Items {
			got = append(got, describeItem(ec.View, it))
		}
	}
	for _, it := range c.items {
		rows := slices.Clone(it.rows)
		slices.Sort(rows)
		want = append(want, it.view+" | "+strings.Join(it.groups, "; ")+" | "+strings.Join(rows, "; "))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("items:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	// The text: one item a line.
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")[1:]
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "  ")
	}
	var wantLines []string
	for _, l := range c.lines {
		for _, v := range viewsOf(c.schema) {
			l = strings.ReplaceAll(l, "(line @"+v+")", fmt.Sprintf("(line %d)", lineOf(t, c.schema, v)))
		}
		wantLines = append(wantLines, l)
	}
	if !slices.Equal(lines, wantLines) {
		t.Errorf("text:\n  %s\nwant:\n  %s", strings.Join(lines, "\n  "), strings.Join(wantLines, "\n  "))
	}
	// The per-view summary holds every item's rows and groups, and the
	// JSON form carries the items.
	for _, ec := range e.Constraints {
		for _, it := range ec.Items {
			for _, r := range it.Rows {
				if !slices.ContainsFunc(ec.Rows, func(x weave.ExplainedRow) bool {
					return x.Table == r.Table && x.Key == r.Key && fmt.Sprint(x.Row) == fmt.Sprint(r.Row)
				}) {
					t.Errorf("%s: row %s %s of an item is not among the view's rows", ec.View, r.Table, r.Key)
				}
			}
			for _, g := range it.Groups {
				if !slices.ContainsFunc(ec.Groups, func(x weave.Row) bool { return fmt.Sprint(x) == fmt.Sprint(g.Key) }) {
					t.Errorf("%s: group %v of an item is not among the view's groups", ec.View, g.Key)
				}
			}
		}
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var back weave.Explanation
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.String() != text {
		t.Errorf("the JSON form does not give the same text:\n%s\nwant\n%s", back.String(), text)
	}
}

// describeItem is an item as shapeItem writes it.
func describeItem(view string, it weave.ExplainedItem) string {
	var groups, rows []string
	for _, g := range it.Groups {
		keys := make([]string, 0, len(g.Key))
		for k, v := range g.Key {
			keys = append(keys, fmt.Sprintf("%s=%v", k, v))
		}
		slices.Sort(keys)
		groups = append(groups, g.View+" "+strings.Join(keys, ", "))
	}
	for _, r := range it.Rows {
		s := r.Role + " " + r.Table + " " + r.Key
		if r.Key == "" {
			keys := make([]string, 0, len(r.Row))
			for k, v := range r.Row {
				keys = append(keys, fmt.Sprintf("%s=%v", k, v))
			}
			slices.Sort(keys)
			s = r.Role + " " + r.Table + " (" + strings.Join(keys, ", ") + ")"
		}
		if r.View != "" {
			s += " via " + r.View
		}
		rows = append(rows, s)
	}
	if it.MoreRows > 0 {
		rows = append(rows, fmt.Sprintf("more %d", it.MoreRows))
	}
	slices.Sort(rows)
	return view + " | " + strings.Join(groups, "; ") + " | " + strings.Join(rows, "; ")
}

// viewsOf lists the names of the views a schema creates.
func viewsOf(schema string) []string {
	var out []string
	for _, l := range strings.Split(schema, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "create view "); ok {
			out = append(out, strings.Fields(rest)[0])
		}
	}
	return out
}

// lineOf is the line of the schema where a view is created.
func lineOf(t *testing.T, schema, view string) int {
	for i, l := range strings.Split(schema, "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "create" && f[1] == "view" && f[2] == view {
			return i + 1
		}
	}
	t.Fatalf("no view %s", view)
	return 0
}
