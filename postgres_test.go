package weave

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weavesql/weave/cp"
)

func TestLoadRows(t *testing.T) {
	for _, d := range Databases() {
		t.Run(d.Name, func(t *testing.T) {
			db := d.Open(t)
			ctx := context.Background()
			if _, err := db.Exec("create table node (name varchar(20) primary key, cpu integer not null, big bigint, ready boolean not null)"); err != nil {
				t.Fatal(err)
			}
			const n = 1000 // several full batches and a remainder
			var rows [][]any
			var want int64
			for i := 0; i < n; i++ {
				var big any
				if i%3 != 0 {
					big = int64(i) << 33
				}
				rows = append(rows, []any{fmt.Sprintf("n%04d", i), int64(i), big, i%2 == 0})
				want += int64(i)
			}
			cols := []string{"name", "cpu", "big", "ready"}
			if err := LoadRows(ctx, db, "node", cols, rows); err != nil {
				t.Fatal(err)
			}
			var count, sum, nulls, ready int64
			if err := db.QueryRow("select count(*), sum(cpu), sum(case when big is null then 1 else 0 end), sum(case when ready then 1 else 0 end) from node").Scan(&count, &sum, &nulls, &ready); err != nil {
				t.Fatal(err)
			}
			if count != n || sum != want || nulls != 334 || ready != n/2 {
				t.Fatalf("count %d sum %d nulls %d ready %d", count, sum, nulls, ready)
			}
			var big int64
			if err := db.QueryRow("select big from node where name = 'n0001'").Scan(&big); err != nil || big != 1<<33 {
				t.Fatalf("bigint round trip: %d, %v", big, err)
			}
			// One transaction: a failing row loads nothing.
			bad := [][]any{{"x1", int64(1), nil, true}, {"n0001", int64(1), nil, true}}
			if err := LoadRows(ctx, db, "node", cols, bad); err == nil {
				t.Fatal("duplicate key loaded")
			}
			if err := db.QueryRow("select count(*) from node where name = 'x1'").Scan(&count); err != nil || count != 0 {
				t.Fatalf("partial load: %d rows, %v", count, err)
			}
			if err := LoadRows(ctx, db, "node", cols, [][]any{{"y"}}); err == nil || !strings.Contains(err.Error(), "row 0 has 1 values") {
				t.Fatalf("short row: %v", err)
			}
		})
	}
}

// dialectSchema exercises what SQLite and PostgreSQL return differently:
// char(n) padding, numeric sums over bigint columns, names of unnamed
// expression columns of pushed-down views, foreign keys pointing at a
// table with decision columns (verification must not delete its rows).
const dialectSchema = `
create table node (name char(8) not null primary key, cap bigint not null);
create table reserved (node char(8) not null references node(name), amount bigint not null);
-- @variable_columns (node)
create table pod (name varchar(8) not null primary key, cpu bigint not null, node char(8) references node(name));
create table pod_label (pod varchar(8) not null references pod(name), k varchar(8) not null);
create view free as
select node.name, node.cap - sum(reserved.amount) as free, count(*)
from node join reserved on reserved.node = node.name group by node.name, node.cap;
-- @hard_constraint
create view fits as
select free.name from free join pod on pod.node = free.name
group by free.name having sum(pod.cpu) <= min(free.free);
-- @soft_constraint
create view on_n1 as select sum(pod.cpu) from pod where pod.node = 'n1';
`

