package weave_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/weavesql/weave"
	"github.com/weavesql/weave/cp"
	"github.com/weavesql/weave/internal/testdb"
	_ "modernc.org/sqlite"
)

// eachDB runs f as a subtest on every test database (weave.Databases):
// SQLite always, PostgreSQL when WEAVE_TEST_POSTGRES is set.
func eachDB(t *testing.T, f func(t *testing.T, db *sql.DB)) {
	t.Helper()
	for _, d := range weave.Databases() {
		t.Run(d.Name, func(t *testing.T) { f(t, d.Open(t)) })
	}
}

func mustExec(t testing.TB, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// paperCluster is a random cluster for the paper's schema (testdata/paper.sql).
type paperCluster struct {
	cpu          map[string]int64 // node → capacity
	schedulable  map[string]bool
	labels       map[string]map[string]bool // node → "k=v"
	podCPU       map[string]int64
	podSelectors map[string][]string // pod → "k=v" (affinity when non-empty)
}

func newPaperCluster(t *testing.T, db *sql.DB, rng *rand.Rand, nodes, pods int) *paperCluster {
	c := &paperCluster{cpu: map[string]int64{}, schedulable: map[string]bool{}, labels: map[string]map[string]bool{},
		podCPU: map[string]int64{}, podSelectors: map[string][]string{}}
	for i := 0; i < nodes; i++ {
		n := fmt.Sprintf("node-%02d", i)
		unsched, mem, disk, ready := rng.Intn(8) == 0, rng.Intn(10) == 0, rng.Intn(10) == 0, rng.Intn(10) != 0
		c.cpu[n] = int64(8 + rng.Intn(9))
		c.schedulable[n] = !unsched && !mem && !disk && ready
		mustExec(t, db, fmt.Sprintf("insert into node values ('%s', %v, %v, %v, %v, %d)", n, unsched, mem, disk, ready, c.cpu[n]))
		c.labels[n] = map[string]bool{}
		zone := fmt.Sprintf("zone=z%d", i%3)
		c.labels[n][zone] = true
		mustExec(t, db, fmt.Sprintf("insert into node_label values ('%s', 'zone', 'z%d')", n, i%3))
		if rng.Intn(3) == 0 {
			c.labels[n]["disk=ssd"] = true
			mustExec(t, db, fmt.Sprintf("insert into node_label values ('%s', 'disk', 'ssd')", n))
		}
	}
	for i := 0; i < pods; i++ {
		p := fmt.Sprintf("pod-%03d", i)
		c.podCPU[p] = int64(1 + rng.Intn(4))
		affinity := rng.Intn(4) == 0
		mustExec(t, db, fmt.Sprintf("insert into pending_pod values ('%s', 'pending', 'default', null, %d, %v)", p, c.podCPU[p], affinity))
		if affinity {
			sel := []string{"disk=ssd", fmt.Sprintf("zone=z%d", rng.Intn(3))}[rng.Intn(2)]
			k, v, _ := strings.Cut(sel, "=")
			c.podSelectors[p] = []string{sel}
			mustExec(t, db, fmt.Sprintf("insert into pod_node_selector values ('%s', '%s', '%s')", p, k, v))
		}
	}
	return c
}

// check validates a solved pending_pod table with a plain filter over the
// same state, independent of the compiler, and returns the load-balance
// objective computed by hand.
func (c *paperCluster) check(t *testing.T, tab *weave.Table) int64 {
	t.Helper()
	if tab == nil || len(tab.Rows) != len(c.podCPU) {
		t.Fatalf("solved table has %d rows, want %d", len(tab.Rows), len(c.podCPU))
	}
	load := map[string]int64{}
	for _, r := range tab.Rows {
		pod, node := r["pod_name"].(string), r["node_name"].(string)
		if _, ok := c.cpu[node]; !ok {
			t.Fatalf("pod %s placed on unknown node %q", pod, node)
		}
		if !c.schedulable[node] {
			t.Errorf("pod %s placed on unschedulable node %s", pod, node)
		}
		for _, sel := range c.podSelectors[pod] {
			if !c.labels[node][sel] {
				t.Errorf("pod %s needs %s but node %s lacks it", pod, sel, node)
			}
		}
		load[node] += c.podCPU[pod]
	}
	best := int64(1) << 62
	for n, l := range load {
		best = min(best, c.cpu[n]-l)
	}
	return best
}

func compilePaper(t testing.TB) *weave.Model {
	t.Helper()
	src, err := os.ReadFile("testdata/paper.sql")
	if err != nil {
		t.Fatal(err)
	}
	m, err := weave.Compile(string(src))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPaperExamplesEndToEnd compiles every SQL example of the paper
// unchanged, solves random clusters with verification on, and checks each
// placement with an independent filter.
func TestPaperExamplesEndToEnd(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			eachDB(t, func(t *testing.T, db *sql.DB) { paperEndToEnd(t, db, seed) })
		})
	}
}

