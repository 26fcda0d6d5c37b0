package weave

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestConnectAllChecksEveryModel: ConnectAll reads each relation's columns
// once, and still checks every model's declarations against them: a
// second model that declares columns the database lacks fails with the ErrSchemaMismatch its own Connect would give, and
// is left unconnected; the first is connected.
func TestConnectAllChecksEveryModel(t *testing.T) {
	for _, d := range Databases() {
		t.Run(d.Name, func(t *testing.T) {
			db := d.Open(t)
			ctx := context.Background()
			a, err := Compile(dialectSchema)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.CreateSchema(ctx, db); err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{
				"insert into node values ('n1', 10)",
				"insert into reserved values ('n1', 4)",
				"insert into pod values ('a', 3, null)",
			} {
				if _, err := db.Exec(s); err != nil {
					t.Fatal(err)
				}
			}
			b, err := Compile(strings.Replace(dialectSchema,
				"create table node (name char(8) not null primary key, cap bigint not null);",
				"create table node (name char(8) not null primary key, cap bigint not null, zone varchar(8), ready boolean);", 1))
			if err != nil {
				t.Fatal(err)
			}
			alone := b.Clone().Connect(db)
			if !errors.Is(alone, ErrSchemaMismatch) {
				t.Fatalf("b alone: got %v", alone)
			}
			err = ConnectAll(db, a.Clone(), b)
			if !errors.Is(err, ErrSchemaMismatch) || err.Error() != alone.Error() {
				t.Fatalf("ConnectAll(a, b): got %v, want b's own error %v", err, alone)
			}
			for _, want := range []string{"table node has no column zone", "table node has no column ready"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q: %v", want, err)
				}
			}
			if _, err := b.Solve(ctx, SolveOptions{}); !errors.Is(err, ErrNotConnected) {
				t.Errorf("b after a failed ConnectAll: solve got %v, want ErrNotConnected", err)
			}
			if err := ConnectAll(db, b.Clone(), a); !errors.Is(err, ErrSchemaMismatch) {
				t.Errorf("ConnectAll(b, a): got %v", err)
			}
			// Two models that match both connect, and both solve.
			a1, a2 := a.Clone(), a.Clone()
			if err := ConnectAll(db, a1, a2); err != nil {
				t.Fatal(err)
			}
			for _, m := range []*Model{a1, a2} {
				if res, err := m.Solve(ctx, SolveOptions{Timeout: 2 * time.Second}); err != nil || res.Status != Optimal {
					t.Fatalf("solve: %v %v", res, err)
				}
			}
		})
	}
}

// TestConnectComparesTheViewTheDatabaseHasNow: Connect compares the
// policy's views with the definitions the database has at each Connect
// (the parse of a definition's text is memoised by the text): a view
// replaced after a first Connect by another query, or by the same query
// with another column list, under a name of other case, is a mismatch;
// the policy's own text again connects.
func TestConnectComparesTheViewTheDatabaseHasNow(t *testing.T) {
	const policyFree = "create view free as\nselect node.name, node.cap - sum(reserved.amount) as free, count(*)\n" +
		"from node join reserved on reserved.node = node.name group by node.name, node.cap"
	for _, d := range Databases() {
		t.Run(d.Name, func(t *testing.T) {
			db := d.Open(t)
			ctx := context.Background()
			m, err := Compile(dialectSchema)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.CreateSchema(ctx, db); err != nil {
				t.Fatal(err)
			}
			if err := m.Connect(db); err != nil {
				t.Fatal(err)
			}
			cases := []struct {
				view, want string // want "" connects
			}{
				{"create view FREE as select node.name, node.cap as free, 1 from node", "its query differs"},
				{policyFree, ""},
			}
			if d.Name == "sqlite" {
				// The SQLite comparison is Weave's (the memoised parse);
				// PostgreSQL compares the column names itself.
				cases = append(cases, struct{ view, want string }{
					strings.Replace(policyFree, "create view free as", "create view free (name, free, n) as", 1), "its column list differs"},
					struct{ view, want string }{policyFree, ""})
			}
			for i, c := range cases {
				if _, err := db.Exec("drop view free"); err != nil {
					t.Fatal(err)
				}
				if _, err := db.Exec(c.view); err != nil {
					t.Fatal(err)
				}
				err := m.Clone().Connect(db)
				switch {
				case c.want == "" && err != nil:
					t.Errorf("%d: %s: got %v", i, c.view, err)
				case c.want != "" && (!errors.Is(err, ErrSchemaMismatch) || !strings.Contains(err.Error(), "view free in the database is not the policy's view") ||
					!strings.Contains(err.Error(), c.want)):
					t.Errorf("%d: %s: got %v, want a mismatch saying %q", i, c.view, err, c.want)
				}
			}
		})
	}
}

// TestClonesSolveConcurrently: clones of one compiled model, each on its
// own database, solve at the same time (under -race: nothing of the
// shared program is written) and find what a model compiled for each
// database alone finds.
func TestClonesSolveConcurrently(t *testing.T) {
	m, err := Compile(dialectSchema)
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	got, want := make([]map[string]int64, n), make([]map[string]int64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		// Database i reserves i on n1: on_n1 (the cpu placed on n1, at
		// most what is free there) differs from database to database.
		inserts := []string{
			"insert into node values ('n1', 10), ('n2', 10)",
			fmt.Sprintf("insert into reserved values ('n1', %d), ('n2', 1)", 1+2*i),
			"insert into pod values ('a', 3, null), ('b', 3, null), ('c', 2, null)",
		}
		fresh, err := Compile(dialectSchema)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = solveVerified(t, fresh, OpenSQLite(t), inserts...).Soft
		clone, db := m.Clone(), OpenSQLite(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = func() error {
				ctx := context.Background()
				if err := clone.CreateSchema(ctx, db); err != nil {
					return err
				}
				for _, s := range inserts {
					if _, err := db.Exec(s); err != nil {
						return err
					}
				}
				if err := clone.Connect(db); err != nil {
					return err
				}
				res, err := clone.Solve(ctx, SolveOptions{Verify: true})
				if err == nil {
					got[i] = res.Soft
				}
				return err
			}()
		}()
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil {
			t.Fatalf("database %d: %v", i, errs[i])
		}
		if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
			t.Errorf("database %d: a clone found %v, a model of its own %v", i, got[i], want[i])
		}
	}
	if fmt.Sprint(want[0]) == fmt.Sprint(want[n-1]) {
		t.Errorf("the databases do not tell the solves apart: %v", want)
	}
}
