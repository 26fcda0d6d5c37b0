package analyze

import (
	"strings"
	"testing"

	"github.com/weavesql/weave/internal/ir"
)

func TestNameResolution(t *testing.T) {
	runAnalyzeCases(t, []analyzeCase{
		{name: "an unknown table in from is reported at its name",
			src: base + `create view v as select * from nodes;`,
			err: `4:32: v: unknown table or view nodes`},
		{name: "an unknown unqualified column is reported at the column",
			src: base + `create view v as select nam from node;`,
			err: `4:25: v: unknown column nam`},
		{name: "an unknown qualified column names the table that lacks it",
			src: base + `create view v as select node.nam from node;`,
			err: `4:25: v: node has no column nam`},
		{name: "a qualifier naming no table in scope is reported",
			src: base + `create view v as select pod.name from node;`,
			err: `4:25: v: unknown table pod in pod.name`},
		{name: "a qualifier naming a table by its name when it has an alias is unknown",
			src: base + `create view v as select node.name from node n;`,
			err: `4:25: v: unknown table node in node.name`},
		{name: "a column present in two sources is ambiguous",
			src: base + `create view v as select name from node join pod on node.name = pod.node_name;`,
			err: `4:25: v: column name is ambiguous; qualify it with a table name`},
		{name: "a table read twice needs an alias",
			src: base + `create view v as select node.name from node, node;`,
			err: `4:46: v: node appears twice in the from clause; give one an alias`},
		{name: "a table read twice under two aliases compiles",
			src:   base + `create view v as select a.name as a, b.name as b from node a, node b where a.cpu < b.cpu;`,
			roles: map[string]string{"v": "pushdown"}},
		{name: "an unknown table does not also report its columns",
			src: base + `create view v as select nodes.cpu, x from nodes where y = 1;`,
			err: `4:43: v: unknown table or view nodes`},
		{name: "a view that reads a view with errors reports nothing more",
			src: base + `create view v as select nam from node;
create view w as select * from v;
create view x as select name from v, node;`,
			err: `4:25: v: unknown column nam`},
		{name: "a view naming more columns than its query yields",
			src: base + `create view v (a, b) as select name from node;`,
			err: `4:13: v: view v names 2 columns but its query yields 1`},
		{name: "a pushed-down view yielding two columns of one name needs an alias",
			src: base + `create view v as select node.name, pod.name from node, pod;`,
			err: `4:18: v: view v yields two columns named name; give one an alias`},
		{name: "a derived table is resolved and read by its alias",
			src:   base + `create view v as select big.name from (select name from node where cpu > 4) big;`,
			roles: map[string]string{"v": "pushdown"}},
		{name: "a column neither grouped nor aggregated is rejected",
			src: base + `create view v as select node_name, cpu from pod group by node_name;`,
			err: `4:36: v: column pod.cpu must appear in the group by clause or be used in an aggregate`},
		{name: "a column of a table grouped by its primary key may be selected",
			src: base + `create view v as select node.name, node.cpu - sum(pod.cpu) as spare
from node join pod on pod.node_name = node.name group by node.name;`,
			roles: map[string]string{"v": "intermediate"}},
		{name: "a table with a composite key needs all of it grouped",
			src: `create table t (a integer, b integer, c integer, primary key (a, b));
create view v as select a, c from t group by a;
create view w as select a, c from t group by a, b;`,
			err: `2:28: v: column t.c must appear in the group by clause or be used in an aggregate`},
		{name: "an aggregate in a where clause is rejected",
			src: base + `create view v as select name from pod where sum(cpu) > 3;`,
			err: `4:45: v: aggregate sum is only allowed in the select list or the having clause`},
		{name: "an aggregate in group by or in a join condition is rejected",
			src: base + `create view v as select count(*) as n from pod join node on count(*) > 1 group by max(pod.cpu);`,
			err: `4:61: v: aggregate count is only allowed in the select list or the having clause
4:83: v: aggregate max is only allowed in the select list or the having clause`},
		{name: "nested aggregates are rejected",
			src: base + `create view v as select sum(count(*)) as n from pod;`,
			err: `4:29: v: aggregate count cannot be nested inside another aggregate`},
		{name: "select star with group by is rejected",
			src: base + `create view v as select * from pod group by node_name;`,
			err: `4:25: v: select * cannot be used with group by or aggregates`},
		{name: "a subquery of a grouped query may not read an ungrouped outer column",
			src: base + `create view v as select node_name, (select count(*) from node where node.cpu = pod.cpu) as c from pod group by node_name;`,
			err: `4:80: v: column pod.cpu must appear in the group by clause or be used in an aggregate`},
		{name: "a subquery inside an aggregate may read the outer rows",
			src:   base + `create view v as select node_name, sum((select count(*) from node where node.cpu = pod.cpu)) as c from pod group by node_name;`,
			roles: map[string]string{"v": "intermediate"}},
	})
}

