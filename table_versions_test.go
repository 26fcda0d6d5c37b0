package weave

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"testing"
)

// reuseSchema is semijoinBase with a view that reads node and label
// reduced to ready_node (joined through pod.node) and tag whole (through
// an IN of a stored column).
const reuseSchema = semijoinBase + `
create table tag (pod varchar(10) not null, k varchar(10) not null);
-- @soft_constraint
create view labelled as select count(*) from pod where pod.node in (select l.node from label l where l.k = 'fast');
-- @soft_constraint
create view tagged as select count(*) from pod where pod.node is not null and pod.name in (select g.pod from tag g where g.k = 'fast');
`

// SolveOptions.TableVersions: a model given versions solves as one that
// reads every table, round after round of random writes, and takes from
// its last solve exactly the tables whose versions did not change (the
// reduced node and label tables from their third solve at one version,
// tag and pod, read whole, from their second). Each round writes some tables (and bumps their versions) or
// none; both models then solve the same database with the same seed.
func TestTableVersionsReuseUnchangedTables(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testTableVersions(t, OpenSQLite(t)) })
	t.Run("postgres", func(t *testing.T) { testTableVersions(t, OpenPostgres(t)) })
}

func testTableVersions(t *testing.T, db *sql.DB) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(7))
	reusing, err := Compile(reuseSchema)
	if err != nil {
		t.Fatal(err)
	}
	reading := reusing.Clone()
	if err := reusing.CreateSchema(ctx, db); err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for i := 0; i < 12; i++ {
		exec("insert into node values ($1, $2, $3)", fmt.Sprintf("n%02d", i), 2+rng.Intn(6), rng.Intn(4) > 0)
		exec("insert into label values ($1, $2, null)", fmt.Sprintf("n%02d", i), []string{"fast", "slow"}[rng.Intn(2)])
	}
	for i := 0; i < 8; i++ {
		exec("insert into pod values ($1, $2, null)", fmt.Sprintf("p%d", i), 1+rng.Intn(3))
		exec("insert into tag values ($1, $2)", fmt.Sprintf("p%d", i), []string{"fast", "slow"}[rng.Intn(2)])
	}
	for _, m := range []*Model{reusing, reading} {
		if err := m.Connect(db); err != nil {
			t.Fatal(err)
		}
	}
	versions := map[string]uint64{"node": 1, "label": 1, "tag": 1, "pod": 1}
	unchanged := map[string]int{} // solves in a row at the table's version
	for round := 0; round < 40; round++ {
		var wrote []string
		switch rng.Intn(5) {
		case 0:
			exec("update node set ready = not ready where name = $1", fmt.Sprintf("n%02d", rng.Intn(12)))
			wrote = append(wrote, "node")
		case 1:
			exec("update label set k = case k when 'fast' then 'slow' else 'fast' end where node = $1", fmt.Sprintf("n%02d", rng.Intn(12)))
			wrote = append(wrote, "label")
		case 2:
			exec("update tag set k = case k when 'fast' then 'slow' else 'fast' end where pod = $1", fmt.Sprintf("p%d", rng.Intn(8)))
			wrote = append(wrote, "tag")
		case 3:
			exec("update pod set cpu = $1 where name = $2", 1+rng.Intn(3), fmt.Sprintf("p%d", rng.Intn(8)))
			wrote = append(wrote, "pod")
		}
		for _, w := range wrote {
			versions[w]++
			unchanged[w] = 0
		}
		got, err := reusing.Solve(ctx, SolveOptions{Seed: 1, TableVersions: versions})
		if err != nil {
			t.Fatal(err)
		}
		want, err := reading.Solve(ctx, SolveOptions{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Stats.Rows, want.Stats.Rows) {
			t.Fatalf("round %d: rows %v, reading every table %v", round, got.Stats.Rows, want.Stats.Rows)
		}
		if *got.Objective != *want.Objective || !reflect.DeepEqual(got.Table("pod").Rows, want.Table("pod").Rows) {
			t.Fatalf("round %d: placed %v (objective %d), reading every table %v (%d)", round,
				got.Table("pod").Rows, *got.Objective, want.Table("pod").Rows, *want.Objective)
		}
		if len(want.Stats.Reused) != 0 {
			t.Fatalf("a solve without versions reused %v", want.Stats.Reused)
		}
		for _, table := range []string{"node", "label", "tag", "pod"} {
			// node and label are read reduced: whole at their second
			// solve in a row, reused from the third; tag and pod are read
			// whole: kept at the first, reused from the second.
			after := 1
			if table == "node" || table == "label" {
				after = 2
			}
			if reused := slices.Contains(got.Stats.Reused, table); reused != (unchanged[table] >= after) {
				t.Fatalf("round %d: %s reused %v after %d unchanged solves (reused: %v)", round, table, reused, unchanged[table], got.Stats.Reused)
			}
			unchanged[table]++
		}
	}
	// The promise is the caller's: rows changed under an unchanged
	// version are not seen. A reused node table still lacks the new node,
	// which ready_node, a view read at every solve, holds.
	for i := 0; i < 2; i++ { // node kept whole
		if _, err := reusing.Solve(ctx, SolveOptions{Seed: 1, TableVersions: versions}); err != nil {
			t.Fatal(err)
		}
	}
	exec("insert into node values ('n99', 100, true)")
	got, err := reusing.Solve(ctx, SolveOptions{Seed: 1, TableVersions: versions})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got.Stats.Reused, "node") {
		t.Fatalf("node not reused: %v", got.Stats.Reused)
	}
	want, err := reading.Solve(ctx, SolveOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got.Stats.Rows["node"]+1 != want.Stats.Rows["node"] {
		t.Fatalf("node rows: %d reused, %d read: the reused table should lack n99", got.Stats.Rows["node"], want.Stats.Rows["node"])
	}
}
