package weave_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weavesql/weave"
	"github.com/weavesql/weave/internal/testdb"
)

// The paper's encoding tables (§4, Figs. 8-10), reproduced on Weave's own
// grounded models: each optimisation is switched off through
// weave.Encoding and the model sizes compared.

const sumSchema = `
create table val (v integer not null primary key);
-- @variable_columns (x)
create table item (id integer not null primary key, x integer not null references val(v));
-- @soft_constraint
create view above_ten as select count(*) from item where x > 10;
`

const capacitySchema = `
create table node (name varchar(20) not null primary key, cpu integer not null);
-- @variable_columns (node_name)
create table pod (name varchar(20) not null primary key, cpu integer not null, node_name varchar(20) references node(name));
create view spare_capacity_per_node as
select node.cpu - sum(pod.cpu) as spare from node join pod on pod.node_name = node.name group by node.name;
-- @hard_constraint
create view capacity as select * from spare_capacity_per_node where spare >= 0;
-- @soft_constraint
create view balance as select min(spare) from spare_capacity_per_node;
`

const pairwiseSchema = `
create table slot (s integer not null primary key);
-- @variable_columns (x)
create table item (id integer not null primary key, x integer not null references slot(s));
-- @hard_constraint
create view distinct_slots as
select * from item a join item b on a.id < b.id where a.x <> b.x;
`

type encodingCase struct {
	name   string
	schema string
	state  func(b *strings.Builder)
}

func encodingStats(t testing.TB, schema string, enc weave.Encoding, state string) weave.Stats {
	t.Helper()
	m, err := weave.Compile(schema, weave.WithEncoding(enc))
	if err != nil {
		t.Fatal(err)
	}
	db := testdb.OpenSQLite(t)
	ctx := context.Background()
	if err := m.CreateSchema(ctx, db); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, state)
	if err := m.Connect(db); err != nil {
		t.Fatal(err)
	}
	res, err := m.Solve(ctx, weave.SolveOptions{Timeout: time.Second, NoExplain: true})
	if err != nil {
		t.Fatal(err)
	}
	// The sizes come from grounding; the solve only has to be sound (a
	// slow machine or the race detector may leave it without a solution).
	if res.Status == weave.Infeasible {
		t.Fatalf("status %s", res.Status)
	}
	return res.Stats
}

func sumState() string {
	var b strings.Builder
	b.WriteString("insert into val values (0)")
	for v := 1; v <= 20; v++ {
		fmt.Fprintf(&b, ", (%d)", v)
	}
	b.WriteString("; insert into item values (0, 0)")
	for i := 1; i < 1000; i++ {
		fmt.Fprintf(&b, ", (%d, 0)", i)
	}
	return b.String()
}

func capacityState(pods, nodes int) string {
	var b strings.Builder
	b.WriteString("insert into node values ('n0', 100)")
	for i := 1; i < nodes; i++ {
		fmt.Fprintf(&b, ", ('n%d', %d)", i, 60+i%40)
	}
	b.WriteString("; insert into pod values ('p0', 5, null)")
	for i := 1; i < pods; i++ {
		fmt.Fprintf(&b, ", ('p%d', %d, null)", i, 1+i%9)
	}
	return b.String()
}

func pairwiseState(n int) string {
	var b strings.Builder
	b.WriteString("insert into slot values (0)")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, ", (%d)", i)
	}
	b.WriteString("; insert into item values (0, 0)")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, ", (%d, 0)", i)
	}
	return b.String()
}