func TestTypes(t *testing.T) {
	runAnalyzeCases(t, []analyzeCase{
		{name: "comparing a string with an integer is rejected",
			src: base + `create view v as select name from node where name = 1;`,
			err: `4:51: v: cannot compare a string with an integer`},
		{name: "arithmetic on a string is rejected",
			src: base + `create view v as select name + 1 as x from node;`,
			err: `4:30: v: + needs integer operands, not a string`},
		{name: "and with an integer operand is rejected",
			src: base + `create view v as select name from node where ready and cpu;`,
			err: `4:52: v: and needs boolean operands, not an integer`},
		{name: "or with a string operand is rejected",
			src: base + `create view v as select name from node where name or ready;`,
			err: `4:51: v: or needs boolean operands, not a string`},
		{name: "not of an integer is rejected",
			src: base + `create view v as select name from node where not cpu;`,
			err: `4:46: v: not needs a boolean operand, not an integer`},
		{name: "a where clause that is not boolean is rejected",
			src: base + `create view v as select name from node where cpu;`,
			err: `4:46: v: the where clause must be a boolean condition, not an integer: cpu`},
		{name: "a decimal literal is rejected",
			src: base + `create view v as select cpu * 1.5 as x from node;`,
			err: `4:31: v: decimal number 1.5: only integers are supported`},
		{name: "like and not like are rejected",
			src: base + `create view v as select name from node where name like 'a%' or name not like 'b%';`,
			err: `4:51: v: like is not supported: compare strings with = or <>, or test membership with in (...)
4:69: v: not like is not supported: compare strings with = or <>, or test membership with in (...)`},
		{name: "an unknown function is rejected",
			src: base + `create view v as select upper(name) as u from node;`,
			err: `4:25: v: unknown function upper (supported: count, sum, min, max, coalesce and registered aggregates)`},
		{name: "division by the constant zero is rejected",
			src: base + `create view v as select cpu / 0 as x, cpu % 0 as y from node;`,
			err: `4:29: v: division by zero: cpu / 0
4:43: v: division by zero: cpu % 0`},
		{name: "sum of a boolean is rejected",
			src: base + `create view v as select sum(ready) as s from node;`,
			err: `4:25: v: sum needs an integer argument, not a boolean (count the rows instead, or sum a case expression)`},
		{name: "case arms of different types are rejected",
			src: base + `create view v as select case when ready then 1 else 'no' end as x from node;`,
			err: `4:53: v: case arms yield an integer and a string`},
		{name: "coalesce of different types is rejected",
			src: base + `create view v as select coalesce(name, 1) as x from node;`,
			err: `4:40: v: coalesce mixes a string and an integer`},
		{name: "between with a string bound is rejected",
			src: base + `create view v as select name from node where cpu between 'a' and 3;`,
			err: `4:50: v: cannot compare an integer with a string`},
		{name: "in with a list of another type is rejected",
			src: base + `create view v as select name from node where cpu in (1, 'two');`,
			err: `4:57: v: in compares an integer with a string`},
		{name: "in with a subquery of another type is rejected",
			src: base + `create view v as select name from node where cpu in (select name from node);`,
			err: `4:50: v: in compares an integer with a subquery of a string`},
		{name: "in with a subquery of two columns is rejected",
			src: base + `create view v as select name from node where cpu in (select cpu, name from node);`,
			err: `4:50: v: the subquery of in must select exactly one column, not 2`},
		{name: "a subquery's own error is reported, not the columns it lost by it",
			src: base + `create view v as select name from node where name in (select sum(name) from node)
  and cpu = (select max(ready) from node);`,
			err: "4:62: v: sum needs an integer argument, not a string (count the rows instead, or sum a case expression)\n5:21: v: max needs an integer or string argument, not a boolean"},
		{name: "a scalar subquery of two columns is rejected",
			src: base + `create view v as select (select cpu, name from node) as x from node;`,
			err: `4:25: v: a scalar subquery must select exactly one column, not 2`},
		{name: "multiplying two decision expressions is rejected",
			src: `-- @variable_columns (a, b)
create table t (k integer primary key, a integer references u(x), b integer references u(x));
create table u (x integer primary key);
create view v as select a * b as p, a / b as q, a * 2 as r from t;`,
			err: `4:27: v: multiplying two expressions over decision columns is not linear: a * b
4:39: v: division by an expression over decision columns is not supported: a / b`},
		{name: "multiplying two aggregates over rows the solver chooses is rejected",
			src: base + `create view v as select node.name, sum(pod.cpu) * count(*) as x, count(*) * 2 as y
from node join pod on pod.node_name = node.name group by node.name;`,
			err: `4:49: v: multiplying two expressions over decision columns is not linear: sum(pod.cpu) * count(*)`},
		{name: "a view column aggregated over chosen rows is decided in the views that read it",
			src: base + `create view load as select node.name, sum(pod.cpu) as used from node join pod on pod.node_name = node.name group by node.name;
create view sq as select used * used as u2, 100 / used as inv, used * 2 as twice, used / 2 as half from load;`,
			err: `5:31: sq: multiplying two expressions over decision columns is not linear: used * used
5:49: sq: division by an expression over decision columns is not supported: 100 / used`},
		{name: "aggregates over input rows are constants",
			src:   base + `create view v as select count(*) * count(*) as x, 100 / count(*) as y from node where cpu > 1;`,
			roles: map[string]string{"v": "pushdown"}},
		{name: "an ordering comparison on a string decision column is rejected",
			src: base + `create view v as select name from pod where node_name < 'm';`,
			err: `4:55: v: ordering comparison < on a string over decision columns is not supported (only = and <>)`},
		{name: "count distinct over a decision column is rejected",
			src: base + `create view v as select count(distinct node_name) as n from pod;`,
			err: `4:25: v: count(distinct ...) over decision columns is not supported`},
		{name: "null literals type with anything",
			src:   base + `create view v as select name from node where cpu = null or name <> null or coalesce(null, cpu) > 1 or -null is null;`,
			roles: map[string]string{"v": "pushdown"}},
	})
}

