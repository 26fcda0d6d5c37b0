package weave

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weavesql/weave/internal/testdb"
)

// writerPolicy is the paper's policy, loaded whole into the database by
// the user (tables and every view, as psql -f or sqlite3 would), with a
// trigger of the user's that records every write of a placement.
const writerPolicy = `
create table node (name varchar(20) not null primary key, cpu integer not null);
-- @variable_columns (node_name)
create table pending_pod (
  pod_name varchar(20) not null primary key,
  node_name varchar(20) references node(name),
  cpu_request integer not null
);
create table placement_log (pod_name varchar(20));
create view spare_capacity_per_node as
select node.cpu - sum(pending_pod.cpu_request) as cpu_spare
from node join pending_pod on pending_pod.node_name = node.name
group by node.name, node.cpu;
-- @hard_constraint
create view constraint_capacity as
select * from spare_capacity_per_node where cpu_spare >= 0;
-- @soft_constraint
create view constraint_load_balance_cpu as
select min(cpu_spare) from spare_capacity_per_node;
`

// userObjects lists the database's tables, views and triggers with their
// definitions (the user's schema: the connection's search_path schema on
// PostgreSQL, main on SQLite).
func userObjects(t *testing.T, db *sql.DB, pg bool) string {
	t.Helper()
	q := "select type || ' ' || name || ': ' || coalesce(sql, '') from sqlite_master order by type, name"
	if pg {
		q = `select c.relkind::text || ' ' || c.relname::text || ': ' || coalesce(pg_get_viewdef(c.oid), '')
		     from pg_class c where c.relnamespace = current_schema()::regnamespace order by 1`
	}
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		b.WriteString(s + "\n")
	}
	if pg {
		rows, err := db.Query(`select tgname::text from pg_trigger t join pg_class c on c.oid = t.tgrelid
			where c.relnamespace = current_schema()::regnamespace and not t.tgisinternal order by 1`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			rows.Scan(&s)
			b.WriteString("trigger " + s + "\n")
		}
	}
	return b.String()
}

// TestVerifyDoesNotBlockWriters runs a writer (an UPDATE of the pod table,
// on another connection) at every stage of a verification and asserts it
// is not blocked: on PostgreSQL with a lock_timeout, on a SQLite file
// with no busy timeout, so that a wait is an error rather than a delay.
// The verification writes nothing of the user's (their trigger on
// pending_pod never fires) and leaves the user's tables, views and
// trigger as they were.
func TestVerifyDoesNotBlockWriters(t *testing.T) {
	m, err := Compile(writerPolicy)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "state.db")
		open := func() *sql.DB {
			db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(0)")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		}
		db, writer := open(), open()
		writerBlocks(t, m, db, writer, false, `create trigger log_placement after update of node_name on pending_pod
			begin insert into placement_log values (new.pod_name); end`)
	})
	t.Run("postgres", func(t *testing.T) {
		db := testdb.OpenPostgres(t, "weave_writer_")
		writerBlocks(t, m, db, db, true, `create function log_placement() returns trigger language plpgsql as
			$$ begin insert into placement_log values (coalesce(new.pod_name, old.pod_name)); return null; end $$;
			create trigger log_placement after insert or delete or update of node_name on pending_pod
			for each row execute function log_placement()`)
	})
}

func writerBlocks(t *testing.T, m *Model, db, writerDB *sql.DB, pg bool, trigger string) {
	ctx := context.Background()
	if _, err := db.Exec(writerPolicy); err != nil {
		t.Fatal(err)
	}
	stmts := []string{"insert into node values ('n1', 10), ('n2', 10), ('n3', 6)"}
	for i := 0; i < 12; i++ {
		stmts = append(stmts, fmt.Sprintf("insert into pending_pod values ('p%02d', null, %d)", i, 1+i%3))
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(trigger); err != nil {
		t.Fatal(err)
	}
	before := userObjects(t, db, pg)
	if err := m.Connect(db); err != nil {
		t.Fatal(err)
	}
	writer, err := writerDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	if pg {
		if _, err := writer.ExecContext(ctx, "set lock_timeout = '2s'"); err != nil {
			t.Fatal(err)
		}
	}
	var stages []string
	var slowest time.Duration
	m.verifyHook = func(stage string) {
		start := time.Now()
		_, err := writer.ExecContext(ctx, "update pending_pod set cpu_request = cpu_request where pod_name = 'p00'")
		took := time.Since(start)
		slowest = max(slowest, took)
		if err != nil {
			t.Errorf("verify stage %q: a concurrent UPDATE of pending_pod failed after %v: %v", stage, took, err)
		}
		stages = append(stages, stage)
	}
	defer func() { m.verifyHook = nil }()
	res, err := m.Solve(ctx, SolveOptions{Timeout: 2 * time.Second, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != Optimal {
		t.Fatalf("status %s", res.Status)
	}
	t.Logf("%d concurrent UPDATEs during verify (stages %v), slowest %v", len(stages), stages, slowest)
	if len(stages) < 3 || stages[0] != "loaded" || stages[len(stages)-1] != "checked" {
		t.Errorf("the verifier's stages: %v", stages)
	}
	if slowest > time.Second {
		t.Errorf("a concurrent UPDATE took %v", slowest)
	}
	var logged, placed int
	if err := db.QueryRow("select count(*) from placement_log").Scan(&logged); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("select count(*) from pending_pod where node_name is not null").Scan(&placed); err != nil {
		t.Fatal(err)
	}
	if logged != 0 || placed != 0 {
		t.Errorf("verification wrote to the user's tables: %d trigger firings, %d pods with a node", logged, placed)
	}
	if after := userObjects(t, db, pg); after != before {
		t.Errorf("the user's objects changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
