package main

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/weavesql/weave"
	_ "modernc.org/sqlite"
)

//go:embed schema.sql
var schemaSQL string

//go:embed policy.sql
var policySQL string

// Config holds the tunables of the policy.
type Config struct {
	RemoveAfterFailures int // a node that failed this often is removed
	RemoveAfterSeconds  int // a node silent this long is removed
	ManagementServers   int
	// StepSeconds is how much time passes per control-loop step.
	StepSeconds int
}

// DefaultConfig: remove after 3 failures or 3 minutes of silence, three
// management servers, one step a minute.
var DefaultConfig = Config{RemoveAfterFailures: 3, RemoveAfterSeconds: 180, ManagementServers: 3, StepSeconds: 60}

// Cluster is the management plane's state in SQL and the compiled policy.
type Cluster struct {
	DB     *sql.DB
	Model  *weave.Model
	Config Config
	// Timeout bounds each solve.
	Timeout time.Duration
	// Backend solves the model; nil is Weave's default (cp). Tests set a
	// search stopped after a number of branches, which a loaded machine
	// does not cut short.
	Backend weave.Backend
}

// Layout is one decided configuration.
type Layout struct {
	Active, Backup string
	Management     []string          // sorted
	Replicas       map[string]string // "shard/idx" → node
}

// NewCluster compiles the policy into a fresh in-memory database.
func NewCluster(ctx context.Context, cfg Config) (*Cluster, error) {
	m, err := weave.Compile(schemaSQL + "\n" + policySQL)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if err := m.CreateSchema(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	if err := m.Connect(db); err != nil {
		db.Close()
		return nil, err
	}
	c := &Cluster{DB: db, Model: m, Config: cfg, Timeout: time.Second}
	if _, err := db.Exec("insert into cluster_config values (?, ?, ?)", cfg.RemoveAfterFailures, cfg.RemoveAfterSeconds, cfg.ManagementServers); err != nil {
		return nil, err
	}
	return c, nil
}

// Close closes the database.
func (c *Cluster) Close() error { return c.DB.Close() }

func (c *Cluster) exec(q string, args ...any) error {
	if _, err := c.DB.Exec(q, args...); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	return nil
}

// Join adds a healthy node.
func (c *Cluster) Join(name, rack string) error {
	if err := c.exec("insert into node values (?, ?, true, 0, 0)", name, rack); err != nil {
		return err
	}
	return c.exec("insert into node_role values (?, false, false, false, false, false, false)", name)
}

// Fail marks a node as not answering: one more failure, heartbeat stops.
func (c *Cluster) Fail(name string) error {
	return c.exec("update node set healthy = false, failures = failures + 1 where name = ?", name)
}

// Recover marks a node as answering again.
func (c *Cluster) Recover(name string) error {
	return c.exec("update node set healthy = true, heartbeat_age = 0 where name = ?", name)
}

// AddShard creates a shard with rf replicas, not yet placed.
func (c *Cluster) AddShard(name string, rf int) error {
	if err := c.exec("insert into shard values (?, ?)", name, rf); err != nil {
		return err
	}
	for i := 0; i < rf; i++ {
		if err := c.exec("insert into replica values (?, ?, null, null)", name, i); err != nil {
			return err
		}
	}
	return nil
}

// Tick advances the clock: silent nodes' heartbeats age.
func (c *Cluster) Tick() error {
	return c.exec("update node set heartbeat_age = heartbeat_age + ? where healthy = false", c.Config.StepSeconds)
}

// Status returns each node's status as the policy's node_status view
// (evaluated by the database) reports it.
func (c *Cluster) Status() (map[string]string, error) {
	rows, err := c.DB.Query("select name, status from node_status")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var n, s string
		if err := rows.Scan(&n, &s); err != nil {
			return nil, err
		}
		out[n] = s
	}
	return out, rows.Err()
}

// Current reads the layout in force (the was_* columns and current_node).
func (c *Cluster) Current() (*Layout, error) {
	l := &Layout{Replicas: map[string]string{}}
	rows, err := c.DB.Query("select node, was_active_sequencer, was_backup_sequencer, was_management from node_role order by node")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var n string
		var a, b, m bool
		if err := rows.Scan(&n, &a, &b, &m); err != nil {
			rows.Close()
			return nil, err
		}
		if a {
			l.Active = n
		}
		if b {
			l.Backup = n
		}
		if m {
			l.Management = append(l.Management, n)
		}
	}
	rows.Close()
	rows, err = c.DB.Query("select shard, idx, current_node from replica")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		var i int
		var n sql.NullString
		if err := rows.Scan(&s, &i, &n); err != nil {
			return nil, err
		}
		if n.Valid {
			l.Replicas[fmt.Sprintf("%s/%d", s, i)] = n.String
		}
	}
	return l, rows.Err()
}