func TestAnnotations(t *testing.T) {
	runAnalyzeCases(t, []analyzeCase{
		{name: "all_different outside a hard view is rejected",
			src: base + `create view v as select all_different(node_name) from pod;`,
			err: `4:25: v: all_different(...) is a constraint aggregate: it can only be selected by a @hard_constraint view`},
		{name: "all_different inside an expression is rejected",
			src: base + `-- @hard_constraint
create view v as select not all_different(node_name) from pod;`,
			err: `5:29: v: all_different(...) is a constraint aggregate: select it directly in a @hard_constraint view`},
		{name: "a soft view with two columns is rejected",
			src: base + `-- @soft_constraint
create view v as select count(*) as a, sum(cpu) as b from pod where node_name = 'a';`,
			err: `5:18: v: a soft constraint yields one integer column; this view yields 2 columns`},
		{name: "a soft view yielding a string is rejected",
			src: base + `-- @soft_constraint
create view v as select node_name from pod;`,
			err: `5:18: v: a soft constraint yields an integer or boolean; this view yields a string`},
		{name: "a hard view without where is rejected",
			src: base + `-- @hard_constraint
create view v as select * from pod;`,
			err: `5:18: v: a hard constraint needs a where clause: every row of its from clause must satisfy it`},
		{name: "a hard view with group by but no having is rejected",
			src: base + `-- @hard_constraint
create view v as select node_name, count(*) as n from pod group by node_name;`,
			err: `5:18: v: a hard constraint with group by needs a having clause or a constraint aggregate such as all_different(...) in its select list`},
		{name: "a constraint view cannot be read by another view",
			src: base + `-- @hard_constraint
create view v as select * from pod where cpu > 0;
create view w as select name from v;`,
			err: `6:35: w: view v is a hard constraint; constraint views cannot be read by other views`},
		{name: "duplicate table and view names are rejected",
			src: base + `create table node (x integer);
create view pod as select name from node;
create view v as select name from node;
create view v as select cpu from node;`,
			err: `4:14: node: "node" is already defined
5:13: pod: "pod" is already defined
7:13: v: "v" is already defined`},
		{name: "@variable_columns on an unknown column is rejected",
			src: `-- @variable_columns (nodename)
create table pod (name varchar(20) primary key, node_name boolean);`,
			err: `1:23: pod: @variable_columns names unknown column nodename of table pod`},
		{name: "@variable_columns on a column of a composite primary key is rejected",
			src: `-- @variable_columns (name)
create table pod (name varchar(20), ns varchar(20), node_name boolean, primary key (name, ns));`,
			err: `1:23: pod: variable column name is part of a primary key of several columns; such keys must be input columns`},
		{name: "an unknown @variable_columns option is rejected",
			src: `-- @variable_columns (node_name optional)
create table pod (name varchar(20) primary key, node_name boolean);`,
			err: `1:23: pod: unknown option "optional" for variable column node_name (the only option is nullable)`},
		{name: "a not null decision column cannot be nullable",
			src: `-- @variable_columns (node_name nullable)
create table pod (name varchar(20) primary key, node_name boolean not null);`,
			err: `1:23: pod: variable column node_name is declared not null and nullable`},
		{name: "a nullable decision column is marked nullable",
			src: `create table node (name varchar(20) primary key);
-- @variable_columns (node_name nullable, pinned)
create table pod (name varchar(20) primary key, node_name varchar(20) references node, pinned boolean);`,
			domains: map[string][]string{"pod.node_name": {"foreign key references node(name)"}, "pod.pinned": nil},
			check: func(t *testing.T, p *ir.Program) {
				c := p.Table("pod").Columns[1]
				if !c.Variable || !c.Nullable {
					t.Errorf("node_name: variable %v nullable %v", c.Variable, c.Nullable)
				}
				if c := p.Table("pod").Columns[2]; !c.Variable || c.Nullable {
					t.Errorf("pinned: variable %v nullable %v", c.Variable, c.Nullable)
				}
			}},
	})
}

