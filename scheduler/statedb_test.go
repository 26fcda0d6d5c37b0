package scheduler

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weavesql/weave/internal/testdb"
)

// The state-database tests run on the scheduler's own in-memory SQLite
// database (Config.DB nil), a SQLite file, and PostgreSQL when
// WEAVE_TEST_POSTGRES holds a DSN (postgres://user@host:port/db?sslmode=disable),
// each test in a fresh schema, as the root package's tests do. Without a
// DSN the PostgreSQL subtests skip; under CI=true they fail.

type stateDB struct {
	name string
	open func(t testing.TB) *sql.DB // nil: the scheduler's in-memory SQLite
}

func stateDBs() []stateDB {
	return []stateDB{{"memory", nil}, {"sqlite-file", openSQLiteFile}, {"postgres", func(t testing.TB) *sql.DB { return testdb.OpenPostgres(t, "weave_sched_test_") }}}
}

// raceDBs is ds without -race, and ds without the SQLite file under it:
// the in-memory SQLite runs the same statements, at a twentieth of the
// speed under the race detector; .ci/run runs the scheduler's tests on
// every database without -race too.
func raceDBs(ds []stateDB) []stateDB {
	if !raceDetector {
		return ds
	}
	var out []stateDB
	for _, d := range ds {
		if d.name != "sqlite-file" {
			out = append(out, d)
		}
	}
	return out
}