// StepResult is what one control-loop step decided.
type StepResult struct {
	Status      weave.Status
	Old, New    *Layout
	Removed     []string // nodes removed from the cluster this step
	Explanation *weave.Explanation
	Solve       time.Duration
	Moves       int // replicas moved or created
}

// Step runs one round of the control loop: Weave recomputes roles and
// placement from the current state; a solution is applied (the decided
// columns become the layout in force, removed nodes leave the cluster).
// An infeasible state leaves the layout unchanged and returns Weave's
// explanation.
func (c *Cluster) Step(ctx context.Context) (*StepResult, error) {
	old, err := c.Current()
	if err != nil {
		return nil, err
	}
	res, err := c.Model.Solve(ctx, weave.SolveOptions{Timeout: c.Timeout, Verify: true, Backend: c.Backend})
	if err != nil {
		return nil, err
	}
	sr := &StepResult{Status: res.Status, Old: old, Solve: res.Stats.Fetch + res.Stats.Ground + res.Stats.Solve + res.Stats.Extract}
	if !res.Status.HasSolution() {
		sr.Explanation = res.Explanation
		return sr, nil
	}
	nl := &Layout{Replicas: map[string]string{}}
	tx, err := c.DB.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	for _, row := range res.Table("node_role").Rows {
		n := row["node"].(string)
		a, b, m := row["active_sequencer"].(bool), row["backup_sequencer"].(bool), row["management"].(bool)
		if a {
			nl.Active = n
		}
		if b {
			nl.Backup = n
		}
		if m {
			nl.Management = append(nl.Management, n)
		}
		if _, err := tx.ExecContext(ctx, `update node_role set active_sequencer = ?, backup_sequencer = ?, management = ?,
			was_active_sequencer = ?, was_backup_sequencer = ?, was_management = ? where node = ?`, a, b, m, a, b, m, n); err != nil {
			return nil, err
		}
	}
	sort.Strings(nl.Management)
	for _, row := range res.Table("replica").Rows {
		s, i, n := row["shard"].(string), row["idx"].(int64), row["node"].(string)
		key := fmt.Sprintf("%s/%d", s, i)
		nl.Replicas[key] = n
		if old.Replicas[key] != n {
			sr.Moves++
		}
		if _, err := tx.ExecContext(ctx, "update replica set node = ?, current_node = ? where shard = ? and idx = ?", n, n, s, i); err != nil {
			return nil, err
		}
	}
	// Removed nodes leave the cluster; they may join again later.
	rows, err := tx.QueryContext(ctx, "select name from node_status where status = 'removed' order by name")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		sr.Removed = append(sr.Removed, n)
	}
	rows.Close()
	for _, n := range sr.Removed {
		if _, err := tx.ExecContext(ctx, "delete from node_role where node = ?", n); err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, "delete from node where name = ?", n); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	sr.New = nl
	return sr, nil
}

// Describe renders a step's decisions for people.
func (sr *StepResult) Describe() string {
	var b strings.Builder
	if sr.New == nil {
		fmt.Fprintf(&b, "  %s: layout unchanged\n", sr.Status)
		if sr.Explanation != nil {
			for _, line := range strings.Split(strings.TrimRight(sr.Explanation.String(), "\n"), "\n") {
				fmt.Fprintf(&b, "  | %s\n", line)
			}
		}
		return b.String()
	}
	o, n := sr.Old, sr.New
	if o.Active != n.Active {
		fmt.Fprintf(&b, "  active sequencer: %s -> %s\n", orNone(o.Active), n.Active)
	}
	if o.Backup != n.Backup {
		fmt.Fprintf(&b, "  backup sequencer: %s -> %s\n", orNone(o.Backup), n.Backup)
	}
	if strings.Join(o.Management, ",") != strings.Join(n.Management, ",") {
		fmt.Fprintf(&b, "  management servers: [%s] -> [%s]\n", strings.Join(o.Management, " "), strings.Join(n.Management, " "))
	}
	keys := make([]string, 0, len(n.Replicas))
	for k := range n.Replicas {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if o.Replicas[k] != n.Replicas[k] {
			fmt.Fprintf(&b, "  replica %s: %s -> %s\n", k, orNone(o.Replicas[k]), n.Replicas[k])
		}
	}
	for _, r := range sr.Removed {
		fmt.Fprintf(&b, "  removed %s from the cluster\n", r)
	}
	if b.Len() == 0 {
		b.WriteString("  no change\n")
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