func paperEndToEnd(t *testing.T, db *sql.DB, seed int64) {
	{
		{
			m := compilePaper(t)
			ctx := context.Background()
			if err := m.CreateSchema(ctx, db); err != nil {
				t.Fatal(err)
			}
			c := newPaperCluster(t, db, rand.New(rand.NewSource(seed)), 12, 30)
			if err := m.Connect(db); err != nil {
				t.Fatal(err)
			}
			res, err := m.Solve(ctx, weave.SolveOptions{Timeout: 2 * time.Second, Seed: seed, Verify: true})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Status.HasSolution() {
				t.Fatalf("status %s", res.Status)
			}
			want := c.check(t, res.Table("pending_pod"))
			if got := res.Soft["constraint_load_balance_cpu"]; got != want {
				t.Errorf("soft value %d, recomputed by hand %d", got, want)
			}
			if res.Objective == nil || *res.Objective != want {
				t.Errorf("objective %v, want %d", res.Objective, want)
			}
			if res.Stats.Variables == 0 || res.Stats.Constraints == 0 || res.Stats.Rows["node"] != 12 {
				t.Errorf("stats not filled: %+v", res.Stats)
			}
		}
	}
}

func TestInfeasibleIsAStatus(t *testing.T) { eachDB(t, infeasibleIsAStatus) }