func openSQLiteFile(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newOn starts a test scheduler (newTest: Verify on) on a database.
func newOn(t testing.TB, d stateDB, cfg Config) *Scheduler {
	t.Helper()
	if d.open != nil {
		cfg.DB = d.open(t)
	}
	return newTest(t, cfg)
}

func queryStrings(t testing.TB, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var a, b sql.NullString
		dst := []any{&a}
		if cols, _ := rows.Columns(); len(cols) == 2 {
			dst = append(dst, &b)
		}
		if err := rows.Scan(dst...); err != nil {
			t.Fatal(err)
		}
		if b.Valid {
			out = append(out, a.String+"="+b.String)
		} else {
			out = append(out, a.String)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func countRows(t testing.TB, db *sql.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRow("select count(*) from " + table).Scan(&n); err != nil {
		t.Fatalf("counting %s: %v", table, err)
	}
	return n
}

// boundInDB lists "pod=node" for the pods the database holds as bound.
func boundInDB(t testing.TB, db *sql.DB) []string {
	return queryStrings(t, db, "select name, node_name from pod where node_name is not null")
}

func bindingsOf(placed map[string]string) []string {
	var out []string
	for p, n := range placed {
		out = append(out, p+"="+n)
	}
	sort.Strings(out)
	return out
}

// TestStateDBPlacement: a small batch mixing the policies that read
// boolean and nullable columns (taints, readiness, required node affinity,
// anti-affinity, hard spreading, host ports, zonal volumes) is placed on
// every database: each pod on a node the Go filter accepts, the database
// holding the same bindings and the booleans as written.
func TestStateDBPlacement(t *testing.T) {
	t.Parallel()
	for _, d := range raceDBs(stateDBs()) {
		t.Run(d.name, func(t *testing.T) {
			s := newOn(t, d, Config{BatchSize: 10})
			ctx := context.Background()
			nodes := pluginCases()[0].nodes
			addNodes(t, s, nodes...)
			if err := s.UpsertVolume(ctx, "pv", "zb"); err != nil {
				t.Fatal(err)
			}
			web := map[string]string{"app": "web"}
			anti := []PodAffinityTerm{{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"app": "web"}), TopologyKey: LabelHostname}}
			pods := []Pod{
				{Name: "web-0", CPU: 500, Memory: 500, Labels: web, Affinity: anti, Group: "web"},
				{Name: "web-1", CPU: 500, Memory: 500, Labels: web, Affinity: anti, Group: "web"},
				{Name: "ssd", CPU: 500, Memory: 500, RequiredNodeAffinity: [][]NodeRequirement{{{Key: "disk", Operator: "In", Values: []string{"ssd"}}}}},
				{Name: "tolerant", CPU: 500, Memory: 500, RequestedNode: "a2", Tolerations: []Toleration{{Key: "dedicated", Operator: "Equal", Value: "db"}}},
				{Name: "port", CPU: 100, HostPorts: []HostPort{{Protocol: "TCP", Port: 80}}},
				{Name: "zonal", CPU: 100, Volumes: []string{"pv"}},
				{Name: "spread", CPU: 100, Group: "s", Spread: []SpreadConstraint{{TopologyKey: LabelZone, MaxSkew: 1, Hard: true}}},
			}
			addPods(t, s, pods...)
			placed, us := schedule(t, s)
			if len(placed) != len(pods) || len(us) != 0 {
				t.Fatalf("placed %v, unschedulable %v", placed, us)
			}
			st := s.State()
			for _, p := range pods {
				n := placed[p.Name]
				np := normalizePod(p)
				if !contains(st.FeasibleNodes(&np), n) {
					t.Errorf("%s placed on %s, not a feasible node %v", p.Name, n, st.FeasibleNodes(&np))
				}
			}
			if placed["web-0"] == placed["web-1"] {
				t.Errorf("anti-affine replicas share node %s", placed["web-0"])
			}
			if placed["ssd"] != "a1" || placed["tolerant"] != "a2" || placed["zonal"] != "b1" {
				t.Errorf("ssd %s (want a1), tolerant %s (want a2), zonal %s (want b1)", placed["ssd"], placed["tolerant"], placed["zonal"])
			}
			if err := st.Check(nil); err != nil {
				t.Fatal(err)
			}
			db := s.DB()
			if got, want := boundInDB(t, db), bindingsOf(placed); !reflect.DeepEqual(got, want) {
				t.Errorf("database bindings %v, want %v", got, want)
			}
			if got := queryStrings(t, db, "select name from node where unschedulable = true"); !reflect.DeepEqual(got, []string{"c1"}) {
				t.Errorf("unschedulable nodes in the database: %v", got)
			}
			if got := queryStrings(t, db, "select name from node where ready = false or memory_pressure = true"); !reflect.DeepEqual(got, []string{"c2", "c3"}) {
				t.Errorf("not ready or under pressure: %v", got)
			}
			if got := queryStrings(t, db, "select pod_name from pod_affinity_term where anti = true and required = true"); !reflect.DeepEqual(got, []string{"web-0", "web-1"}) {
				t.Errorf("anti-affinity terms: %v", got)
			}
			if n := countRows(t, db, "pod"); n != len(pods) {
				t.Errorf("%d pod rows, want %d", n, len(pods))
			}
			// Phase changes and deletions reach the database.
			if err := s.SetPhase(ctx, "port", PhaseRunning); err != nil {
				t.Fatal(err)
			}
			if err := s.DeletePod(ctx, "zonal"); err != nil {
				t.Fatal(err)
			}
			if got := queryStrings(t, db, "select name from pod where phase = 'Running'"); !reflect.DeepEqual(got, []string{"port"}) {
				t.Errorf("running pods: %v", got)
			}
			if n := countRows(t, db, "pod_volume"); n != 0 {
				t.Errorf("%d pod_volume rows after deleting the pod", n)
			}
		})
	}
}

func contains(l []string, x string) bool {
	for _, y := range l {
		if y == x {
			return true
		}
	}
	return false
}

// TestStateDBPreemption: the paper's cross-node preemption (Fig. 3) on
// every database; the evicted pod leaves the database.
func TestStateDBPreemption(t *testing.T) {
	t.Parallel()
	for _, d := range raceDBs(stateDBs()) {
		t.Run(d.name, func(t *testing.T) {
			s := newOn(t, d, Config{})
			ctx := context.Background()
			addFig3(t, s)
			if placed, us := schedule(t, s); len(placed) != 0 || len(us) != 1 {
				t.Fatalf("the placement model should not place pod1: %v %v", placed, us)
			}
			bs, ev, us, err := s.Preempt(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(bs) != 1 || bs[0] != (Binding{"pod1", "node1"}) || len(ev) != 1 || ev[0] != (Eviction{"pod2", "node2"}) || len(us) != 0 {
				t.Fatalf("bindings %v evictions %v unschedulable %v; want pod1 → node1 evicting pod2 on node2", bs, ev, us)
			}
			if got := boundInDB(t, s.DB()); !reflect.DeepEqual(got, []string{"other=node3", "pod1=node1"}) {
				t.Errorf("database bindings %v", got)
			}
			if got := queryStrings(t, s.DB(), "select pod_name from pod_affinity_term"); !reflect.DeepEqual(got, []string{"pod1"}) {
				t.Errorf("the evicted pod's terms are still in the database: %v", got)
			}
		})
	}
}

// TestStateDBChecked: random batches mixing every policy (as
// TestRandomBatchesChecked, which covers the in-memory database) on a
// SQLite file and on PostgreSQL, each solution verified by
// Weave in the database and by the scheduler's Go check; the database's
// bindings are the scheduler's; the single-pod plugin cases agree with the
// Go filter.
func TestStateDBChecked(t *testing.T) {
	t.Parallel()
	for _, d := range raceDBs(stateDBs()[1:]) {
		t.Run(d.name, func(t *testing.T) {
			s := newOn(t, d, Config{BatchSize: 12, Timeout: 2 * time.Second, Seed: 3})
			ctx := context.Background()
			cases := pluginCases()
			addNodes(t, s, cases[0].nodes...)
			s.UpsertVolume(ctx, "pv", "zb")
			for i := 0; i < 24; i++ {
				c := cases[(i*7)%len(cases)]
				p := c.pod
				p.Name = fmt.Sprintf("p%02d", i)
				p.Group = fmt.Sprintf("g%d", i%3)
				p.Labels = map[string]string{"app": []string{"web", "db"}[i%2]}
				if i%3 == 0 {
					p.Affinity = []PodAffinityTerm{{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"app": p.Labels["app"]}), TopologyKey: []string{LabelHostname, LabelZone}[i%2]}}
				}
				p.CPU = int64(100 + (i*337)%1500)
				addPods(t, s, p)
			}
			all := map[string]string{}
			for len(s.Pending()) > 0 {
				placed, _ := schedule(t, s)
				if len(placed) == 0 {
					break
				}
				for k, v := range placed {
					all[k] = v
				}
			}
			if len(all) < 6 {
				t.Fatalf("only %d pods placed: %v", len(all), all)
			}
			st := s.State()
			if err := st.Check(nil); err != nil {
				t.Fatal(err)
			}
			if got, want := boundInDB(t, s.DB()), bindingsOf(all); !reflect.DeepEqual(got, want) {
				t.Errorf("database bindings %v, want %v", got, want)
			}
		})
	}
	// The cases that read boolean columns and correlated views, on PostgreSQL.
	t.Run("postgres/plugins", func(t *testing.T) {
		d := stateDBs()[2]
		for _, c := range pluginCases() {
			switch c.name {
			case "TaintToleration/NoSchedule tolerated", "NodeAffinity/NotIn", "InterPodAffinity/existing pod anti", "PodTopologySpread/maxSkew zone":
			default:
				continue
			}
			s := newOn(t, d, Config{Timeout: 5 * time.Second})
			addNodes(t, s, c.nodes...)
			for _, b := range c.bound {
				b.Phase = PhaseRunning
				addPods(t, s, b)
			}
			p := normalizePod(c.pod)
			ref := s.State().FeasibleNodes(&p)
			if got := feasibleBySolver(t, s, c.pod); !reflect.DeepEqual(got, ref) {
				t.Errorf("%s: solver %v, Go filter %v", c.name, got, ref)
			}
			s.Close()
		}
	})
}

