package scheduler

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
)

// Every statement below runs unchanged on SQLite and on PostgreSQL:
// positional parameters are $1, $2, ... (SQLite binds them in order),
// booleans are Go bools (true/false in both), no SQLite-only syntax. The
// PostgreSQL-only statements (the state lock) are in lockState and
// unlockState.

type stmt struct {
	q    string
	args []any
}

// params returns "($1, $2, ..., $n)".
func params(n int) string {
	var b strings.Builder
	b.WriteByte('(')
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", i)
	}
	b.WriteByte(')')
	return b.String()
}

// txBeginner is a *sql.DB or, on PostgreSQL, the *sql.Conn holding the
// state lock.
type txBeginner interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// exec runs statements in one transaction. On PostgreSQL they run on the
// connection that holds the state lock, so a write can only succeed while
// this scheduler owns the state; once that connection is gone every write
// fails with ErrStateLost.
func (s *Scheduler) exec(ctx context.Context, st []stmt) error {
	if len(st) == 0 {
		return nil
	}
	// Every write, even one that fails, makes a speculation stale but
	// those it expects (speculate.go).
	s.version++
	if s.spec != nil && !s.expectWrite {
		s.spec.foreign = true
	}
	s.noteWrites(st) // versions.go
	if s.lost != nil {
		return s.lost
	}
	w := txBeginner(s.db)
	if s.lock != nil {
		w = s.lock
		// A cancelled context would make pgx close the connection, and
		// with it the lock: writes are short and run to the end, unless
		// the server hangs (then the lock is lost, not s.mu held forever).
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
		defer cancel()
	}
	if s.lock == nil {
		s.prepareWrites(ctx, st)
	}
	err := s.execOn(ctx, w, st)
	if err == nil && s.lock != nil {
		s.analyzeSometimes(ctx)
	}
	if err != nil && s.lock != nil {
		pctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if perr := s.lock.PingContext(pctx); perr != nil {
			s.lost = fmt.Errorf("%w: the connection holding the lock on schema %s is gone (%v); last write: %v", ErrStateLost, s.schema, perr, err)
			return s.lost
		}
	}
	return err
}

// writeTimeout bounds a write on PostgreSQL.
const writeTimeout = 30 * time.Second

// analyzeSometimes refreshes PostgreSQL's statistics of the state tables
// after 256, 512, 1024, ... writes. The tables start empty at every start
// and fill within seconds as the informers list the cluster, well before
// autovacuum first analyzes them: without statistics the planner picks
// plans for empty tables, and the pushed-down views of the first batches
// read several times slower.
func (s *Scheduler) analyzeSometimes(ctx context.Context) {
	s.writes++
	if s.writes < s.nextAnalyze {
		return
	}
	s.nextAnalyze = 2 * s.writes
	// Named tables: a bare ANALYZE would visit every schema of the database.
	s.lock.ExecContext(ctx, "analyze "+strings.Join(stateTables(), ", "))
}

// batchTableSizes tells SQLite's planner which state tables are small:
// the batch's (a batch of pods, one arc, the nodes its pods need), where
// the cluster's grow with it. SQLite gathers no statistics by itself and
// without them takes every table to be as large as any other: it scanned
// all of the cluster's affinity terms to find the batch's
// (batch_affinity_term 1.4 → 0.2 ms per read at 500 nodes, 2,400 pods).
// Statistics measured by ANALYZE would be worse than none: taken while
// the informers fill the tables, they call the pod tables empty, and
// service_zone_conflict then read 60 ms per batch. These are sizes in
// kind, not counts, and never go stale.
var batchTableSizes = []struct{ table, index, stat string }{
	{"batch_pod", "sqlite_autoindex_batch_pod_1", "100 1"},
	{"pending_pod", "sqlite_autoindex_pending_pod_1", "100 1"},
	{"node_sample", "", "1"},
	{"node_sample_node", "sqlite_autoindex_node_sample_node_1", "10 1"},
}