// TestEncodingTables asserts the shape of each optimised encoding and that
// its naive counterpart is the larger model, and logs both sizes.
func TestEncodingTables(t *testing.T) {
	t.Run("sum of predicates over 1,000 variables", func(t *testing.T) {
		opt := encodingStats(t, sumSchema, weave.Encoding{}, sumState())
		naive := encodingStats(t, sumSchema, weave.Encoding{NaiveSums: true}, sumState())
		t.Logf("sum of predicate: %d vars, %d constraints; sum with filter: %d vars, %d constraints",
			opt.Variables, opt.Constraints, naive.Variables, naive.Constraints)
		// 1,000 decisions and one literal [x > 10] each; nothing per row beyond that.
		if v := opt.Views["above_ten"].Variables; v > 1000 {
			t.Errorf("sum of predicates added %d variables for 1,000 rows", v)
		}
		if naive.Variables < opt.Variables+1000 || naive.Constraints < opt.Constraints+2000 {
			t.Errorf("sum with filter should add an auxiliary and two constraints per row: %+v vs %+v", naive.ByKind, opt.ByKind)
		}
	})
	t.Run("capacity view at 100 pods x 50 nodes", func(t *testing.T) {
		state := capacityState(100, 50)
		opt := encodingStats(t, capacitySchema, weave.Encoding{}, state)
		naive := encodingStats(t, capacitySchema, weave.Encoding{NoLoads: true}, state)
		t.Logf("loads + bin packing: %d vars, %d constraints %v; literal per pair: %d vars, %d constraints %v",
			opt.Variables, opt.Constraints, opt.ByKind, naive.Variables, naive.Constraints, naive.ByKind)
		// 100 decisions, a load and a count per node, a few per node for the
		// min: no variable per (pod, node) pair.
		if opt.Variables > 100+50*6 {
			t.Errorf("optimised capacity model has %d variables; want no variable per (pod, node) pair", opt.Variables)
		}
		if opt.ByKind["bin_packing"] == 0 || opt.ByKind["eq_lit"] != 0 {
			t.Errorf("optimised model should use bin packing and no pair literals: %v", opt.ByKind)
		}
		if naive.Variables < 100*50 {
			t.Errorf("literal-per-pair model has only %d variables", naive.Variables)
		}
	})
	t.Run("all_different vs pairwise over 100 variables", func(t *testing.T) {
		state := pairwiseState(100)
		opt := encodingStats(t, pairwiseSchema, weave.Encoding{}, state)
		naive := encodingStats(t, pairwiseSchema, weave.Encoding{Pairwise: true}, state)
		t.Logf("all_different: %d constraints %v; pairwise: %d constraints %v", opt.Constraints, opt.ByKind, naive.Constraints, naive.ByKind)
		if opt.ByKind["all_different"] != 1 || opt.ByKind["not_equal"] != 0 {
			t.Errorf("optimised: %v", opt.ByKind)
		}
		if naive.ByKind["not_equal"] != 4950 {
			t.Errorf("pairwise: %v, want 4950 not_equal", naive.ByKind)
		}
	})
}

// BenchmarkEncodings measures solve time per encoding on the same models.
func BenchmarkEncodings(b *testing.B) {
	cases := []struct {
		name   string
		schema string
		state  string
		naive  weave.Encoding
	}{
		{"sum", sumSchema, sumState(), weave.Encoding{NaiveSums: true}},
		{"capacity", capacitySchema, capacityState(100, 50), weave.Encoding{NoLoads: true, NoBinPacking: true}},
		{"alldiff", pairwiseSchema, pairwiseState(100), weave.Encoding{Pairwise: true}},
	}
	for _, c := range cases {
		for _, v := range []struct {
			label string
			enc   weave.Encoding
		}{{"optimized", weave.Encoding{}}, {"naive", c.naive}} {
			b.Run(c.name+"/"+v.label, func(b *testing.B) {
				var st weave.Stats
				for i := 0; i < b.N; i++ {
					st = encodingStats(b, c.schema, v.enc, c.state)
				}
				b.ReportMetric(float64(st.Variables), "vars")
				b.ReportMetric(float64(st.Constraints), "constraints")
				b.ReportMetric(float64(st.Ground.Microseconds())/1000, "ground-ms")
				b.ReportMetric(float64(st.Solve.Microseconds())/1000, "solve-ms")
			})
		}
	}
}

