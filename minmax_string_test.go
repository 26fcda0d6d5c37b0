package weave

import (
	"slices"
	"testing"
)

// A view over input columns may take the least or greatest string: the
// database evaluates it, in its collation (byte order on SQLite and on the
// tests' PostgreSQL), and the model reads its one row.
func TestMinMaxOverStringsInAViewOverInputColumns(t *testing.T) {
	const schema = `
create table node (name varchar(10) primary key, zone varchar(10) not null);
-- @variable_columns (node nullable)
create table pod (name varchar(10) primary key, node varchar(10) references node(name));
create view edge as
select min(n.name) as first, max(n.name) as last from node n where n.zone = 'z1';
-- @hard_constraint
create view only_edges as
select * from pod where pod.node is null
   or pod.node in (select e.first from edge e) or pod.node in (select e.last from edge e);
-- @hard_constraint
create view one_per_node as
select pod.node from pod where pod.node is not null group by pod.node having count(*) <= 1;
-- @soft_constraint
create view placed as select count(*) from pod where pod.node is not null;
`
	for _, d := range Databases() {
		t.Run(d.Name, func(t *testing.T) {
			on := compileAndPlace(t, schema, d.Open(t),
				// "B" < "a" < "b" in byte order; "C" is in another zone.
				"insert into node values ('b', 'z1'), ('a', 'z1'), ('B', 'z1'), ('ab', 'z1'), ('C', 'z2')",
				"insert into pod values ('p1', null), ('p2', null), ('p3', null)")
			if want := []string{"B", "b"}; !slices.Equal(on, want) {
				t.Errorf("pods placed on %v, want %v", on, want)
			}
		})
	}
}