// hintSQLitePlanner loads batchTableSizes into SQLite's statistics (an
// ANALYZE of the still empty tables creates sqlite_stat1; ANALYZE
// sqlite_schema makes the planner read it).
func hintSQLitePlanner(ctx context.Context, db *sql.DB) error {
	st := []string{"analyze", "delete from sqlite_stat1"}
	for _, t := range batchTableSizes {
		idx := "null"
		if t.index != "" {
			idx = "'" + t.index + "'"
		}
		st = append(st, fmt.Sprintf("insert into sqlite_stat1 (tbl, idx, stat) values ('%s', %s, '%s')", t.table, idx, t.stat))
	}
	st = append(st, "analyze sqlite_schema")
	for _, q := range st {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("scheduler: hinting SQLite's planner: %s: %w", q, err)
		}
	}
	return nil
}

func (s *Scheduler) execOn(ctx context.Context, w txBeginner, st []stmt) error {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("scheduler: state database: %w", err)
	}
	defer tx.Rollback()
	// A batch writes the same few statements hundreds of times (a row per
	// pod, label, term): each is bound to the transaction once.
	bound := map[*sql.Stmt]*sql.Stmt{}
	for _, x := range st {
		var err error
		if p, ok := s.prepared[x.q]; ok {
			b := bound[p]
			if b == nil {
				b = tx.StmtContext(ctx, p)
				bound[p] = b
			}
			_, err = b.ExecContext(ctx, x.args...)
		} else {
			_, err = tx.ExecContext(ctx, x.q, x.args...)
		}
		if err != nil {
			return fmt.Errorf("scheduler: %s: %w", x.q, err)
		}
	}
	return tx.Commit()
}

// maxPrepared bounds the cache of prepared writes. The writes are a few
// dozen parameterised statements (an insert and a delete per table).
const maxPrepared = 256

// prepareWrites prepares the parameterised statements of st not prepared
// yet, on the database and before the write's transaction begins (a pool
// of one connection, SQLite in memory, would otherwise wait for the
// transaction's own connection). Parsing every insert again cost SQLite
// 80% of UpsertPod, which runs on every pod event, under the scheduler's
// lock. On PostgreSQL pgx caches statements per connection already. A
// statement that fails to prepare runs unprepared and reports its error
// there.
func (s *Scheduler) prepareWrites(ctx context.Context, st []stmt) {
	for _, x := range st {
		if len(x.args) == 0 || len(s.prepared) >= maxPrepared {
			continue
		}
		if _, ok := s.prepared[x.q]; ok {
			continue
		}
		p, err := s.db.PrepareContext(ctx, x.q)
		if err != nil {
			continue
		}
		if s.prepared == nil {
			s.prepared = map[string]*sql.Stmt{}
		}
		s.prepared[x.q] = p
	}
}

// closePrepared releases the prepared writes (Close: the database may be
// the caller's and outlive the scheduler).
func (s *Scheduler) closePrepared() {
	for _, p := range s.prepared {
		p.Close()
	}
	s.prepared = nil
}

// ErrStateInUse is returned by New when another scheduler holds the
// PostgreSQL schema of Config.DB (its search_path): give each scheduler a
// schema of its own.
var ErrStateInUse = errors.New("scheduler: the state schema is in use by another scheduler")

// ErrStateLost is returned by every write once the PostgreSQL connection
// that holds the state lock is gone (server restart, network failure):
// another scheduler may own the schema now. The Scheduler is unusable;
// close it and start a new one, which rebuilds the state.
var ErrStateLost = errors.New("scheduler: lost the lock on the state schema")

// ErrForeignState is returned by New when Config.DB already holds a table
// of the scheduler's schema that the scheduler did not create (no marker
// table): New never drops tables it does not own.
var ErrForeignState = errors.New("scheduler: the state database holds tables the scheduler did not create")