// TestStateDBRestartWithAnotherPolicySelection: a scheduler started on a
// database that a scheduler with other policies used (N4's views, built on
// node_free, present or not) starts and places pods.
func TestStateDBRestartWithAnotherPolicySelection(t *testing.T) {
	t.Parallel()
	for _, d := range raceDBs(stateDBs()[1:]) {
		t.Run(d.name, func(t *testing.T) {
			db := d.open(t)
			for i, off := range [][]string{nil, {"N4"}, nil} {
				s, err := New(Config{DB: db, BatchIdle: -1, Timeout: 10 * time.Second, Verify: true, DisabledPolicies: off})
				if err != nil {
					t.Fatalf("start %d (disabled %v): %v", i, off, err)
				}
				addNodes(t, s, Node{Name: "n", CPU: 1000, Memory: 1000})
				addPods(t, s, Pod{Name: "p", CPU: 100, Memory: 100})
				if placed, us := schedule(t, s); placed["p"] != "n" {
					t.Errorf("start %d (disabled %v): placed %v, unschedulable %v", i, off, placed, us)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestStateDBRestart: a scheduler started on a database an earlier one
// used finds it empty and correct: stale rows are gone, and a view the
// earlier run left with a wrong definition is replaced.
func TestStateDBRestart(t *testing.T) {
	t.Parallel()
	for _, d := range raceDBs(stateDBs()[1:]) {
		t.Run(d.name, func(t *testing.T) {
			db := d.open(t)
			cfg := Config{DB: db, BatchIdle: -1, Timeout: 10 * time.Second, Verify: true}
			s1, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			addNodes(t, s1, Node{Name: "old", CPU: 1000, Memory: 1000})
			addPods(t, s1, Pod{Name: "stale", CPU: 100}, Pod{Name: "stale-bound", CPU: 100, NodeName: "old", Phase: PhaseRunning})
			if placed, _ := schedule(t, s1); placed["stale"] != "old" {
				t.Fatalf("placed %v", placed)
			}
			if err := s1.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s1.UpsertNode(context.Background(), Node{Name: "late"}); err == nil {
				t.Fatal("a closed scheduler wrote to the database")
			}
			// An older version's view: no node has free CPU. (PostgreSQL drops the views built on it too, as
			// an older version's schema would not have them.)
			drop := "drop view node_free"
			if d.name == "postgres" {
				drop += " cascade"
			}
			for _, q := range []string{drop,
				"create view node_free as select name as node_name, 0 as cpu_free, 0 as memory_free, 0 as storage_free, 0 as pods_free, 0 as cpu_limit_free, 0 as memory_limit_free from node"} {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			s2 := newTest(t, cfg)
			for _, table := range []string{"node", "pod", "pod_label", "pending_pod", "batch_pod"} {
				if n := countRows(t, db, table); n != 0 {
					t.Errorf("%d stale rows in %s", n, table)
				}
			}
			addNodes(t, s2, Node{Name: "new", CPU: 1000, Memory: 1000})
			addPods(t, s2, Pod{Name: "fresh", CPU: 600, Memory: 100})
			placed, us := schedule(t, s2)
			if placed["fresh"] != "new" || len(us) != 0 {
				t.Fatalf("placed %v, unschedulable %v (node_free not recreated?)", placed, us)
			}
			if got := boundInDB(t, db); !reflect.DeepEqual(got, []string{"fresh=new"}) {
				t.Errorf("database bindings %v", got)
			}
		})
	}
}

// TestStateDBForeignTables: New refuses a database whose scheduler tables
// it did not create, and leaves them alone.
func TestStateDBForeignTables(t *testing.T) {
	for _, d := range raceDBs(stateDBs()[1:]) {
		t.Run(d.name, func(t *testing.T) {
			db := d.open(t)
			if _, err := db.Exec("create table pod (name varchar(10), owner varchar(10))"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("insert into pod values ('mine', 'someone')"); err != nil {
				t.Fatal(err)
			}
			_, err := New(Config{DB: db})
			if !errors.Is(err, ErrForeignState) || !strings.Contains(err.Error(), "pod") {
				t.Fatalf("New on a foreign table: %v", err)
			}
			if got := queryStrings(t, db, "select name, owner from pod"); !reflect.DeepEqual(got, []string{"mine=someone"}) {
				t.Fatalf("the foreign table changed: %v", got)
			}
		})
	}
}

// TestStateDBTwoSchedulers: on PostgreSQL each scheduler owns one schema.
// A second scheduler on a schema in use is refused and the first one's
// state is untouched; two schedulers on two schemas of one database
// schedule concurrently without seeing each other; a scheduler whose lock
// connection dies stops writing, and the schema can be claimed again.
func TestStateDBTwoSchedulers(t *testing.T) {
	admin := testdb.PostgresAdmin(t)
	ctx := context.Background()
	schemaA, schemaB := testdb.NewSchema(t, admin, "weave_sched_test_"), testdb.NewSchema(t, admin, "weave_sched_test_")
	cfg := func(db *sql.DB) Config {
		// The solver proves no optimum here: it stops at the time limit.
		return Config{DB: db, BatchSize: 20, BatchIdle: -1, Timeout: time.Second, Verify: true}
	}
	a := newTest(t, cfg(testdb.OpenIn(t, schemaA)))
	b := newTest(t, cfg(testdb.OpenIn(t, schemaB)))

	// Same schema: refused, and a's rows survive the attempt.
	addNodes(t, a, Node{Name: "a-keep", CPU: 1000, Memory: 1000})
	if _, err := New(cfg(testdb.OpenIn(t, schemaA))); !errors.Is(err, ErrStateInUse) || !strings.Contains(err.Error(), schemaA) {
		t.Fatalf("second scheduler on schema %s: %v", schemaA, err)
	}
	if got := queryStrings(t, a.DB(), "select name from node"); !reflect.DeepEqual(got, []string{"a-keep"}) {
		t.Fatalf("schema %s nodes after the refused start: %v", schemaA, got)
	}

	// Two schemas, concurrently: each schedules its own cluster.
	var wg sync.WaitGroup
	results := make([]map[string]string, 2)
	errs := make([]error, 2)
	for i, s := range []*Scheduler{a, b} {
		wg.Add(1)
		go func(i int, s *Scheduler, prefix string) {
			defer wg.Done()
			results[i], errs[i] = func() (map[string]string, error) {
				for j := 0; j < 3; j++ {
					if err := s.UpsertNode(ctx, Node{Name: fmt.Sprintf("%s-n%d", prefix, j), CPU: 2000, Memory: 2000, Pods: 110, Storage: 1000}); err != nil {
						return nil, err
					}
				}
				for j := 0; j < 12; j++ {
					if err := s.UpsertPod(ctx, Pod{Name: fmt.Sprintf("%s-p%02d", prefix, j), CPU: 400, Memory: 100}); err != nil {
						return nil, err
					}
				}
				out := map[string]string{}
				bs, _, err := s.ScheduleBatch(ctx)
				for _, x := range bs {
					out[x.Pod] = x.Node
				}
				return out, err
			}()
		}(i, s, []string{"a", "b"}[i])
	}
	wg.Wait()
	for i, s := range []*Scheduler{a, b} {
		prefix := []string{"a", "b"}[i]
		if errs[i] != nil {
			t.Fatalf("scheduler %s: %v", prefix, errs[i])
		}
		// 3 nodes of 2000m hold 15 pods of 400m: all 12 fit.
		if len(results[i]) != 12 {
			t.Errorf("scheduler %s placed %d pods: %v", prefix, len(results[i]), results[i])
		}
		for p, n := range results[i] {
			if !strings.HasPrefix(p, prefix+"-") || !strings.HasPrefix(n, prefix+"-") {
				t.Errorf("scheduler %s placed %s on %s", prefix, p, n)
			}
		}
		if got, want := boundInDB(t, s.DB()), bindingsOf(results[i]); !reflect.DeepEqual(got, want) {
			t.Errorf("schema of %s: bindings %v, want %v", prefix, got, want)
		}
		for _, name := range queryStrings(t, s.DB(), "select name from node") {
			if !strings.HasPrefix(name, prefix+"-") {
				t.Errorf("schema of %s holds node %s", prefix, name)
			}
		}
		if err := s.State().Check(nil); err != nil {
			t.Error(err)
		}
	}

	// The lock's connection dies: a stops writing; the schema is free.
	var pid int
	if err := a.lock.QueryRowContext(ctx, "select pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("select pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if err := a.UpsertNode(ctx, Node{Name: "a-late", CPU: 1}); !errors.Is(err, ErrStateLost) {
		t.Fatalf("write after the lock's connection died: %v", err)
	}
	c := newTest(t, cfg(testdb.OpenIn(t, schemaA)))
	if n := countRows(t, c.DB(), "pod"); n != 0 {
		t.Errorf("the new owner of %s found %d stale pod rows", schemaA, n)
	}
	addNodes(t, c, Node{Name: "c-n0", CPU: 1000, Memory: 1000})
	if err := a.UpsertPod(ctx, Pod{Name: "a-late"}); !errors.Is(err, ErrStateLost) {
		t.Fatalf("a wrote after losing its schema: %v", err)
	}
	if got := queryStrings(t, c.DB(), "select name from node"); !reflect.DeepEqual(got, []string{"c-n0"}) {
		t.Errorf("schema %s nodes: %v", schemaA, got)
	}
	if n := countRows(t, c.DB(), "pod"); n != 0 {
		t.Errorf("%d pod rows in the new owner's schema", n)
	}
}

// TestStateDBPostgresNeedsTwoConnections: the lock holds one connection.
func TestStateDBPostgresNeedsTwoConnections(t *testing.T) {
	db := testdb.OpenPostgres(t, "weave_sched_test_")
	db.SetMaxOpenConns(1)
	if _, err := New(Config{DB: db}); err == nil || !strings.Contains(err.Error(), "at least 2 connections") {
		t.Fatalf("New with one connection: %v", err)
	}
	db.SetMaxOpenConns(2)
	s := newTest(t, Config{DB: db})
	addNodes(t, s, Node{Name: "n", CPU: 1000, Memory: 1000})
	addPods(t, s, Pod{Name: "p", CPU: 10})
	if placed, _ := schedule(t, s); placed["p"] != "n" {
		t.Fatalf("placed %v", placed)
	}
}

// TestStateDBAnalyzes: on PostgreSQL the scheduler refreshes the planner's
// statistics while the informers fill the empty tables.
func TestStateDBAnalyzes(t *testing.T) {
	s := newOn(t, stateDBs()[2], Config{})
	for i := 0; i < 300; i++ {
		addNodes(t, s, Node{Name: fmt.Sprintf("n%03d", i), CPU: 1000, Memory: 1000})
	}
	var tuples float64
	if err := s.DB().QueryRow("select reltuples from pg_class where oid = 'node'::regclass").Scan(&tuples); err != nil {
		t.Fatal(err)
	}
	if tuples < 200 { // -1 before the first analyze
		t.Fatalf("pg_class.reltuples of node is %v after 300 nodes: not analyzed", tuples)
	}
}

// TestStateDBSelectors: on every database, a batch whose policies read
// pod_match: two-label affinity to bound cache pods with anti-affinity
// among the web pods, anti-affinity to the pods of namespaces selected by
// label, and spreading over zones by a selector. Each pod lands where the
// Filters allow it, in an order of binding the Go check finds.
func TestStateDBSelectors(t *testing.T) {
	t.Parallel()
	for _, d := range raceDBs(stateDBs()) {
		t.Run(d.name, func(t *testing.T) {
			s := newOn(t, d, Config{BatchSize: 10})
			ctx := context.Background()
			addNodes(t, s, pluginCases()[0].nodes...)
			for ns, l := range map[string]map[string]string{"default": nil, "data": {"env": "prod"}} {
				if err := s.UpsertNamespace(ctx, ns, l); err != nil {
					t.Fatal(err)
				}
			}
			cache := map[string]string{"app": "x", "role": "redis"}
			web := map[string]string{"app": "x", "role": "nginx"}
			addPods(t, s,
				Pod{Name: "cache-a1", Labels: cache, NodeName: "a1", Phase: PhaseRunning, CPU: 100},
				Pod{Name: "cache-b1", Labels: cache, NodeName: "b1", Phase: PhaseRunning, CPU: 100},
				Pod{Name: "db", Namespace: "data", Labels: map[string]string{"app": "db"}, NodeName: "c3", Phase: PhaseRunning})
			webTerms := []PodAffinityTerm{{Required: true, Selector: SelectLabels(cache), TopologyKey: LabelHostname},
				{Anti: true, Required: true, Selector: SelectLabels(web), TopologyKey: LabelHostname}}
			spread := []SpreadConstraint{{TopologyKey: LabelZone, MaxSkew: 1, Hard: true, Selector: SelectLabels(map[string]string{"app": "s"})}}
			pods := []Pod{
				{Name: "web-0", Labels: web, Affinity: webTerms, CPU: 100}, {Name: "web-1", Labels: web, Affinity: webTerms, CPU: 100},
				{Name: "guard", CPU: 100, Affinity: []PodAffinityTerm{{Anti: true, Required: true, TopologyKey: LabelZone,
					Selector: SelectLabels(map[string]string{"app": "db"}), NamespaceSelector: SelectLabels(map[string]string{"env": "prod"})}}},
				{Name: "s-0", Labels: map[string]string{"app": "s"}, Spread: spread, CPU: 100},
				{Name: "s-1", Labels: map[string]string{"app": "s"}, Spread: spread, CPU: 100},
			}
			addPods(t, s, pods...)
			placed, us := schedule(t, s)
			if len(placed) != len(pods) || len(us) != 0 {
				t.Fatalf("placed %v, unschedulable %v", placed, us)
			}
			if w0, w1 := placed["web-0"], placed["web-1"]; w0 == w1 || !(w0 == "a1" || w0 == "b1") || !(w1 == "a1" || w1 == "b1") {
				t.Errorf("web pods on %s and %s, want a1 and b1 (next to a cache pod, apart)", w0, w1)
			}
			st := s.State()
			if z := st.Nodes[placed["guard"]].Zone; z == "zc" {
				t.Errorf("guard in zone zc, where the prod namespace's db runs")
			}
			if st.Nodes[placed["s-0"]].Zone == st.Nodes[placed["s-1"]].Zone {
				t.Errorf("s-0 and s-1 share zone %s (maxSkew 1 over three zones)", st.Nodes[placed["s-0"]].Zone)
			}
			var batch []*Pod
			for _, p := range pods {
				batch = append(batch, st.Pods[p.Name])
			}
			if err := st.Check(batch); err != nil {
				t.Fatal(err)
			}
			// A namespace's new labels reach pod_match: db no longer selected
			// by guard's term (its two keys: as a bound pod's, as the placed
			// pod's).
			before := countRows(t, s.DB(), "pod_match")
			if err := s.UpsertNamespace(ctx, "data", map[string]string{"env": "dev"}); err != nil {
				t.Fatal(err)
			}
			if after := countRows(t, s.DB(), "pod_match"); after != before-2 {
				t.Errorf("pod_match has %d rows after the namespace's labels changed, want %d", after, before-2)
			}
		})
	}
}
