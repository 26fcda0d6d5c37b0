package weave_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"sort"
	"time"

	_ "modernc.org/sqlite" // the SQLite driver, registered as "sqlite"

	"github.com/weavesql/weave"
)

// examplePolicy places pods on nodes: a pod lands on a node that is not
// cordoned and has the CPU for it, and the smallest spare CPU over the
// nodes that receive pods is as large as possible.
const examplePolicy = `
create table node (
  name varchar(10) not null primary key,
  cpu integer not null,
  cordoned boolean not null
);

-- @variable_columns (node)
create table pod (
  name varchar(10) not null primary key,
  cpu integer not null,
  node varchar(10) references node(name)
);

-- @hard_constraint
create view schedulable as
select * from pod join node on pod.node = node.name
where node.cordoned = false;

-- @hard_constraint
create view capacity as
select node.name from node join pod on pod.node = node.name
group by node.name
having sum(pod.cpu) <= node.cpu;

create view spare as
select (node.cpu - sum(pod.cpu)) as cpu_spare
from node join pod on pod.node = node.name
group by node.name;

-- @soft_constraint
create view balance as
select min(cpu_spare) from spare;
`

// openExample compiles the policy, opens an empty in-memory SQLite
// database, creates the policy's tables in it, inserts the state and
// connects the model to it.
func openExample(state ...string) (*weave.Model, *sql.DB) {
	m, err := weave.Compile(examplePolicy)
	if err != nil {
		log.Fatal(err)
	}
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	// An in-memory SQLite database lives in one connection.
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	if err := m.CreateSchema(ctx, db); err != nil {
		log.Fatal(err)
	}
	for _, stmt := range state {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			log.Fatal(err)
		}
	}
	if err := m.Connect(db); err != nil {
		log.Fatal(err)
	}
	return m, db
}

// Compile needs no database: it parses and analyses the policy and tells
// what it will do with each view. Views that read no decision column
// would be pushed down to the database; the others become constraints.
func ExampleCompile() {
	m, err := weave.Compile(examplePolicy)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("decides:", m.VariableColumns())
	for _, v := range m.Views() {
		fmt.Printf("line %2d: %s is %s\n", v.Line, v.Name, v.Role)
	}
	// Output:
	// decides: [pod.node]
	// line 16: schedulable is hard
	// line 21: capacity is hard
	// line 26: spare is intermediate
	// line 32: balance is soft
}

// Solve reads the state, solves the policy over it and returns the pod
// table with its node column filled in. Three pods (3, 2 and 1 CPU) on a
// 4-CPU and a 6-CPU node, the 8-CPU node cordoned: the smallest spare is
// at most 2 (10 CPU less 6 requested, over two nodes), reached only with
// the 2-CPU pod alone on n1.
func ExampleModel_Solve() {
	m, db := openExample(
		"insert into node values ('n1', 4, false), ('n2', 6, false), ('n3', 8, true)",
		"insert into pod values ('a', 3, null), ('b', 2, null), ('c', 1, null)",
	)
	defer db.Close()

	// One worker and a seed make the search reproducible; the timeout
	// only guards against a runaway search (this one is proven optimal
	// in milliseconds).
	res, err := m.Solve(context.Background(), weave.SolveOptions{Timeout: time.Minute, Seed: 1, Workers: 1, Verify: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", res.Status)
	fmt.Println("objective:", *res.Objective, "balance:", res.Soft["balance"])
	pods := res.Table("pod")
	fmt.Println("columns:", pods.Columns)
	rows := pods.Rows
	sort.Slice(rows, func(i, j int) bool { return rows[i]["name"].(string) < rows[j]["name"].(string) })
	for _, row := range rows {
		fmt.Printf("pod %v (%v CPU) -> %v\n", row["name"], row["cpu"], row["node"])
	}
	// Output:
	// status: OPTIMAL
	// objective: 2 balance: 2
	// columns: [name cpu node]
	// pod a (3 CPU) -> n2
	// pod b (2 CPU) -> n1
	// pod c (1 CPU) -> n2
}

// When the hard constraints cannot all hold, Solve returns the status
// Infeasible (not an error) and an explanation: the hard-constraint views
// that conflict, with the rows each was grounded for. Here a 5-CPU pod
// fits only on the cordoned node.
func ExampleExplanation() {
	m, db := openExample(
		"insert into node values ('n1', 4, false), ('n2', 8, true)",
		"insert into pod values ('big', 5, null)",
	)
	defer db.Close()

	// ExplainTimeout bounds the search for the explanation (1s by
	// default); this one takes milliseconds and is proven minimal.
	res, err := m.Solve(context.Background(), weave.SolveOptions{Timeout: time.Minute, Seed: 1, Workers: 1, ExplainTimeout: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", res.Status)
	// One conflicting item a line: rows by table and key, with the
	// columns the view reads; a group by the row it is of.
	fmt.Print(res.Explanation)
	// The same explanation as data, for a program to act on: per view,
	// its items (a row or group each), their groups and rows.
	for _, c := range res.Explanation.Constraints {
		for _, it := range c.Items {
			for _, g := range it.Groups {
				fmt.Printf("%s: group of %s %v (%s %s)\n", c.View, g.View, g.Key, g.Table, g.RowKey)
			}
			for _, r := range it.Rows {
				fmt.Printf("%s: %s %s %s %v\n", c.View, r.Role, r.Table, r.Key, r.Row)
			}
		}
	}
	// Output:
	// status: INFEASIBLE
	// no solution: these constraints conflict (each one is needed):
	//   schedulable (line 16): pod big; node n2 (cordoned=true)
	//   capacity (line 21) for node n1 (cpu=4): pod big (cpu=5)
	// schedulable: decision pod big map[cpu:5 name:big]
	// schedulable: data node n2 map[cordoned:true cpu:8 name:n2]
	// capacity: group of capacity map[name:n1] (node n1)
	// capacity: decision pod big map[cpu:5 name:big]
	// capacity: data node n1 map[cordoned:false cpu:4 name:n1]
}
