package weave_test

import (
	"context"
	"sort"
	"testing"

	"github.com/weavesql/weave"
	"github.com/weavesql/weave/internal/testdb"
)

// A pushed-down view whose from clause holds a derived table next to other
// sources: the derived table's columns are numbered in its own from
// clause, and the lookup indexes must be found there (CreateSchema used to
// index into the outer query's sources and panic).
func TestCreateSchemaIndexesDerivedTableLookups(t *testing.T) {
	const schema = `
create table grp (name varchar(10) not null primary key, lim integer);
create table member (name varchar(10) not null primary key, grp varchar(10) not null, weight integer not null);
create table node (name varchar(10) not null primary key, zone varchar(10) not null);
create view limited as
select g.grp, node.name as node_name, g.lim
from (select member.grp, min(grp.lim) as lim from member join grp on grp.name = member.grp
      join node n on n.zone = member.grp
      where grp.lim is not null group by member.grp) g
join node on node.zone <> g.grp;
-- @variable_columns (node)
create table placement (item varchar(10) not null primary key, node varchar(10) references node(name));
-- @hard_constraint
create view not_limited as
select * from placement where placement.node not in (select limited.node_name from limited);
`
	m, err := weave.Compile(schema)
	if err != nil {
		t.Fatal(err)
	}
	db := testdb.OpenSQLite(t)
	if err := m.CreateSchema(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query("select tbl_name || '.' || name from sqlite_master where type = 'index' and name like 'weave_ix_%'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	sort.Strings(got)
	// The derived table joins member.grp = grp.name (grp's key: no index)
	// and node.zone = member.grp.
	want := []string{"member.weave_ix_member_grp", "node.weave_ix_node_zone"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("lookup indexes %v, want %v", got, want)
	}
}