func TestDialectDifferencesAreNormalised(t *testing.T) {
	for _, d := range Databases() {
		t.Run(d.Name, func(t *testing.T) {
			db := d.Open(t)
			m, err := Compile(dialectSchema)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := m.CreateSchema(ctx, db); err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{
				"insert into node values ('n1', 10), ('n2', 10)",
				"insert into reserved values ('n1', 4), ('n2', 1)",
				"insert into pod values ('a', 3, null), ('b', 3, null), ('c', 3, null)",
				"insert into pod_label values ('a', 'web')",
			} {
				if _, err := db.Exec(s); err != nil {
					t.Fatal(err)
				}
			}
			if err := m.Connect(db); err != nil {
				t.Fatal(err)
			}
			res, err := m.Solve(ctx, SolveOptions{Timeout: 2 * time.Second, Verify: true})
			if err != nil {
				t.Fatal(err)
			}
			// n1 has 6 free, n2 9: at most two pods of 3 on n1.
			if res.Status != Optimal || res.Soft["on_n1"] != 6 {
				t.Fatalf("status %s, soft %v", res.Status, res.Soft)
			}
			for _, r := range res.Table("pod").Rows {
				if n := r["node"]; n != "n1" && n != "n2" {
					t.Errorf("pod %v on %q: char(n) padding leaked", r["name"], n)
				}
			}
			if got := res.Stats.Rows["free"]; got != 2 {
				t.Errorf("free: %d rows", got)
			}
		})
	}
}

// killBackend solves with the native engine after running kill: the
// database goes away between the snapshot and the verification.
type killBackend struct{ kill func() }

func (killBackend) Name() string { return "kill" }
func (k killBackend) Solve(ctx context.Context, m *cp.Model, p cp.Params) (*cp.Response, error) {
	k.kill()
	return m.Solve(ctx, p)
}

