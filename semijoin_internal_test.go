package weave

import (
	"strings"
	"testing"

	"github.com/weavesql/weave/internal/ground"
)

// The schema of the semi-join cases: pod.node's domain is the pushed-down
// set ready_node (and node, through the foreign key); node is joined
// through pod.node; label is keyed by node name.
const semijoinBase = `
create table node (name varchar(10) primary key, cpu integer not null, ready boolean not null);
create table label (node varchar(10) not null, k varchar(10) not null, maybe varchar(10));
-- @variable_columns (node nullable)
create table pod (name varchar(10) primary key, cpu integer not null, node varchar(10) references node(name));
create view ready_node as select n.name from node n where n.ready = true;
-- @hard_constraint
create view ready_only as select * from pod where pod.node is null or pod.node in (select r.name from ready_node r);
-- @hard_constraint
create view fits as select node.name from pod join node on pod.node = node.name
group by node.name, node.cpu having sum(pod.cpu) <= node.cpu;
-- @soft_constraint
create view placed as select count(*) from pod where pod.node is not null;
`

// A table is read reduced to a decision column's domain set only when
// every compiled use of it joins it through that column (semijoin.go);
// one other use reads it whole. Each case checks the query the snapshot
// reads node with, and that the solve still agrees with the database
// (Verify) and places what it should on the reduced table.
func TestTablesReadReducedToADomain(t *testing.T) {
	cases := []struct {
		name    string
		extra   string
		reduced bool
		table   string // node unless set
	}{
		{"joined through the decision column only: reduced", "", true, ""},
		{"an EXISTS correlated with the decision column: reduced", `
-- @soft_constraint
create view big as select sum(case when exists (select 1 from node n where n.name = pod.node and n.cpu >= 4) then 1 else 0 end) from pod;`, true, ""},
		{"a count over the whole table: read whole", `
-- @soft_constraint
create view nodes as select count(*) from node;`, false, ""},
		{"a join through a stored column: read whole", `
-- @soft_constraint
create view named as select count(*) from pod join node on node.name = pod.name;`, false, ""},
		{"joined through the decision column by another key: read whole", `
-- @hard_constraint
create view cpu_key as select * from pod join node on node.name = pod.node join node m on m.cpu = node.cpu where m.ready = true;`, false, ""},
		{"label in an IN and a NOT IN of the decision column, by its not-NULL key: reduced", `
-- @hard_constraint
create view not_bad as select * from pod where pod.node is null or pod.node not in (select l.node from label l where l.k = 'bad');
-- @soft_constraint
create view gpu as select sum(case when pod.node in (select l.node from label l where l.k = 'gpu') then 1 else 0 end) from pod;`, true, "label"},
		{"label in an IN by a nullable column: read whole (NOT IN would see its NULLs)", `
-- @hard_constraint
create view not_bad as select * from pod where pod.node is null or pod.node not in (select l.maybe from label l where l.k = 'bad');`, false, "label"},
		{"label in an IN of a stored column: read whole", `
-- @soft_constraint
create view named as select count(*) from pod where pod.name in (select l.node from label l);`, false, "label"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Compile(semijoinBase + c.extra)
			if err != nil {
				t.Fatal(err)
			}
			table, key := "node", "name"
			if c.table != "" {
				table, key = c.table, "node"
			}
			var query string
			for _, q := range ground.Queries(m.prog) {
				if strings.Contains(q, `from "`+table+`"`) {
					query = q
				}
			}
			want := `where "` + key + `" in (select "name" from "ready_node")`
			if got := strings.Contains(query, want); got != c.reduced {
				t.Fatalf("%s is read with %q; reduced: %v, want %v", table, query, got, c.reduced)
			}
			res := solveVerified(t, m, OpenSQLite(t),
				"insert into node values ('n1', 4, true), ('n2', 8, false), ('n3', 2, true)",
				"insert into pod values ('a', 3, null), ('b', 2, null), ('c', 2, null)",
				"insert into label values ('n1', 'gpu', null), ('n2', 'gpu', null), ('n3', 'x', null)")
			if rows, want := res.Stats.Rows[table], map[bool]int{true: 2, false: 3}[c.reduced]; rows != want {
				t.Errorf("read %d %s rows, want %d", rows, table, want)
			}
			// Ready capacity 4 + 2: a and one of b, c (n2, 8 cpu, is not
			// ready), so two pods placed.
			placed := 0
			for _, r := range res.Table("pod").Rows {
				if r["node"] != nil {
					placed++
				}
			}
			if placed != 2 {
				t.Errorf("%d pods placed, want 2: %v", placed, res.Table("pod").Rows)
			}
		})
	}
}
