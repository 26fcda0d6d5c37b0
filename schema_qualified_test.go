package weave_test

import (
	"context"
	"database/sql"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/weavesql/weave"
	"github.com/weavesql/weave/internal/testdb"
)

// qualify names every table and view of a script by schema: its create
// statements, from and join clauses, and inserts.
func qualify(src, schema string) string {
	re := regexp.MustCompile(`(?i)\b(create table|create view|from|join|insert into)(\s+)([a-z_]+)\b`)
	return re.ReplaceAllString(src, "${1}${2}"+schema+".${3}")
}

// TestSchemaQualifiedNames solves the paper's policy with every table and
// view qualified by its schema (PostgreSQL: a schema outside the
// search_path; SQLite: main), both as Weave creates the schema
// (CreateSchema) and as the user loads the whole policy, views included.
func TestSchemaQualifiedNames(t *testing.T) {
	policy, err := os.ReadFile("testdata/paper.sql")
	if err != nil {
		t.Fatal(err)
	}
	state, err := os.ReadFile("examples/quickstart/state.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range weave.Databases() {
		for _, userLoads := range []bool{false, true} {
			name := d.Name + "/create_schema"
			if userLoads {
				name = d.Name + "/user_loads"
			}
			t.Run(name, func(t *testing.T) {
				var db *sql.DB
				schema := "main"
				if d.Postgres() {
					db = testdb.PostgresAdmin(t) // search_path: the server's default
					schema = testdb.NewSchema(t, db, "weave_qualified_")
				} else {
					db = d.Open(t)
				}
				m, err := weave.Compile(qualify(string(policy), schema))
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				if userLoads {
					mustExec(t, db, qualify(string(policy), schema))
				} else if err := m.CreateSchema(ctx, db); err != nil {
					t.Fatal(err)
				}
				mustExec(t, db, qualify(string(state), schema))
				if err := m.Connect(db); err != nil {
					t.Fatal(err)
				}
				res, err := m.Solve(ctx, weave.SolveOptions{Timeout: 5 * time.Second, Verify: true})
				if err != nil {
					t.Fatal(err)
				}
				if res.Status != weave.Optimal || res.Objective == nil || *res.Objective != 1750 {
					t.Fatalf("status %s, objective %v, want OPTIMAL 1750 (the quickstart's optimum)", res.Status, res.Objective)
				}
				if n := len(res.Table("pending_pod").Rows); n != 12 {
					t.Fatalf("%d pods, want 12", n)
				}
			})
		}
	}
}

// A reference qualified by another schema than the table's declaration
// is a compile error.
func TestSchemaQualifiedMismatch(t *testing.T) {
	_, err := weave.Compile(`create table a.t (x integer);
-- @hard_constraint
create view v as select * from b.t where x > 0;`)
	if err == nil || !regexp.MustCompile(`b\.t: the policy declares t in schema a`).MatchString(err.Error()) {
		t.Fatalf("got %v", err)
	}
}