func TestDomains(t *testing.T) {
	const pod = `create table node (name varchar(20) primary key, zone varchar(20) not null, ready boolean not null);
-- @variable_columns (node_name)
create table pod (name varchar(20) primary key, node_name varchar(20), cpu integer not null);
`
	runAnalyzeCases(t, []analyzeCase{
		{name: "a decision column without any domain is an error that says how to fix it",
			src: pod,
			err: `2:23: pod: cannot infer the values variable column pod.node_name may take: declare a foreign key (node_name varchar references other_table(col)), or constrain it in a @hard_constraint view with "node_name in (select ...)" or by joining it with an input column`},
		{name: "a foreign key gives a domain",
			src:     base,
			domains: map[string][]string{"pod.node_name": {"foreign key references node(name)"}}},
		{name: "a foreign key to a table's primary key gives a domain",
			src: `create table node (name varchar(20) primary key);
-- @variable_columns (node_name)
create table pod (name varchar(20) primary key, node_name varchar(20), foreign key (node_name) references node);`,
			domains: map[string][]string{"pod.node_name": {"foreign key references node(name)"}}},
		{name: "foreign keys to unknown tables and columns or of another type are rejected",
			src: `create table node (name varchar(20), cpu integer, a integer, b integer, primary key (a, b));
create table pod (a varchar(20) references nodes(name), b varchar(20) references node(nam), c integer references node(name));
create table pod2 (d integer references node);`,
			err: `2:33: pod: column a references unknown table nodes
2:71: pod: column b references unknown column node(nam)
2:103: pod: column c is an integer but references node(name), a string
3:30: pod2: column d references table node, which has no single-column primary key; name the column: references node(col)`},
		{name: "a hard in (select ...) gives a domain",
			src: pod + `-- @hard_constraint
create view v as select * from pod where node_name in (select name from node where ready);`,
			domains: map[string][]string{"pod.node_name": {"in (subquery) in v"}}},
		{name: "a hard \"is null or in (select ...)\" gives a nullable column a domain",
			src: `create table node (name varchar(20) primary key, ready boolean not null);
-- @variable_columns (node_name nullable)
create table pod (name varchar(20) primary key, node_name varchar(20), cpu integer not null);
-- @hard_constraint
create view v as select * from pod where pod.node_name is null or pod.node_name in (select name from node where ready);`,
			domains: map[string][]string{"pod.node_name": {"in (subquery) in v"}}},
		{name: "\"is null or in\" gives no domain when another column is null",
			src: pod + `-- @hard_constraint
create view v as select * from pod where pod.name is null or pod.node_name in (select name from node where ready);`,
			err: `2:23: pod: cannot infer the values variable column pod.node_name may take: declare a foreign key (node_name varchar references other_table(col)), or constrain it in a @hard_constraint view with "node_name in (select ...)" or by joining it with an input column`},
		{name: "a hard in (list) gives a domain",
			src: pod + `-- @hard_constraint
create view v as select * from pod where cpu > 0 and node_name in ('a', 'b');`,
			domains: map[string][]string{"pod.node_name": {"in (list) in v"}}},
		{name: "a hard equality join with an input column gives a domain",
			src: pod + `-- @hard_constraint
create view v as select * from pod join node on pod.node_name = node.name where node.ready;`,
			domains: map[string][]string{"pod.node_name": {"joined with node.name in v"}}},
		{name: "a hard equality join with a pushed-down view gives a domain",
			src: pod + `create view ready_node as select name from node where ready;
-- @hard_constraint
create view v as select * from pod join ready_node r on r.name = pod.node_name where pod.cpu < 10;`,
			roles:   map[string]string{"ready_node": "pushdown", "v": "hard"},
			domains: map[string][]string{"pod.node_name": {"joined with ready_node.name in v"}}},
		{name: "sources intersect: a foreign key and a hard membership",
			src: base + `-- @hard_constraint
create view v as select * from pod where node_name in (select name from node where ready);`,
			domains: map[string][]string{"pod.node_name": {"foreign key references node(name)", "in (subquery) in v"}}},
		{name: "a membership in the where of a grouped hard view only filters",
			src: pod + `-- @hard_constraint
create view v as select count(*) as n from pod where node_name in (select name from node where zone = 'a') having count(*) <= 3;`,
			err: `2:23: pod: cannot infer the values variable column pod.node_name may take: declare a foreign key (node_name varchar references other_table(col)), or constrain it in a @hard_constraint view with "node_name in (select ...)" or by joining it with an input column`},
		{name: "a membership in a having clause pins the grouped column",
			src: pod + `-- @hard_constraint
create view v as select node_name from pod group by node_name having node_name in (select name from node) and count(*) < 3;`,
			domains: map[string][]string{"pod.node_name": {"in (subquery) in v"}}},
		{name: "not in, correlated in, in over decision columns and a soft view give no domain",
			src: pod + `-- @hard_constraint
create view v1 as select * from pod where node_name not in (select name from node);
-- @hard_constraint
create view v2 as select * from pod where node_name in (select name from node where node.name <> pod.name);
-- @hard_constraint
create view v3 as select * from pod p where node_name in (select node_name from pod);
-- @soft_constraint
create view v4 as select count(*) from pod join node on pod.node_name = node.name;
-- @hard_constraint
create view v5 as select * from pod where node_name = 'x' or node_name in (select name from node);`,
			err: `2:23: pod: cannot infer the values variable column pod.node_name may take: declare a foreign key (node_name varchar references other_table(col)), or constrain it in a @hard_constraint view with "node_name in (select ...)" or by joining it with an input column`},
		{name: "a membership in a subquery over an intermediate view gives no domain",
			src: pod + `create view placed as select node.name from node join pod on pod.node_name = node.name;
-- @hard_constraint
create view v as select * from pod where node_name in (select name from placed);`,
			err: `2:23: pod: cannot infer the values variable column pod.node_name may take: declare a foreign key (node_name varchar references other_table(col)), or constrain it in a @hard_constraint view with "node_name in (select ...)" or by joining it with an input column`},
		{name: "a Boolean decision column needs no domain",
			src: `-- @variable_columns (lit)
create table light (name varchar(10) primary key, lit boolean);`,
			domains: map[string][]string{"light.lit": nil}},
	})
}