var errClosed = errors.New("scheduler: closed")

// stateMarker marks a database (PostgreSQL: a schema) whose scheduler
// tables the scheduler created and may therefore drop.
const stateMarker = "weave_scheduler_state"

var createTable = regexp.MustCompile(`(?im)^\s*create\s+table\s+([a-z_][a-z0-9_]*)`)

// stateTables lists the tables of the scheduler's schema, in order.
func stateTables() []string {
	var out []string
	for _, m := range createTable.FindAllStringSubmatch(SchemaSQL(Placement), -1) {
		out = append(out, strings.ToLower(m[1]))
	}
	return out
}

func postgres(db *sql.DB) bool {
	_, ok := db.Driver().(*stdlib.Driver)
	return ok
}

// open sets up the state database: a fresh in-memory SQLite database
// when cfg.DB is nil, otherwise cfg.DB, locked (PostgreSQL) and reset.
func (s *Scheduler) open(ctx context.Context) error {
	if s.cfg.DB == nil {
		db, err := sql.Open("sqlite", ":memory:")
		if err != nil {
			return err
		}
		db.SetMaxOpenConns(1) // one in-memory database
		s.db, s.ownDB = db, true
		if err := s.placement.CreateSchema(ctx, db); err != nil {
			return err
		}
		return hintSQLitePlanner(ctx, db)
	}
	s.db = s.cfg.DB
	if postgres(s.db) {
		if err := s.lockState(ctx); err != nil {
			return err
		}
	}
	return s.resetState(ctx)
}

// lockState takes a session advisory lock on the current schema (the
// first existing schema of the search_path, where the tables go) on a
// connection held until Close: two schedulers never share a schema.
func (s *Scheduler) lockState(ctx context.Context) error {
	if n := s.db.Stats().MaxOpenConnections; n == 1 {
		return errors.New("scheduler: a PostgreSQL state database needs at least 2 connections (one holds the state lock); SetMaxOpenConns(1) is too few")
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("scheduler: connecting to the state database: %w", err)
	}
	var schema sql.NullString
	if err := conn.QueryRowContext(ctx, "select current_schema()").Scan(&schema); err != nil {
		conn.Close()
		return fmt.Errorf("scheduler: state database: %w", err)
	}
	if !schema.Valid {
		conn.Close()
		return errors.New("scheduler: the state database's search_path names no existing schema: create the schema and set search_path in the DSN")
	}
	var got bool
	if err := conn.QueryRowContext(ctx, "select pg_try_advisory_lock(hashtext('weave-scheduler'), hashtext($1))", schema.String).Scan(&got); err != nil {
		conn.Close()
		return fmt.Errorf("scheduler: locking the state schema %s: %w", schema.String, err)
	}
	if !got {
		conn.Close()
		return fmt.Errorf("%w: schema %s", ErrStateInUse, schema.String)
	}
	s.lock, s.schema, s.nextAnalyze = conn, schema.String, 256
	return nil
}

// unlockState releases the lock and its connection.
func (s *Scheduler) unlockState() {
	if s.lock == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.lock.ExecContext(ctx, "select pg_advisory_unlock(hashtext('weave-scheduler'), hashtext($1))", s.schema)
	s.lock.Close()
	s.lock = nil
}

// exists reports whether a table or view can be read.
func exists(ctx context.Context, db *sql.DB, name string) bool {
	rows, err := db.QueryContext(ctx, "select 1 from "+name+" where 1 = 0")
	if err != nil {
		return false
	}
	rows.Close()
	return true
}

