package weave

import (
	"strings"
	"testing"

	"github.com/weavesql/weave/internal/ground"
)

// A snapshot reads the relations in the order the grounder first needs
// them: the constraints' order, each with the intermediate views it
// reads, not the order the schema declares helper views in (the grounder
// would wait at the first constraint for a table only the last one reads).
func TestSnapshotReadsInGroundingOrder(t *testing.T) {
	m, err := Compile(`
create table node (name varchar(10) primary key);
create table late_input (name varchar(10) primary key, weight integer not null);
create table early_input (name varchar(10) primary key, ok boolean not null);
-- @variable_columns (node nullable)
create table pod (name varchar(10) primary key, node varchar(10) references node(name));
create view node_weight as
select pod.node, sum(late_input.weight) as w from pod join late_input on late_input.name = pod.name
group by pod.node;
-- @hard_constraint
create view early as select * from pod join early_input on early_input.name = pod.name
where early_input.ok = true or pod.node is null;
-- @hard_constraint
create view late as select * from node_weight where node_weight.w <= 10;
`)
	if err != nil {
		t.Fatal(err)
	}
	pos := func(table string) int {
		for i, q := range ground.Queries(m.prog) {
			if strings.Contains(q, " from "+table) || strings.Contains(q, " from \""+table+"\"") {
				return i
			}
		}
		t.Fatalf("no query reads %s: %q", table, ground.Queries(m.prog))
		return -1
	}
	if e, l := pos("early_input"), pos("late_input"); e > l {
		t.Fatalf("early_input read at %d, late_input at %d: %q", e, l, ground.Queries(m.prog))
	}
}
