package weave

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/weavesql/weave/internal/ground"
)

// A solve with NoExplain reads, after the first, only the relations the
// previous solve's grounder asked for, and the others when its grounder
// asks for them: here label is read by the join of a view whose first
// relation (wants) is empty in the first solves. When wants gets a row,
// label is read on demand and its constraint holds; it is then read ahead
// for ground.AskedLately solves; a solve that may explain reads every
// relation.
func TestLazySnapshotReadsWhatTheGrounderAsksFor(t *testing.T) {
	const schema = `
create table node (name varchar(10) primary key, cpu integer not null);
create table label (node varchar(10) not null, value varchar(10) not null, primary key (node, value));
create table wants (pod varchar(10) primary key, value varchar(10) not null);
-- @variable_columns (node nullable)
create table pod (name varchar(10) primary key, cpu integer not null, node varchar(10) references node(name));
-- @hard_constraint
create view wanted as
select * from pod join wants w on w.pod = pod.name
where pod.node is null or pod.node in (select l.node from label l where l.value = w.value);
-- @hard_constraint
create view fits as
select node.name from pod join node on pod.node = node.name
group by node.name, node.cpu having sum(pod.cpu) <= node.cpu;
-- @soft_constraint
create view placed as select count(*) from pod where pod.node is not null;
`
	for _, d := range Databases() {
		t.Run(d.Name, func(t *testing.T) { lazySnapshot(t, schema, d.Open(t)) })
	}
}

func lazySnapshot(t *testing.T, schema string, db *sql.DB) {
	m, err := Compile(schema)
	if err != nil {
		t.Fatal(err)
	}
	// The first solve knows nothing of the grounder: it reads everything
	// ahead (until the model is grounded).
	if !m.plan.ReadsAhead("label") {
		t.Fatal("before any solve, label is not read ahead")
	}
	first := solveVerified(t, m, db, "insert into node values ('n1', 4), ('n2', 4)",
		"insert into label values ('n1', 'ssd'), ('n2', 'hdd')",
		"insert into pod values ('a', 3, null)")
	if _, ok := first.Stats.Rows["wants"]; !ok {
		t.Fatalf("first solve read %v, not wants", first.Stats.Rows)
	}
	ctx := context.Background()
	exec := func(stmts ...string) {
		t.Helper()
		for _, s := range stmts {
			if _, err := db.ExecContext(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	solve := func(noExplain bool) *Result {
		t.Helper()
		res, err := m.Solve(ctx, SolveOptions{Timeout: 10 * time.Second, Seed: 1, Workers: 1, Verify: true, NoExplain: noExplain})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Status.HasSolution() {
			t.Fatalf("status %s", res.Status)
		}
		return res
	}
	read := func(res *Result, rel string) bool {
		_, ok := res.Stats.Rows[rel]
		return ok
	}
	// The grounder did not ask for label (wants is empty): left unread.
	res := solve(true)
	if read(res, "label") {
		t.Fatalf("second solve read label (%v): the grounder never asked for it", res.Stats.Rows)
	}
	if !read(res, "wants") || !read(res, "node") {
		t.Fatalf("second solve did not read what its grounder asked for: %v", res.Stats.Rows)
	}
	// Now a pod wants an ssd node: label is read when asked for, and the
	// pod goes to n1, the only ssd node (fits alone would allow n2).
	exec("insert into pod values ('b', 1, null)", "insert into wants values ('b', 'ssd')")
	res = solve(true)
	if got := res.Stats.Rows["label"]; got != 2 {
		t.Fatalf("label: %d rows read, want 2 (asked for on demand); read %v", got, res.Stats.Rows)
	}
	for _, row := range res.Table("pod").Rows {
		if row["name"] == "b" && row["node"] != "n1" {
			t.Fatalf("pod b on %v, want n1 (the ssd node)", row["node"])
		}
	}
	// Asked for lately, label is read ahead (if the fetch gets to it
	// before the model is grounded) while wants is empty again, by the
	// AskedLately solves after the last that asked for it; then never.
	exec("delete from wants")
	for i := 1; i <= ground.AskedLately+1; i++ {
		if got, want := m.plan.ReadsAhead("label"), i <= ground.AskedLately; got != want {
			t.Fatalf("solve %d after the last that asked for label: reads it ahead %v, want %v", i, got, want)
		}
		res := solve(true)
		if i > ground.AskedLately && read(res, "label") {
			t.Fatalf("solve %d after the last that asked for label read it", i)
		}
	}
	// A solve that may explain an infeasible model reads every relation.
	if res := solve(false); !read(res, "label") {
		t.Fatalf("a solve without NoExplain left label unread: %v", res.Stats.Rows)
	}
	// A clone has learnt nothing: it reads label ahead, m no longer does.
	if c := m.Clone(); !c.plan.ReadsAhead("label") || m.plan.ReadsAhead("label") {
		t.Fatalf("label read ahead by the clone %v, by m %v: want true, false", c.plan.ReadsAhead("label"), m.plan.ReadsAhead("label"))
	}
}