func infeasibleIsAStatus(t *testing.T, db *sql.DB) {
	m := compilePaper(t)
	ctx := context.Background()
	if err := m.CreateSchema(ctx, db); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db,
		"insert into node values ('n1', false, false, false, true, 10)",
		"insert into node values ('n2', true, false, false, true, 10)",
		"insert into node_label values ('n2', 'gpu', 'yes')",
		"insert into pending_pod values ('p1', 'pending', 'default', null, 1, true)",
		"insert into pod_node_selector values ('p1', 'gpu', 'yes')")
	if err := m.Connect(db); err != nil {
		t.Fatal(err)
	}
	res, err := m.Solve(ctx, weave.SolveOptions{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != weave.Infeasible || res.Table("pending_pod") != nil || res.Objective != nil {
		t.Fatalf("a pod whose only candidate node is unschedulable: got %s, tables %v", res.Status, res.Tables)
	}
}

func TestErrorsAreTyped(t *testing.T) {
	ctx := context.Background()
	t.Run("solve before connect", func(t *testing.T) {
		m := compilePaper(t)
		if _, err := m.Solve(ctx, weave.SolveOptions{}); !errors.Is(err, weave.ErrNotConnected) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a missing table is named", func(t *testing.T) {
		eachDB(t, func(t *testing.T, db *sql.DB) {
			m := compilePaper(t)
			mustExec(t, db, "create table node (name varchar(100) primary key, unschedulable boolean, memory_pressure boolean, disk_pressure boolean, ready boolean, available_cpu_capacity integer)")
			err := m.Connect(db)
			if !errors.Is(err, weave.ErrSchemaMismatch) || !strings.Contains(err.Error(), "pending_pod") {
				t.Fatalf("got %v", err)
			}
		})
	})
	t.Run("a missing column and a wrong type are named", func(t *testing.T) {
		eachDB(t, func(t *testing.T, db *sql.DB) {
			m := compilePaper(t)
			if err := m.CreateSchema(ctx, db); err != nil {
				t.Fatal(err)
			}
			mustExec(t, db, "drop table node",
				"create table node (name varchar(100) primary key, unschedulable boolean, memory_pressure boolean, disk_pressure boolean, ready varchar(5))")
			err := m.Connect(db)
			if !errors.Is(err, weave.ErrSchemaMismatch) || !strings.Contains(err.Error(), "node has no column available_cpu_capacity") ||
				!strings.Contains(err.Error(), "node.ready has type VARCHAR") {
				t.Fatalf("got %v", err)
			}
		})
	})
	t.Run("a compile error carries line and column", func(t *testing.T) {
		_, err := weave.Compile("create table t (a integer primary key);\n-- @hard_constraint\ncreate view v as select * from t where b = 1;")
		var list weave.CompileErrors
		if !errors.Is(err, weave.ErrCompile) || !errors.As(err, &list) || list[0].Line != 3 || list[0].View != "v" || !strings.Contains(list[0].Msg, "unknown column b") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a relation that cannot be read mid-solve is named and the next solve works", func(t *testing.T) {
		// The snapshot is read while the model is grounded: the tables are
		// read, grounding starts, and the view it waits for fails.
		eachDB(t, func(t *testing.T, db *sql.DB) {
			m := compilePaper(t)
			if err := m.CreateSchema(ctx, db); err != nil {
				t.Fatal(err)
			}
			mustExec(t, db, "insert into node values ('n1', false, false, false, true, 10)",
				"insert into node_label values ('n1', 'gpu', 'yes')",
				"insert into pending_pod values ('p1', 'pending', 'default', null, 1, true)",
				"insert into pod_node_selector values ('p1', 'gpu', 'yes')")
			if err := m.Connect(db); err != nil {
				t.Fatal(err)
			}
			mustExec(t, db, "drop view candidate_nodes_for_pods")
			res, err := m.Solve(ctx, weave.SolveOptions{})
			if err == nil || res != nil || !strings.Contains(err.Error(), "reading candidate_nodes_for_pods") ||
				errors.Is(err, weave.ErrData) || errors.Is(err, weave.ErrSolver) {
				t.Fatalf("view dropped after Connect: got %v, %v; want the read's error naming the view", res, err)
			}
			mustExec(t, db, `create view candidate_nodes_for_pods as
select pod_node_selector.pod_name as pod_name, node_label.node_name as node_name
from pod_node_selector join node_label
  on pod_node_selector.label_key = node_label.label_key and pod_node_selector.label_value = node_label.label_value`)
			res, err = m.Solve(ctx, weave.SolveOptions{Verify: true})
			if err != nil || res.Status != weave.Optimal || res.Table("pending_pod").Rows[0]["node_name"] != "n1" {
				t.Fatalf("view restored: got %+v, %v", res, err)
			}
			if res.Stats.Rows["candidate_nodes_for_pods"] != 1 || res.Stats.Fetch <= 0 || res.Stats.Ground <= 0 {
				t.Fatalf("stats: rows %v, fetch %v, ground %v", res.Stats.Rows, res.Stats.Fetch, res.Stats.Ground)
			}
			// The snapshot's statements are prepared at Connect: a view
			// redefined since is read as it is now.
			mustExec(t, db, "insert into node values ('n2', false, false, false, true, 10)",
				"drop view candidate_nodes_for_pods",
				`create view candidate_nodes_for_pods as
select pod_node_selector.pod_name as pod_name, node.name as node_name
from pod_node_selector join node on node.name = 'n2'`)
			res, err = m.Solve(ctx, weave.SolveOptions{Verify: true})
			if err != nil || res.Table("pending_pod").Rows[0]["node_name"] != "n2" {
				t.Fatalf("view redefined to name n2: got %+v, %v", res, err)
			}
		})
	})
	t.Run("an empty domain is bad data", func(t *testing.T) {
		eachDB(t, func(t *testing.T, db *sql.DB) {
			m := compilePaper(t)
			if err := m.CreateSchema(ctx, db); err != nil {
				t.Fatal(err)
			}
			mustExec(t, db, "insert into pending_pod values ('p1', 'pending', 'default', null, 1, false)")
			if err := m.Connect(db); err != nil {
				t.Fatal(err)
			}
			_, err := m.Solve(ctx, weave.SolveOptions{})
			if !errors.Is(err, weave.ErrData) || !strings.Contains(err.Error(), "pending_pod.node_name") {
				t.Fatalf("no nodes at all: got %v", err)
			}
		})
	})
}

// allEqual is a user-defined constraint aggregate: the values of a group
// are all equal (affinity).
var allEqual = weave.Aggregate{
	Name: "all_equal",
	Post: func(m *cp.Model, values []cp.LinearExpr, present []cp.Lit) []cp.Constraint {
		var out []cp.Constraint
		for i := 1; i < len(values); i++ {
			var d cp.LinearExpr
			d.AddExpr(values[0], 1).AddExpr(values[i], -1)
			out = append(out, m.AddEquality(d, 0).OnlyEnforceIf(present[0], present[i]))
		}
		return out
	},
	Holds: func(values []any) bool {
		for _, v := range values {
			if v != values[0] {
				return false
			}
		}
		return true
	},
}

const affinitySchema = `
create table node (name varchar(10) primary key, cpu integer not null);
-- @variable_columns (node)
create table pod (name varchar(10) primary key, app varchar(10) not null, cpu integer not null,
                  node varchar(10) references node(name));
-- @hard_constraint
create view together as select all_equal(node) from pod group by app;
-- @hard_constraint
create view apart as select all_different(node) from pod where name in ('a1', 'b1', 'c1');
-- @hard_constraint
create view capacity as select node.name from node join pod on pod.node = node.name
group by node.name having sum(pod.cpu) <= node.cpu;
`

func TestUserDefinedAggregate(t *testing.T) {
	if _, err := weave.Compile(affinitySchema); err == nil || !strings.Contains(err.Error(), "unknown function all_equal") {
		t.Fatalf("without registering all_equal: got %v", err)
	}
	eachDB(t, userDefinedAggregate)
}

func userDefinedAggregate(t *testing.T, db *sql.DB) {
	m, err := weave.Compile(affinitySchema, weave.WithAggregate(allEqual))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := m.CreateSchema(ctx, db); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db,
		"insert into node values ('n1', 4), ('n2', 5), ('n3', 3)",
		"insert into pod values ('a1', 'a', 2, null), ('a2', 'a', 1, null), ('b1', 'b', 2, null), ('b2', 'b', 2, null), ('c1', 'c', 3, null)")
	if err := m.Connect(db); err != nil {
		t.Fatal(err)
	}
	res, err := m.Solve(ctx, weave.SolveOptions{Timeout: 2 * time.Second, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Status.HasSolution() {
		t.Fatalf("status %s", res.Status)
	}
	at := map[string]string{}
	for _, r := range res.Table("pod").Rows {
		at[r["name"].(string)] = r["node"].(string)
	}
	if at["a1"] != at["a2"] || at["b1"] != at["b2"] {
		t.Errorf("apps split across nodes: %v", at)
	}
	// a1, b1 and c1 are apart, so the three apps occupy three nodes.
	if at["a1"] == at["b1"] || at["c1"] == at["a1"] || at["c1"] == at["b1"] {
		t.Errorf("expected three distinct nodes: %v", at)
	}
}

// CreateSchema indexes the columns compared by equality in pushed-down
// views: an unindexed correlated lookup costs seconds at 100k rows.
func TestCreateSchemaIndexesLookups(t *testing.T) {
	m := compilePaper(t)
	db := testdb.OpenSQLite(t)
	if err := m.CreateSchema(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query("select tbl_name, sql from sqlite_master where type = 'index' and name like 'weave_ix_%'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]bool{}
	for rows.Next() {
		var tbl, stmt string
		if err := rows.Scan(&tbl, &stmt); err != nil {
			t.Fatal(err)
		}
		got[tbl] = true
	}
	// candidate_nodes_for_pods joins pod_node_selector and node_label on
	// label key and value.
	if !got["pod_node_selector"] || !got["node_label"] {
		t.Fatalf("lookup indexes on %v; want pod_node_selector and node_label", got)
	}
	// Creating the schema twice fails on the tables, not silently.
	if err := m.CreateSchema(context.Background(), db); err == nil {
		t.Fatal("a second CreateSchema on the same database must fail")
	}
}

// FirstSolution stops at the first valid placement: every hard constraint
// holds (the database checks it), optimality is not claimed unless proven.
func TestFirstSolution(t *testing.T) {
	m := compilePaper(t)
	db := testdb.OpenSQLite(t)
	ctx := context.Background()
	if err := m.CreateSchema(ctx, db); err != nil {
		t.Fatal(err)
	}
	c := newPaperCluster(t, db, rand.New(rand.NewSource(9)), 12, 30)
	if err := m.Connect(db); err != nil {
		t.Fatal(err)
	}
	res, err := m.Solve(ctx, weave.SolveOptions{FirstSolution: true, Verify: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Status.HasSolution() {
		t.Fatalf("status %s", res.Status)
	}
	if got, want := res.Soft["constraint_load_balance_cpu"], c.check(t, res.Table("pending_pod")); got != want {
		t.Errorf("soft value %d, recomputed %d", got, want)
	}
	if res.Stats.Views["constraint_node_predicates"].Ground <= 0 {
		t.Errorf("no grounding time per view: %+v", res.Stats.Views)
	}
}
