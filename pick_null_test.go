package weave_test

import (
	"context"
	"testing"
	"time"

	"github.com/weavesql/weave"
	"github.com/weavesql/weave/internal/testdb"
)

// "case when a < b then a else b end" is grounded as min(a, b) only where
// a and b are NULL together or never: with b NULL the comparison is
// unknown and SQL yields b, NULL, where least(a, b) would yield a. Here y
// may be left NULL and x may not: the best is every y NULL (each case
// NULL, coalesced to 10), which min(x, y) would miss (1 at best). The
// case is then grounded as a reified comparison and a choice, with
// min(x, y) required of its value where neither is NULL.
func TestPickWithANullOperandIsACase(t *testing.T) {
	const tables = `
create table dom (v integer primary key);
-- @variable_columns (x, y nullable)
create table t (id integer primary key, x integer, y integer);
-- @hard_constraint
create view x_in_dom as select * from t where t.x in (select v from dom);
-- @hard_constraint
create view y_in_dom as select * from t where t.y is null or t.y in (select v from dom);
-- @hard_constraint
create view x_is_one as select * from t where t.x = 1;
`
	for _, c := range []struct{ name, soft string }{
		{"per row", `-- @soft_constraint
create view best as select coalesce(case when t.x < t.y then t.x else t.y end, 10) from t;`},
		{"min over the rows", `-- @soft_constraint
create view best as select coalesce(min(case when t.x < t.y then t.x else t.y end), 20) from t;`},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := weave.Compile(tables + c.soft)
			if err != nil {
				t.Fatal(err)
			}
			db := testdb.OpenSQLite(t)
			ctx := context.Background()
			if err := m.CreateSchema(ctx, db); err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{"insert into dom values (1), (2)", "insert into t values (1, null, null), (2, null, null)"} {
				if _, err := db.Exec(s); err != nil {
					t.Fatal(err)
				}
			}
			if err := m.Connect(db); err != nil {
				t.Fatal(err)
			}
			res, err := m.Solve(ctx, weave.SolveOptions{Timeout: 5 * time.Second, Verify: true, NoExplain: true})
			if err != nil {
				t.Fatal(err)
			}
			const want = 20 // 10 per row, or 20 for the NULL min
			if res.Status != weave.Optimal || *res.Objective != want {
				t.Errorf("%v objective %v, want OPTIMAL %d (every y NULL)", res.Status, *res.Objective, want)
			}
			// Where x and y are both set, each row's case is also min(x, y)
			// under that condition (pickAlso): it propagates as the direct
			// form does.
			if got := res.Stats.ByKind["min_equality"]; got < 2 {
				t.Errorf("%d min_equality constraints, want one per row at least: %v", got, res.Stats.ByKind)
			}
		})
	}
}
