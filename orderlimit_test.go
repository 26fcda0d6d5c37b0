package weave

import (
	"slices"
	"testing"
)

// A view over input columns may end with order by and limit, which the
// database evaluates: here the two roomiest nodes (ties broken by name) are
// the only ones pods may use, so of five one-cpu pods four are placed, two
// on each (on SQLite and PostgreSQL, each solution verified by the
// database).
func TestOrderByLimitViewOverInputColumns(t *testing.T) {
	const schema = `
create table node (name varchar(10) primary key, cpu integer not null, used integer not null);
-- @variable_columns (node nullable)
create table pod (name varchar(10) primary key, cpu integer not null, node varchar(10) references node(name));
create view roomiest as
select n.name, n.cpu - n.used as room from node n
order by room desc, n.name
limit 2;
-- @hard_constraint
create view only_roomiest as
select * from pod where pod.node is null or pod.node in (select r.name from roomiest r);
-- @hard_constraint
create view fits as
select node.name from pod join node on pod.node = node.name
group by node.name, node.cpu, node.used having sum(pod.cpu) + node.used <= node.cpu;
-- @soft_constraint
create view placed as select count(*) from pod where pod.node is not null;
`
	for _, d := range Databases() {
		t.Run(d.Name, func(t *testing.T) {
			on := compileAndPlace(t, schema, d.Open(t),
				"insert into node values ('a', 4, 2), ('b', 2, 0), ('c', 3, 1), ('d', 1, 0), ('e', 9, 9)",
				"insert into pod values ('p1', 1, null), ('p2', 1, null), ('p3', 1, null), ('p4', 1, null), ('p5', 1, null)")
			// a, b and c each have room 2; the first two by name are a and b.
			if want := []string{"a", "a", "b", "b"}; !slices.Equal(on, want) {
				t.Errorf("pods placed on %v, want %v", on, want)
			}
		})
	}
}