func TestViews(t *testing.T) {
	runAnalyzeCases(t, []analyzeCase{
		{name: "a left join over input columns is pushed down",
			src: base + `create view free as select node.name, node.cpu - coalesce(u.used, 0) as free
from node left outer join (select p.prio, sum(p.cpu) as used from pod p group by p.prio) u on u.prio = node.cpu;`,
			roles: map[string]string{"free": "pushdown"}},
		{name: "a view with a left join that reads decision columns is rejected at the join",
			src: base + `create view placed as select node.name, pod.name as pod
from node left join pod on pod.node_name = node.name;`,
			err: `5:11: placed: left join is supported only in views over input columns, which the database evaluates; view placed reads decision columns: write it with inner joins, or put the left join in a view of input columns that it reads`},
		{name: "a hard constraint with a left join in a subquery is rejected at the join",
			src: base + `-- @hard_constraint
create view h as select * from pod
where pod.node_name is null or exists (select 1 from node n left join pod q on q.prio = n.cpu where n.name = pod.node_name);`,
			err: `6:61: h: left join is supported only in views over input columns, which the database evaluates; view h is a hard constraint: write it with inner joins, or put the left join in a view of input columns that it reads`},
		{name: "a hard constraint may read a pushed-down view with a left join",
			src: base + `create view free as select node.name, node.cpu - coalesce(u.used, 0) as free
from node left join (select p.prio, sum(p.cpu) as used from pod p group by p.prio) u on u.prio = node.cpu;
-- @hard_constraint
create view h as select * from pod join free on free.name = pod.node_name where free.free >= pod.cpu;`,
			roles: map[string]string{"free": "pushdown", "h": "hard"}},
		{name: "min and max over strings are pushed down, and their type is a string",
			src: base + `create view first_node as select min(n.name) as name, max(n.name) as last from node n where n.ready = true;
-- @hard_constraint
create view h as select * from pod join first_node f on f.name = pod.node_name where f.last > 'a';`,
			roles: map[string]string{"first_node": "pushdown", "h": "hard"}},
		{name: "min over strings in a view that reads decision columns is rejected at the min",
			src: base + `create view lowest as select pod.node_name, min(pod.name) as first from pod group by pod.node_name;`,
			err: `4:45: lowest: min over strings is supported only in views over input columns, which the database evaluates; view lowest reads decision columns: compare integers, or put the min in a view of input columns that it reads`},
		{name: "max over strings in a hard constraint's subquery is rejected at the max",
			src: base + `-- @hard_constraint
create view h as select * from pod where pod.node_name is null or pod.node_name <> (select max(n.name) from node n);`,
			err: `5:92: h: max over strings is supported only in views over input columns, which the database evaluates; view h is a hard constraint: compare integers, or put the max in a view of input columns that it reads`},
		{name: "a union over input columns is pushed down, and its column names are the first select's",
			src: base + `create view pool as select n.name, n.cpu from node n where n.ready = true
union all select p.name, p.prio from pod p
union select 'spare', null from node;
-- @hard_constraint
create view h as select * from pod join pool on pool.name = pod.node_name where pool.cpu >= pod.cpu;`,
			roles: map[string]string{"pool": "pushdown", "h": "hard"}},
		{name: "a union that reads decision columns is rejected at the union",
			src: base + `create view names as select node.name from node
union select pod.node_name from pod;`,
			err: `5:1: names: union is supported only in views over input columns, which the database evaluates; view names reads decision columns: put the union in a view of input columns that it reads`},
		{name: "a hard constraint with a union is rejected at the union",
			src: base + `-- @hard_constraint
create view h as select * from pod where pod.cpu > 0
union select * from pod where pod.prio > 0;`,
			err: `6:1: h: union is supported only in views over input columns, which the database evaluates; view h is a hard constraint: put the union in a view of input columns that it reads`},
		{name: "order by and limit end a view over input columns, which is pushed down",
			src: base + `create view top as select n.name, n.cpu * 2 as twice from node n where n.ready = true
order by twice desc, n.cpu + 1, n.name limit 1;
-- @hard_constraint
create view h as select * from pod join top on top.name = pod.node_name where top.twice >= pod.cpu;`,
			roles: map[string]string{"top": "pushdown", "h": "hard"}},
		{name: "order by in a view that reads decision columns is rejected at the order by",
			src: base + `create view placed as select pod.name, pod.node_name from pod order by pod.name;`,
			err: `4:72: placed: order by is supported only in views over input columns, which the database evaluates; view placed reads decision columns: put it in a view of input columns that it reads`},
		{name: "limit in a soft constraint is rejected at the limit",
			src: base + `-- @soft_constraint
create view s as select count(*) from node limit 1;`,
			err: `5:44: s: limit is supported only in views over input columns, which the database evaluates; view s is a soft constraint: put it in a view of input columns that it reads`},
		{name: "an order by term is checked like a select item",
			src: base + `create view v as select n.name from node n order by n.nam, n.name + 1;`,
			err: "4:53: v: node has no column nam"},
		{name: "with union, order by names the view's columns",
			src: base + `create view v as select n.name from node n union select p.name from pod p order by name, n.cpu;`,
			err: `4:90: v: with union, order by names columns of the view (n.cpu)`},
		{name: "the selects of a union yield as many columns",
			src: base + `create view v as select n.name from node n union select n.name, n.cpu from node n;`,
			err: `4:50: v: this select of the union yields 2 columns, the first yields 1`},
		{name: "the selects of a union yield the same types",
			src: base + `create view v as select n.name from node n union select n.cpu from node n;`,
			err: `4:50: v: column 1 (name) is integer in this select of the union, string in the first`},
		{name: "views over input columns are pushed down and views over decision columns are intermediate",
			src: base + `create view big as select name from node where cpu > 4;
create view placed as select pod.name, node_name from pod;
create view busy as select name from node where exists (select 1 from pod where pod.node_name = node.name);
create view load as select node_name, sum(cpu) as used from pod group by node_name;`,
			roles: map[string]string{"big": "pushdown", "placed": "intermediate", "busy": "intermediate", "load": "intermediate"}},
		{name: "views are built on views",
			src: base + `create view big as select name, cpu from node where cpu > 4;
create view bigger as select name from big where cpu > 8;
create view on_big as select pod.name as pod, big.name as node from pod join big on pod.node_name = big.name;
create view on_big_names as select pod from on_big;
-- @soft_constraint
create view s as select count(*) from on_big_names;
-- @hard_constraint
create view h as select * from on_big where node <> 'x';`,
			roles: map[string]string{"big": "pushdown", "bigger": "pushdown", "on_big": "intermediate",
				"on_big_names": "intermediate", "s": "soft", "h": "hard"},
			check: func(t *testing.T, p *ir.Program) {
				s := p.View("bigger").Query.From[0]
				if s.Kind != ir.FromInput || s.View != p.View("big") {
					t.Errorf("bigger reads %v kind %v", s.Name(), s.Kind)
				}
				s = p.View("on_big_names").Query.From[0]
				if s.Kind != ir.FromQuery || s.Query != p.View("on_big").Query {
					t.Errorf("on_big_names reads %v kind %v", s.Name(), s.Kind)
				}
			}},
		{name: "a view selecting input columns of an intermediate view is intermediate",
			src: base + `create view placed as select pod.name, pod.cpu from pod where node_name = 'a';
create view names as select name from placed;
create view n as select count(*) as n from (select name from placed) p;
create view m as select name from node where exists (select 1 from placed);`,
			roles: map[string]string{"placed": "intermediate", "names": "intermediate", "n": "intermediate", "m": "intermediate"}},
		{name: "correlated subqueries are marked correlated, every level between",
			src: base + `create view v as select name from node
where exists (select 1 from pod where pod.node_name = node.name)
  and cpu > (select count(*) from pod)
  and exists (select 1 from pod where exists (select 1 from node n2 where n2.cpu = node.cpu));`,
			check: func(t *testing.T, p *ir.Program) {
				q := p.View("v").Query
				if q.Correlated {
					t.Error("the view's query is marked correlated")
				}
				var got []bool
				ir.InspectQuery(q, func(e ir.Expr) bool {
					switch e := e.(type) {
					case *ir.Exists:
						got = append(got, e.Sub.Correlated)
					case *ir.Scalar:
						got = append(got, e.Sub.Correlated)
					}
					return true
				})
				// exists #1, scalar, exists #2 (outer), exists #2 (inner)
				if want := []bool{true, false, true, true}; !equalBools(got, want) {
					t.Errorf("correlated: %v, want %v", got, want)
				}
			}},
		{name: "the paper's policy compiles with its roles",
			src: paperSQL(t),
			roles: map[string]string{"candidate_nodes_for_pods": "pushdown", "constraint_node_predicates": "hard",
				"spare_capacity_per_node": "intermediate", "constraint_load_balance_cpu": "soft", "constraint_node_affinity": "hard"},
			domains: map[string][]string{"pending_pod.node_name": {"joined with node.name in constraint_node_predicates"}}},
		{name: "all_different per group in a hard view",
			src: `create table node (name varchar(20) primary key);
-- @variable_columns (node_name)
create table pod (name varchar(20) primary key, app varchar(20) not null, node_name varchar(20) references node);
-- @hard_constraint
create view spread as select app, all_different(node_name) from pod group by app;`,
			roles: map[string]string{"spread": "hard"},
			check: func(t *testing.T, p *ir.Program) {
				q := p.View("spread").Query
				if len(q.Constraints) != 1 || q.Constraints[0].Func != "all_different" || len(q.GroupBy) != 1 || q.Check != nil {
					t.Errorf("spread: %s", ir.FormatQuery(q))
				}
			}},
	})
}

