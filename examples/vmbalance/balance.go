package main

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"sort"
	"time"

	"github.com/weavesql/weave"
	_ "modernc.org/sqlite"
)

//go:embed schema.sql
var schemaSQL string

//go:embed policy.sql
var policySQL string

// Balancer keeps the cluster state in a SQL database and asks Weave for
// the migrations of one balancing round.
type Balancer struct {
	DB    *sql.DB
	Model *weave.Model
}

// NewBalancer compiles the policy and creates its tables in a fresh
// in-memory SQLite database.
func NewBalancer(ctx context.Context) (*Balancer, error) {
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
	return &Balancer{DB: db, Model: m}, nil
}

// Close closes the database.
func (b *Balancer) Close() error { return b.DB.Close() }

// Load replaces the cluster state with the instance and the round's
// parameters: at most k migrations, penalty basis points per migration.
func (b *Balancer) Load(ctx context.Context, in *Instance, k int, penalty int64) error {
	return b.LoadFrom(ctx, in, k, penalty, nil)
}

// LoadFrom is Load with a warm start: the decision column holds start's
// host for each VM (the current host when start is nil). Weave only uses
// it as the solver's first guess.
func (b *Balancer) LoadFrom(ctx context.Context, in *Instance, k int, penalty int64, start Placement) error {
	tx, err := b.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	exec := func(q string, args ...any) {
		if err == nil {
			_, err = tx.ExecContext(ctx, q, args...)
		}
	}
	for _, t := range []string{"vm_host_must_not", "vm_host_must", "vm_vm_rule", "vm", "host", "balance_policy"} {
		exec("delete from " + t)
	}
	exec("insert into balance_policy values (?, ?)", k, penalty)
	for _, h := range in.Hosts {
		exec("insert into host values (?, ?, ?)", h.Name, h.CPU, h.Mem)
	}
	// The decision column starts at the current host: Weave uses stored
	// values as a warm start.
	for _, v := range in.VMs {
		guess := v.Host
		if h, ok := start[v.Name]; ok {
			guess = h
		}
		exec("insert into vm values (?, ?, ?, ?, ?)", v.Name, v.CPU, v.Mem, v.Host, guess)
	}
	for _, r := range in.VMRules {
		exec("insert into vm_vm_rule values (?, ?, ?)", r.VM1, r.VM2, r.Together)
	}
	for _, v := range sortedKeys(in.Must) {
		for _, h := range in.Must[v] {
			exec("insert into vm_host_must values (?, ?)", v, h)
		}
	}
	for _, v := range sortedKeys(in.MustNot) {
		for _, h := range in.MustNot[v] {
			exec("insert into vm_host_must_not values (?, ?)", v, h)
		}
	}
	if err != nil {
		return fmt.Errorf("loading the cluster state: %w", err)
	}
	return tx.Commit()
}

// Round solves one balancing round and returns the new placement.
func (b *Balancer) Round(ctx context.Context, opts weave.SolveOptions) (Placement, *weave.Result, error) {
	res, err := b.Model.Solve(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	if !res.Status.HasSolution() {
		return nil, res, fmt.Errorf("no placement: %s\n%s", res.Status, res.Explanation)
	}
	p := Placement{}
	for _, row := range res.Table("vm").Rows {
		p[row["name"].(string)] = row["host"].(string)
	}
	return p, res, nil
}

// Balance runs one round on a fresh database: the convenience the
// command, tests and benchmarks use.
func Balance(ctx context.Context, in *Instance, k int, penalty int64, timeout time.Duration) (Placement, *weave.Result, error) {
	b, err := NewBalancer(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer b.Close()
	if err := b.Load(ctx, in, k, penalty); err != nil {
		return nil, nil, err
	}
	return b.Round(ctx, weave.SolveOptions{Timeout: timeout})
}

func sortedKeys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// pct renders basis points as a whole percentage, rounded.
func pct(bp int64) string { return fmt.Sprint((bp + 50) / 100) }