// TestCliquesAfterGrounding: pairwise inequalities that form a clique only
// once the rows are known (here through an extra join condition the IR
// rewrite does not match) become one all_different.
func TestCliquesAfterGrounding(t *testing.T) {
	schema := `
create table slot (s integer not null primary key);
-- @variable_columns (x)
create table item (id integer not null primary key, grp integer not null, w integer not null, x integer not null references slot(s));
-- @hard_constraint
create view apart as
select * from item a join item b on a.grp = b.grp and a.id <> b.id and a.w > 0
where a.x <> b.x;
`
	state := "insert into slot values (0), (1), (2), (3), (4); insert into item values (1, 1, 1, 0), (2, 1, 1, 0), (3, 1, 1, 0), (4, 1, 1, 0), (5, 2, 1, 0), (6, 2, 1, 0)"
	st := encodingStats(t, schema, weave.Encoding{}, state)
	if st.ByKind["all_different"] != 1 || st.ByKind["not_equal"] != 1 {
		t.Errorf("want one all_different (the 4-clique) and one inequality (the pair): %v", st.ByKind)
	}
	naive := encodingStats(t, schema, weave.Encoding{Pairwise: true}, state)
	if naive.ByKind["all_different"] != 0 || naive.ByKind["not_equal"] != 14 {
		t.Errorf("pairwise encoding: %v (want 14 inequalities, both directions of 6 + 1 pairs)", naive.ByKind)
	}
}

// A single-column key on a decision column is an all_different: the
// solver never proposes what the database would reject.
func TestUniqueDecisionColumn(t *testing.T) {
	schemas := map[string]string{
		"unique": `
create table slot (s integer not null primary key);
-- @variable_columns (slot)
create table task (name varchar(10) not null primary key, slot integer not null unique references slot(s));
-- @soft_constraint
create view low as select 0 - sum(slot) from task;
`,
		"primary key": `
create table slot (s integer not null primary key);
-- @variable_columns (slot)
create table task (slot integer not null primary key references slot(s), name varchar(10) not null);
-- @soft_constraint
create view low as select 0 - sum(slot) from task;
`,
	}
	for key, schema := range schemas {
		m, err := weave.Compile(schema)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		db := testdb.OpenSQLite(t)
		ctx := context.Background()
		if err := m.CreateSchema(ctx, db); err != nil {
			t.Fatal(err)
		}
		mustExec(t, db, "insert into slot values (1), (2), (3), (4)", "insert into task (name, slot) values ('a', 1), ('b', 2), ('c', 3)")
		if err := m.Connect(db); err != nil {
			t.Fatal(err)
		}
		res, err := m.Solve(ctx, weave.SolveOptions{Timeout: 2 * time.Second, Verify: true})
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		// Distinct slots, lowest first: 1 + 2 + 3.
		if res.Status != weave.Optimal || *res.Objective != -6 || res.Stats.ByKind["all_different"] != 1 {
			t.Errorf("%s: status %s objective %v kinds %v", key, res.Status, res.Objective, res.Stats.ByKind)
		}
	}
}

// TestDisjunctionOverOneColumnIsADomain: "x is null or exists (a stored
// row at x)" is x ∈ {NULL, the rows' values}, a domain restriction, not
// a clause over a literal per value (which left every other value in x's
// domain for the search to try: required affinity to bound pods cost the
// scheduler hundreds of conflicts per batch).
func TestDisjunctionOverOneColumnIsADomain(t *testing.T) {
	schema := `
create table node (name varchar(10) not null primary key);
create table holder (node_name varchar(10) not null references node(name));
-- @variable_columns (node_name)
create table pod (name varchar(10) not null primary key, node_name varchar(10) references node(name));
-- @hard_constraint
create view near_holder as
select * from pod
where pod.node_name is null
   or exists (select 1 from holder h where h.node_name = pod.node_name);
-- @soft_constraint
create view placed as select count(*) from pod where pod.node_name is not null;
`
	state := "insert into node values ('a'), ('b'), ('c'), ('d'); insert into holder values ('b'), ('d'), ('d'); insert into pod (name) values ('p1'), ('p2'), ('p3')"
	st := encodingStats(t, schema, weave.Encoding{}, state)
	v := st.Views["near_holder"]
	if v.ByKind["membership"] != 3 || v.ByKind["bool_or"] != 0 || v.ByKind["eq_lit"] != 0 {
		t.Errorf("want one membership per pod and no clause or literal: %v", v.ByKind)
	}
}