func TestErrorsAreReportedTogetherInPositionOrder(t *testing.T) {
	runAnalyzeCases(t, []analyzeCase{
		{name: "several errors in several statements",
			src: `-- @variable_columns (a, d nullable)
create table t (a integer primary key, b varchar(5), c integer references u(x));
create view v1 as select x, a + b as s from t where b = 1;
-- @soft_constraint
create view v2 as select b from t where a like 'x';
create table t (d integer);
create view v3 as select count(*) as n from t where sum(c) > 1 group by c having b = 'x';`,
			err: `1:26: t: @variable_columns names unknown column d of table t
2:64: t: column c references unknown table u
3:26: v1: unknown column x
3:31: v1: + needs integer operands, not a string
3:55: v1: cannot compare a string with an integer
5:43: v2: like is not supported: compare strings with = or <>, or test membership with in (...)
6:14: t: "t" is already defined
7:53: v3: aggregate sum is only allowed in the select list or the having clause
7:82: v3: column t.b must appear in the group by clause or be used in an aggregate`},
	})
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Regression cases: inputs that crashed or misbehaved before the fix noted.
func TestRegressions(t *testing.T) {
	nested := "create view v as select name from node where "
	for i := 0; i < 40; i++ {
		nested += "exists (select 1 from pod where "
	}
	nested += "node.cpu > 1" + strings.Repeat(")", 40) + ";"
	runAnalyzeCases(t, []analyzeCase{
		// An aggregate call that failed returned a nil *ir.Agg as a
		// non-nil ir.Expr, and the comparison around it panicked.
		{name: "a failing aggregate inside a comparison does not panic",
			src: base + `create view v as select name from pod where sum(cpu) > 3 and 1 < max(name);`,
			err: `4:45: v: aggregate sum is only allowed in the select list or the having clause
4:66: v: aggregate max is only allowed in the select list or the having clause`},
		{name: "a failing aggregate in having does not panic",
			src: base + `create view v as select node_name from pod group by node_name having sum(ready) > 0 or sum(name) = 1;`,
			err: `4:74: v: unknown column ready
4:88: v: sum needs an integer argument, not a string (count the rows instead, or sum a case expression)`},
		// Whether a query depends on decision columns was recomputed for
		// every subquery at every level: exponential in the depth.
		{name: "deeply nested subqueries are analysed in linear time",
			src:   base + nested,
			roles: map[string]string{"v": "pushdown"}}, // reads no decision column
		// Errors found after the statements (foreign keys, domains) had
		// no byte offset and sorted before every other error.
		{name: "foreign-key errors sort with the others by position",
			src: base + `create view v as select nam from node;
create table t (a integer references u);`,
			err: `4:25: v: unknown column nam
5:27: t: column a references unknown table u`},
	})
}

// A hard view whose whole check is the membership that gives the decision
// column its domain is marked ByDomain (grounding skips it); a membership
// beside another conjunct, a filter or a join, a join-derived domain, a
// grouped view, or an "or" with something else than "is null" is not.
func TestByDomain(t *testing.T) {
	const schema = `create table node (name varchar(20) primary key, ready boolean not null, cpu integer not null);
-- @variable_columns (node_name nullable)
create table pod (name varchar(20) primary key, node_name varchar(20) references node(name), cpu integer not null, want varchar(20));
`
	for _, tc := range []struct {
		view string
		want bool
	}{
		{`select * from pod where pod.node_name in (select name from node where ready)`, true},
		{`select * from pod where pod.node_name is null or pod.node_name in (select name from node where ready)`, true},
		{`select * from pod where pod.node_name in (select name from node where ready) or pod.node_name is null`, true},
		{`select * from pod where pod.node_name in ('a', 'b')`, true},
		{`select * from pod where pod.cpu > 1 and pod.node_name in (select name from node where ready)`, false},
		{`select * from pod where pod.node_name in (select name from node where ready) and pod.node_name <> 'x'`, false},
		{`select * from pod where pod.want is null or pod.node_name in (select name from node where ready)`, false},
		{`select * from pod where pod.node_name = 'x' or pod.node_name in (select name from node)`, false},
		{`select * from pod join node on node.name = pod.node_name where node.ready`, false},
		{`select * from pod where pod.node_name = pod.want`, false},
		{`select * from pod where pod.node_name not in (select name from node where ready)`, false},
		{`select * from pod where pod.node_name in (select name from node where node.cpu > pod.cpu)`, false},
		{`select pod.node_name from pod group by pod.node_name having pod.node_name in (select name from node) and count(*) < 3`, false},
	} {
		p, err := analyzeSQL(t, schema+"-- @hard_constraint\ncreate view v as "+tc.view+";\n")
		if err != nil {
			t.Fatalf("%s: %v", tc.view, err)
		}
		var v *ir.View
		for _, w := range p.Views {
			if w.Name == "v" {
				v = w
			}
		}
		if v == nil || v.ByDomain != tc.want {
			t.Errorf("%s: ByDomain = %v, want %v", tc.view, v != nil && v.ByDomain, tc.want)
		}
	}
}