// resetState gives a caller's database a clean state: it drops the
// scheduler's views and tables left by an earlier run (their rows are
// stale, and their definitions may be an older version's) and creates the
// schema again. It refuses a database whose scheduler tables it did not
// create.
func (s *Scheduler) resetState(ctx context.Context) error {
	tables := stateTables()
	if !exists(ctx, s.db, stateMarker) {
		for _, t := range tables {
			if exists(ctx, s.db, t) {
				where := "the database"
				if s.schema != "" {
					where = "schema " + s.schema
				}
				return fmt.Errorf("%w: %s has a table %s but no %s table; use an empty schema or database", ErrForeignState, where, t, stateMarker)
			}
		}
	}
	st := []stmt{{"create table if not exists " + stateMarker + " (created_by varchar(40) not null)", nil}}
	cascade := ""
	if s.lock != nil {
		// PostgreSQL: also the views built on these that this model does not have (an older version's, or
		// those of a policy disabled now and enabled in the previous run), which would block the drop.
		cascade = " cascade"
	}
	views := s.placement.Views()
	for i := len(views) - 1; i >= 0; i-- {
		if views[i].Role == "pushdown" {
			st = append(st, stmt{"drop view if exists " + views[i].Name + cascade, nil})
		}
	}
	for i := len(tables) - 1; i >= 0; i-- {
		st = append(st, stmt{"drop table if exists " + tables[i] + cascade, nil})
	}
	if err := s.exec(ctx, st); err != nil {
		return fmt.Errorf("scheduler: clearing the state database: %w", err)
	}
	if err := s.placement.CreateSchema(ctx, s.db); err != nil {
		return err
	}
	return nil
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullInt(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}

func deleteNode(name string) []stmt {
	return []stmt{
		{"delete from node where name = $1", []any{name}},
		{"delete from node_label where node_name = $1", []any{name}},
		{"delete from node_taint where node_name = $1", []any{name}},
		{"delete from node_image where node_name = $1", []any{name}},
		{"delete from node_feature where node_name = $1", []any{name}},
		{"delete from node_resource where node_name = $1", []any{name}},
	}
}

// insertNodeLabel writes a node's label with its value's number
// (value_id): that of the key's rows holding the same value, or else one
// above the key's largest, so that equal values share a number and
// different ones never do among the rows present (a value whose nodes all
// went and came back may get a new one). Both lookups are index searches
// (node_label_kv, node_label_key_id): the first takes any row of the value,
// as all of them hold its number (min over them read every node of a zone,
// 1.4 ms a node written at 5,000 nodes). The key and value come again as
// $5 to $7: PostgreSQL deduces one type per parameter, and varchar(253)
// for the column differs from text in the comparisons.
const insertNodeLabel = `insert into node_label values ($1, $2, $3, $4,
  coalesce((select o.value_id from node_label o where o.label_key = $5 and o.label_value = $6 limit 1),
           (select coalesce(max(o.value_id), 0) + 1 from node_label o where o.label_key = $7)))`

func writeNode(n Node) []stmt {
	st := deleteNode(n.Name)
	st = append(st, stmt{"insert into node values " + params(13), []any{
		n.Name, n.Zone, n.CPU, n.Memory, n.Storage, n.Pods, n.Unschedulable, !n.NotReady,
		n.NetworkUnavailable, n.MemoryPressure, n.DiskPressure, n.PIDPressure, sampleKey(n.Name)}})
	for _, k := range sortedKeys(n.Labels) {
		st = append(st, stmt{insertNodeLabel, []any{n.Name, k, n.Labels[k], labelInt(n.Labels[k]), k, n.Labels[k], k}})
	}
	for _, f := range n.Features {
		st = append(st, stmt{"insert into node_feature values " + params(2), []any{n.Name, f}})
	}
	for _, t := range n.Taints {
		st = append(st, stmt{"insert into node_taint values " + params(4), []any{n.Name, t.Key, t.Value, t.Effect}})
	}
	for _, k := range sortedKeys(n.Images) {
		st = append(st, stmt{"insert into node_image values " + params(3), []any{n.Name, k, n.Images[k]}})
	}
	for _, k := range sortedKeys(n.Resources) {
		st = append(st, stmt{"insert into node_resource values " + params(3), []any{n.Name, k, n.Resources[k]}})
	}
	return st
}

var podTables = []string{"pod_label", "pod_node_selector", "pod_node_affinity", "pod_toleration",
	"pod_affinity_term", "pod_spread_constraint", "pod_match", "pod_host_port", "pod_volume", "pod_image", "pod_feature", "pod_resource"}

func deletePod(name string) []stmt {
	st := []stmt{{"delete from pod where name = $1", []any{name}}}
	for _, t := range podTables {
		st = append(st, stmt{"delete from " + t + " where pod_name = $1", []any{name}})
	}
	return st
}

func writePod(p *Pod) []stmt {
	st := deletePod(p.Name)
	st = append(st, stmt{"insert into pod values " + params(17), []any{
		p.Name, p.Namespace, p.SchedulerName, p.Phase, nullStr(p.NodeName), nullStr(p.RequestedNode),
		p.CPU, p.Memory, p.Storage, p.CPULimit, p.MemoryLimit, p.Priority, p.Group, nullStr(p.Service),
		nullInt(p.MaxPerNode), p.created, nullStr(p.PodGroup)}})
	for _, k := range sortedKeys(p.Labels) {
		st = append(st, stmt{"insert into pod_label values " + params(3), []any{p.Name, k, p.Labels[k]}})
	}
	for _, k := range sortedKeys(p.NodeSelector) {
		st = append(st, stmt{"insert into pod_node_selector values " + params(3), []any{p.Name, k, p.NodeSelector[k]}})
	}
	addTerm := func(selector int, required bool, i int, weight int64, term []NodeRequirement) {
		term = canonicalTerm(term)
		key := termKey(term)
		for j, r := range term {
			for _, row := range requirementRows(r) {
				st = append(st, stmt{"insert into pod_node_affinity values " + params(11), []any{
					p.Name, selector, required, i, weight, j, row.key, row.op, row.value, row.valueInt, key}})
			}
		}
	}
	addSelector := func(selector int, terms [][]NodeRequirement) {
		matchable := false
		for i, term := range terms {
			if len(term) > 0 { // an empty term matches no node
				addTerm(selector, true, i, 0, term)
				matchable = true
			}
		}
		if terms != nil && !matchable {
			addTerm(selector, true, 0, 0, []NodeRequirement{{Operator: OpNever}})
		}
	}
	addSelector(0, p.RequiredNodeAffinity)
	for i, sel := range p.VolumeNodeSelectors {
		addSelector(i+1, sel)
	}
	for i, term := range p.PreferredNodeAffinity {
		if len(term.Requirements) > 0 {
			addTerm(0, false, i, term.Weight, term.Requirements)
		}
	}
	for _, t := range p.Tolerations {
		st = append(st, stmt{"insert into pod_toleration values " + params(5), []any{p.Name, t.Key, t.Operator, t.Value, t.Effect}})
	}
	st = append(st, writeSelectorRows(p)...)
	for _, hp := range p.HostPorts {
		st = append(st, stmt{"insert into pod_host_port values " + params(4), []any{p.Name, hp.Protocol, hp.Port, hp.HostIP}})
	}
	for _, f := range p.Features {
		st = append(st, stmt{"insert into pod_feature values " + params(2), []any{p.Name, f}})
	}
	for _, v := range p.Volumes {
		st = append(st, stmt{"insert into pod_volume values " + params(2), []any{p.Name, v}})
	}
	for _, im := range p.Images {
		st = append(st, stmt{"insert into pod_image values " + params(2), []any{p.Name, im}})
	}
	for _, k := range sortedKeys(p.Resources) {
		if v := p.Resources[k]; v > 0 { // a request of 0 bounds nothing (NodeResourcesFit skips it)
			st = append(st, stmt{"insert into pod_resource values " + params(3), []any{p.Name, k, v}})
		}
	}
	return st
}

// placeWeight is the reward of P1 for placing a pod of the given priority
// rank: more than every pod of lower ranks together and than every other
// soft constraint, so that priorities are lexicographic.
const baseWeight = 1_000_000

func placeWeights(pods []*Pod) map[int64]int64 {
	count := map[int64]int64{}
	for _, p := range pods {
		count[p.Priority]++
	}
	prios := make([]int64, 0, len(count))
	for pr := range count {
		prios = append(prios, pr)
	}
	sort.Slice(prios, func(i, j int) bool { return prios[i] < prios[j] })
	w := map[int64]int64{}
	var below int64
	for _, pr := range prios {
		w[pr] = baseWeight + below
		below += w[pr] * count[pr]
	}
	return w
}

// loadModelPods replaces the rows a model decides: pods (pending) and
// victims (bound pods the preemption model may evict), with the stored
// node of each as hint says (see preemptionHint; nil: none).
func loadModelPods(pods []*Pod, victims []*Pod, hint map[string]string) []stmt {
	st := []stmt{{"delete from pending_pod", nil}, {"delete from batch_pod", nil}}
	w := placeWeights(pods)
	isVictim := map[string]bool{}
	for _, v := range victims {
		isVictim[v.Name] = true
	}
	for _, p := range pods {
		bound := ""
		if isVictim[p.Name] {
			bound = p.NodeName
		}
		// The stored node is the search's first guess (weave hints the
		// decision columns with their stored values): the hint's, else a
		// victim's own node.
		guess := bound
		if n, ok := hint[p.Name]; ok {
			guess = n
		}
		st = append(st,
			stmt{"insert into batch_pod values " + params(2), []any{p.Name, nullStr(bound)}},
			stmt{"insert into pending_pod values " + params(16), []any{
				p.Name, p.Namespace, nullStr(guess), nullStr(bound), nullStr(p.RequestedNode),
				p.CPU, p.Memory, p.Storage, p.CPULimit, p.MemoryLimit, p.Priority, p.Group,
				nullStr(p.Service), nullInt(p.MaxPerNode), w[p.Priority], nullStr(p.PodGroup)}})
	}
	return st
}

func writePodGroup(g PodGroup) []stmt {
	return []stmt{{"delete from podgroup where name = $1", []any{g.Name}},
		{"insert into podgroup values " + params(4), []any{g.Name, max(g.MinCount, 1), nullStr(g.TopologyKey), boolInt(g.DisruptAll)}}}
}

func writeVolume(name, zone string) []stmt {
	return []stmt{{"delete from volume where name = $1", []any{name}},
		{"insert into volume values " + params(2), []any{name, zone}}}
}

func setPodPhase(name, phase string) stmt {
	return stmt{"update pod set phase = $1 where name = $2", []any{phase, name}}
}

// usageRefresh recomputes the rows of node_usage and node_resource_usage
// of the named nodes ("" and repeats skipped) from the pod tables. Every
// write of a pod's node, phase or requests is followed by it, in the same
// transaction, for the node the pod was on and the node it is on: the
// tables then always equal the sums over the bound pods that node_free and
// node_resource_free once computed at each batch
// (TestNodeUsageFollowsThePods).
func usageRefresh(nodes ...string) []stmt {
	var st []stmt
	seen := map[string]bool{}
	for _, n := range nodes {
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		st = append(st,
			stmt{"delete from node_usage where node_name = $1", []any{n}},
			stmt{"insert into node_usage select p.node_name, sum(p.cpu_request), sum(p.memory_request), " +
				"sum(p.storage_request), count(*), sum(p.cpu_limit), sum(p.memory_limit) from pod p " +
				"where p.node_name = $1 and (p.phase = 'Pending' or p.phase = 'Running') group by p.node_name", []any{n}},
			stmt{"delete from node_resource_usage where node_name = $1", []any{n}},
			stmt{"insert into node_resource_usage select p.node_name, r.resource, sum(r.request) " +
				"from pod p join pod_resource r on r.pod_name = p.name " +
				"where p.node_name = $1 and (p.phase = 'Pending' or p.phase = 'Running') group by p.node_name, r.resource", []any{n}})
	}
	return st
}

// setPodNode binds a pod to a node ("" unbinds it).
func setPodNode(name, node string) stmt {
	return stmt{"update pod set node_name = $1 where name = $2", []any{nullStr(node), name}}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// nodeAffinityRow is one row of pod_node_affinity for a requirement.
type nodeAffinityRow struct {
	key, op, value string
	valueInt       any // Gt, Lt: the value as an int64; otherwise NULL
}

// requirementRows lays a requirement out as rows of pod_node_affinity: a
// row per value of In and NotIn (one for the others), matchFields as
// FieldIn/FieldNotIn, and a requirement that cannot match (a Gt or Lt whose
// value is not one integer, an unknown operator or field) as Never.
func requirementRows(r NodeRequirement) []nodeAffinityRow {
	never := []nodeAffinityRow{{key: r.Key, op: OpNever}}
	switch {
	case r.Field:
		if r.Key != "metadata.name" || len(r.Values) != 1 || r.Operator != "In" && r.Operator != "NotIn" {
			return never
		}
		return []nodeAffinityRow{{key: r.Key, op: "Field" + r.Operator, value: r.Values[0]}}
	case r.Operator == "In" || r.Operator == "NotIn":
		if len(r.Values) == 0 {
			return never
		}
		rows := make([]nodeAffinityRow, len(r.Values))
		for i, v := range r.Values {
			rows[i] = nodeAffinityRow{key: r.Key, op: r.Operator, value: v}
		}
		return rows
	case r.Operator == "Exists" || r.Operator == "DoesNotExist":
		return []nodeAffinityRow{{key: r.Key, op: r.Operator}}
	case r.Operator == OpGt || r.Operator == OpLt:
		if len(r.Values) != 1 {
			return never
		}
		v, err := strconv.ParseInt(r.Values[0], 10, 64)
		if err != nil {
			return never
		}
		return []nodeAffinityRow{{key: r.Key, op: r.Operator, value: r.Values[0], valueInt: v}}
	}
	return never
}

// labelInt is a label's value as a base-10 int64 (what Gt and Lt compare),
// or NULL.
func labelInt(v string) any {
	i, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil
	}
	return i
}

// canonicalTerm orders a term's requirements as termKey does, so that
// equal terms number their requirements alike (node_affinity_unmet joins
// the rows of one In requirement by term key and number).
func canonicalTerm(term []NodeRequirement) []NodeRequirement {
	out := append([]NodeRequirement(nil), term...)
	sort.SliceStable(out, func(i, j int) bool { return requirementText(out[i]) < requirementText(out[j]) })
	return out
}

// requirementText is a requirement in a canonical form: its values sorted
// and without repeats.
func requirementText(r NodeRequirement) string {
	vals := append([]string(nil), r.Values...)
	sort.Strings(vals)
	vals = slices.Compact(vals)
	field := ""
	if r.Field {
		field = "field "
	}
	return field + strconv.Quote(r.Key) + " " + r.Operator + " " + strconv.Quote(strings.Join(vals, "\x00"))
}

// termKey names a node-affinity term by its requirements (order and
// repeated values aside): pods with equal terms, the replicas of a
// deployment, share the key, and the nodes a term rules out are computed
// once per key (node_affinity_unmet), not once per pod.
func termKey(term []NodeRequirement) string {
	reqs := make([]string, len(term))
	for i, r := range term {
		reqs[i] = requirementText(r)
	}
	sort.Strings(reqs)
	sum := sha256.Sum256([]byte(strings.Join(reqs, "\n")))
	return hex.EncodeToString(sum[:16])
}
