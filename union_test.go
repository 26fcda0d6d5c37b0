package weave

import (
	"slices"
	"testing"
)

// A view over input columns may be a union of selects: the database
// evaluates it, and a decision column takes its domain from it. Pods go
// only to the nodes the union lists (ready nodes, and those named in
// extra), on every database.
func TestUnionViewOverInputColumns(t *testing.T) {
	const schema = `
create table node (name varchar(10) primary key, cpu integer not null, ready boolean not null);
create table extra (name varchar(10) primary key);
-- @variable_columns (node nullable)
create table pod (name varchar(10) primary key, cpu integer not null, node varchar(10) references node(name));
create view usable as
select n.name from node n where n.ready = true
union
select e.name from extra e;
-- @hard_constraint
create view only_usable as
select * from pod where pod.node is null or pod.node in (select u.name from usable u);
-- @hard_constraint
create view fits as
select node.name from pod join node on pod.node = node.name
group by node.name, node.cpu having sum(pod.cpu) <= node.cpu;
-- @soft_constraint
create view placed as select count(*) from pod where pod.node is not null;
`
	for _, d := range Databases() {
		t.Run(d.Name, func(t *testing.T) {
			on := compileAndPlace(t, schema, d.Open(t),
				"insert into node values ('up', 1, true), ('down', 1, false), ('spare', 1, false), ('big', 9, false)",
				"insert into extra values ('spare'), ('gone')",
				"insert into pod values ('a', 1, null), ('b', 1, null), ('c', 1, null)")
			// up and spare (one cpu each) are usable; down and big are not.
			if !slices.Equal(on, []string{"spare", "up"}) {
				t.Errorf("pods placed on %v, want one on spare and one on up", on)
			}
		})
	}
}