// TestPostgresConnectionLoss: the server ends the connection mid-solve
// (pg_terminate_backend): the solve fails with a clear error and no
// result, and the next solve reconnects and works.
func TestPostgresConnectionLoss(t *testing.T) {
	db := OpenPostgres(t)
	db.SetMaxOpenConns(1) // the connection killed is the one the model uses
	admin, err := sql.Open("pgx", PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	m, err := Compile(dialectSchema)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := m.CreateSchema(ctx, db); err != nil {
		t.Fatal(err)
	}
	if err := LoadRows(ctx, db, "node", []string{"name", "cap"}, [][]any{{"n1", int64(10)}}); err != nil {
		t.Fatal(err)
	}
	if err := LoadRows(ctx, db, "reserved", []string{"node", "amount"}, [][]any{{"n1", int64(1)}}); err != nil {
		t.Fatal(err)
	}
	if err := LoadRows(ctx, db, "pod", []string{"name", "cpu", "node"}, [][]any{{"a", int64(2), nil}}); err != nil {
		t.Fatal(err)
	}
	if err := m.Connect(db); err != nil {
		t.Fatal(err)
	}
	kill := func() {
		var pid int
		if err := db.QueryRow("select pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		var ok bool
		if err := admin.QueryRow("select pg_terminate_backend($1)", pid).Scan(&ok); err != nil || !ok {
			t.Fatalf("terminating backend %d: %v %v", pid, ok, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The model's connection is idle in the pool while the solver runs:
	// the backend is terminated then; verification finds it gone.
	res, err := m.Solve(ctx, SolveOptions{Timeout: time.Second, Verify: true, Backend: killBackend{kill: kill}})
	if err == nil || res != nil {
		t.Fatalf("the connection died mid-solve: got result %v, error %v", res, err)
	}
	if !strings.Contains(err.Error(), "connection to the database was lost") {
		t.Errorf("unclear error: %v", err)
	}
	if errors.Is(err, ErrVerify) {
		t.Errorf("a lost connection is not a verification failure: %v", err)
	}
	// The pool drops the dead connection: the next solve works.
	res, err = m.Solve(ctx, SolveOptions{Timeout: time.Second, Verify: true})
	if err != nil || res.Status != Optimal || res.Table("pod").Rows[0]["node"] != "n1" {
		t.Fatalf("after reconnecting: %v, %v", res, err)
	}
	// The snapshot read itself fails cleanly when the connection is gone.
	kill()
	res, err = m.Solve(ctx, SolveOptions{Timeout: time.Second})
	if err == nil {
		// database/sql may retry on a fresh connection; then the solve
		// simply succeeds, which is fine.
		if res == nil || res.Status != Optimal {
			t.Fatalf("after a kill before the read: %v", res)
		}
	} else if res != nil || !strings.Contains(err.Error(), "connection to the database was lost") {
		t.Fatalf("after a kill before the read: %v, %v", res, err)
	}
	if _, err := m.Solve(ctx, SolveOptions{Timeout: time.Second, Verify: true}); err != nil {
		t.Fatalf("after reconnecting again: %v", err)
	}
}

// TestPostgresSchemaMismatch: a database whose tables differ from the
// policy is named, table and column.
func TestPostgresSchemaMismatch(t *testing.T) {
	db := OpenPostgres(t)
	m, err := Compile(dialectSchema)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := m.CreateSchema(ctx, db); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"drop view free",
		"alter table pod drop column cpu",
		"alter table node alter column cap type varchar(10)",
		"create view free as select name, 1 as free from node",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	err = m.Connect(db)
	if !errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("got %v", err)
	}
	for _, want := range []string{"table pod has no column cpu", "column node.cap has type VARCHAR", "view free has 2 columns in the database, the schema declares 3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

func TestStringOrderingNeedsByteCollation(t *testing.T) {
	m, err := Compile(`create table node (name varchar(10) primary key);
-- @variable_columns (node)
create table pod (name varchar(10) primary key, app varchar(10) not null, node varchar(10) references node(name));
-- @hard_constraint
create view apart as select * from pod a join pod b on a.app = b.app and a.name < b.name where a.node <> b.node;`,
		// Rewritten to all_different, the order no longer matters (any
		// total order gives the same pairs); kept pairwise, it does.
		WithoutRewrite("pairwise_to_all_different"))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.stringOrdering(); got != "apart" {
		t.Errorf("stringOrdering = %q", got)
	}
	if m, err = Compile(dialectSchema); err != nil || m.stringOrdering() != "" {
		t.Errorf("no string ordering: %q, %v", m.stringOrdering(), err)
	}
	for c, want := range map[string]bool{"C": true, "POSIX": true, "C.UTF-8": true, "en_US.UTF-8": false, "de_DE.utf8": false} {
		if byteOrderCollation(c) != want {
			t.Errorf("byteOrderCollation(%s) != %v", c, want)
		}
	}
}

// A solve reads the state with PostgreSQL's JIT compilation off: the
// nested views of a policy pass jit_above_cost on small tables without
// statistics, and compiling one took 16 s where running it took
// milliseconds. Observed from inside the read transaction: the table the
// model reads is replaced in the database by a view of the setting.
func TestReadTransactionHasJITOff(t *testing.T) {
	db := OpenPostgres(t)
	ctx := context.Background()
	m, err := Compile(`
create table node (name varchar(10) primary key);
create table setting (name varchar(10) not null primary key, value varchar(10) not null);
-- @variable_columns (node nullable)
create table pod (name varchar(10) primary key, node varchar(10) references node(name));
-- @hard_constraint
create view read_setting as select * from pod join setting on setting.name = pod.name
where setting.value = 'x' or pod.node is null;
`)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CreateSchema(ctx, db); err != nil {
		t.Fatal(err)
	}
	// The server's default, which the read transaction must not keep
	// (PostgreSQL's own default is on).
	var jit string
	if err := db.QueryRow("select current_setting('jit')").Scan(&jit); err != nil || jit != "on" {
		t.Fatalf("the test needs a server with jit on by default: %q, %v", jit, err)
	}
	for _, s := range []string{
		"drop table setting",
		"create view setting as select cast('jit' as varchar(10)) as name, cast(current_setting('jit') as varchar(10)) as value",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Connect(db); err != nil {
		t.Fatal(err)
	}
	snap, err := m.fetch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := snap.Relations["setting"]
	if r == nil || len(r.Rows) != 1 {
		t.Fatalf("setting read as %+v", r)
	}
	if got := fmt.Sprint(r.Rows[0][1]); got != "off" {
		t.Fatalf("jit = %q in the read transaction, want off", got)
	}
	// Outside the read transaction the setting is the server's again.
	if err := db.QueryRow("select current_setting('jit')").Scan(&jit); err != nil || jit != "on" {
		t.Fatalf("jit outside the solve: %q, %v", jit, err)
	}
}
