package weave

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The verifier judges the SQL as written: a view restated by a rewrite
// pass (pairwise inequalities as all_different) is still checked in its
// original, pairwise form, so a wrong rewrite cannot hide.
func TestVerifyChecksTheOriginalSQL(t *testing.T) {
	schema := `
create table node (name varchar(10) primary key);
-- @variable_columns (node)
create table pod (name varchar(10) primary key, app varchar(10) not null, node varchar(10) references node(name));
-- @hard_constraint
create view apart as
select * from pod a join pod b on a.app = b.app and a.name < b.name where a.node <> b.node;
-- @soft_constraint
create view on_n1 as select count(*) from pod where node = 'n1';
`
	m, err := Compile(schema)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.rewrites) == 0 || m.rewrites[len(m.rewrites)-1] != "pairwise_to_all_different" {
		t.Fatalf("the rewrite must fire for this test to mean anything: %v", m.rewrites)
	}
	for _, d := range Databases() {
		t.Run(d.Name, func(t *testing.T) { verifyOriginalSQL(t, m, d.Open(t)) })
	}
}

func verifyOriginalSQL(t *testing.T, m *Model, db *sql.DB) {
	ctx := context.Background()
	if err := m.CreateSchema(ctx, db); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("insert into node values ('n1'), ('n2'); insert into pod values ('p1', 'a', null), ('p2', 'a', null)"); err != nil {
		t.Fatal(err)
	}
	if err := m.Connect(db); err != nil {
		t.Fatal(err)
	}
	cols := []string{"name", "app", "node"}
	bad := map[string]*Table{"pod": {Name: "pod", Columns: cols, Rows: []Row{
		{"name": "p1", "app": "a", "node": "n1"}, {"name": "p2", "app": "a", "node": "n1"}}}}
	if _, err := m.evaluateInDB(ctx, bad); !errors.Is(err, ErrVerify) || !strings.Contains(err.Error(), "apart") {
		t.Fatalf("two pods of one app on n1: got %v", err)
	}
	// The table's own constraints on decision columns hold too: the
	// temporary copies carry none, the verifier checks them.
	dangling := map[string]*Table{"pod": {Name: "pod", Columns: cols, Rows: []Row{
		{"name": "p1", "app": "a", "node": "n1"}, {"name": "p2", "app": "a", "node": "n9"}}}}
	if _, err := m.evaluateInDB(ctx, dangling); !errors.Is(err, ErrVerify) || !strings.Contains(err.Error(), "table pod: (node) references no row of node") {
		t.Fatalf("a pod on a node that does not exist: got %v", err)
	}
	good := map[string]*Table{"pod": {Name: "pod", Columns: cols, Rows: []Row{
		{"name": "p1", "app": "a", "node": "n1"}, {"name": "p2", "app": "a", "node": "n2"}}}}
	soft, err := m.evaluateInDB(ctx, good)
	if err != nil || soft["on_n1"] != 1 {
		t.Fatalf("a valid placement: soft %v, err %v", soft, err)
	}
	// A large assignment: its temporary table is analysed (analyzeRows).
	large := &Table{Name: "pod", Columns: cols}
	for i := 0; i < analyzeRows; i++ {
		large.Rows = append(large.Rows, Row{"name": fmt.Sprintf("p%d", i), "app": fmt.Sprintf("a%d", i), "node": "n1"})
	}
	soft, err = m.evaluateInDB(ctx, map[string]*Table{"pod": large})
	if err != nil || soft["on_n1"] != analyzeRows {
		t.Fatalf("%d pods on n1: soft %v, err %v", analyzeRows, soft, err)
	}
	// A claimed soft value that the database disagrees with is an error.
	res := &Result{Tables: good, Soft: map[string]int64{"on_n1": 2}}
	if err := m.verify(ctx, res); !errors.Is(err, ErrVerify) || !strings.Contains(err.Error(), "on_n1") {
		t.Fatalf("wrong soft claim: got %v", err)
	}
}
