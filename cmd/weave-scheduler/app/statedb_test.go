package app

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"sigs.k8s.io/yaml"

	"github.com/weavesql/weave/internal/testdb"
	"github.com/weavesql/weave/scheduler"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestParseFlagsStateDB(t *testing.T) {
	cfg, err := ParseFlags(nil)
	if err != nil || cfg.StateDB != "" || cfg.StateSchema != "weave_scheduler" {
		t.Fatalf("defaults: %q %q %v", cfg.StateDB, cfg.StateSchema, err)
	}
	f := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(f, []byte("stateDB: postgres://weave@db.example:5432/cluster?sslmode=require\nstateSchema: sched\n"), 0o644)
	cfg, err = ParseFlags([]string{"--config", f})
	if err != nil || cfg.StateDB != "postgres://weave@db.example:5432/cluster?sslmode=require" || cfg.StateSchema != "sched" {
		t.Fatalf("from the file: %q %q %v", cfg.StateDB, cfg.StateSchema, err)
	}
	cfg, err = ParseFlags([]string{"--config", f, "--state-db", "postgresql://other@h/db", "--state-schema", "s2"})
	if err != nil || cfg.StateDB != "postgresql://other@h/db" || cfg.StateSchema != "s2" {
		t.Fatalf("flags over the file: %q %q %v", cfg.StateDB, cfg.StateSchema, err)
	}
	if cfg, err = ParseFlags([]string{"--config", f, "--state-db", ""}); err != nil || cfg.StateDB != "" {
		t.Fatalf("an empty flag keeps the in-memory database: %q %v", cfg.StateDB, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--state-db", "/var/lib/state.db"}, "--state-db (stateDB): want a PostgreSQL URL"},
		{[]string{"--state-db", "mysql://root:secret@h/db"}, "got mysql"},
		{[]string{"--state-db", "postgres://u:secret@h:notaport/db"}, "--state-db (stateDB): cannot parse"},
		{[]string{"--state-schema", "Bad-Name"}, "--state-schema (stateSchema)"},
	} {
		_, err := ParseFlags(c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.args, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%v: the error shows the password: %v", c.args, err)
		}
	}
}

// TestStateDBUnreachable: a server that does not answer is a start-up error naming the flag, not a hang.
func TestStateDBUnreachable(t *testing.T) {
	cfg := DefaultConfig()
	cfg.StateDB = "postgres://weave:secret@127.0.0.1:1/cluster?sslmode=disable&connect_timeout=3"
	t0 := time.Now()
	_, _, err := openBrain(cfg, scheduler.Config{}, quiet)
	if err == nil || !strings.Contains(err.Error(), "--state-db: cannot connect to postgres://weave@127.0.0.1:1/cluster") {
		t.Fatalf("unreachable server: %v", err)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("the error shows the password: %v", err)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestStateDBReplicaSchemas: replicas with one configuration claim distinct schemas of one database and keep
// their state there; a replica that stops frees its schema, and the next one to claim it finds it empty.
func TestStateDBReplicaSchemas(t *testing.T) {
	dsn := testdb.PostgresDSN(t)
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var b [4]byte
	rand.Read(b[:])
	prefix := "weave_app_test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		for i := 0; i < 3; i++ {
			admin.Exec(fmt.Sprintf("drop schema if exists %s_%d cascade", prefix, i))
		}
	})
	cfg := DefaultConfig()
	cfg.StateDB, cfg.StateSchema = dsn, prefix
	sc := scheduler.Config{Name: "weave-scheduler", BatchIdle: -1, Timeout: 5 * time.Second}
	ctx := context.Background()
	start := func() (*scheduler.Scheduler, func()) {
		t.Helper()
		s, closeDB, err := openBrain(cfg, sc, quiet)
		if err != nil {
			t.Fatal(err)
		}
		return s, func() { s.Close(); closeDB() }
	}
	nodes := func(schema string) []string {
		t.Helper()
		rows, err := admin.Query("select name from " + schema + ".node order by name")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var n string
			rows.Scan(&n)
			out = append(out, n)
		}
		return out
	}
	r0, stop0 := start()
	r1, stop1 := start()
	defer stop1()
	for i, r := range []*scheduler.Scheduler{r0, r1} {
		if err := r.UpsertNode(ctx, scheduler.Node{Name: fmt.Sprintf("node-of-%d", i), CPU: 1000, Memory: 1000, Pods: 10, Storage: 1000}); err != nil {
			t.Fatal(err)
		}
		if err := r.UpsertPod(ctx, scheduler.Pod{Name: "default/p", SchedulerName: "weave-scheduler", CPU: 100}); err != nil {
			t.Fatal(err)
		}
		bs, _, err := r.ScheduleBatch(ctx)
		if err != nil || len(bs) != 1 || bs[0].Node != fmt.Sprintf("node-of-%d", i) {
			t.Fatalf("replica %d: %v %v", i, bs, err)
		}
	}
	for i := 0; i < 2; i++ {
		schema := fmt.Sprintf("%s_%d", prefix, i)
		if got := nodes(schema); len(got) != 1 || got[0] != fmt.Sprintf("node-of-%d", i) {
			t.Errorf("schema %s holds nodes %v", schema, got)
		}
		var node string
		if err := admin.QueryRow("select node_name from " + schema + ".pod where name = 'default/p'").Scan(&node); err != nil || node != fmt.Sprintf("node-of-%d", i) {
			t.Errorf("schema %s: the pod's node %q, %v", schema, node, err)
		}
	}
	stop0()
	r2, stop2 := start() // takes the freed schema _0 and empties it
	defer stop2()
	if got := nodes(prefix + "_0"); len(got) != 0 {
		t.Errorf("the schema a stopped replica left still holds %v", got)
	}
	if err := r2.UpsertNode(ctx, scheduler.Node{Name: "node-of-2", CPU: 1}); err != nil {
		t.Fatal(err)
	}
	if got := nodes(prefix + "_0"); len(got) != 1 || got[0] != "node-of-2" {
		t.Errorf("schema _0 after the new replica's write: %v", got)
	}
	if got := nodes(prefix + "_1"); len(got) != 1 || got[0] != "node-of-1" {
		t.Errorf("the running replica's schema _1 changed: %v", got)
	}
}

// TestStateLostStopsTheReplica: an ErrStateLost from a state update ends Run with that error.
func TestStateLostStopsTheReplica(t *testing.T) {
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	s := &Server{log: quiet, stop: stop}
	s.must("upsert pod", errors.New("scheduler: some statement failed"))
	if ctx.Err() != nil {
		t.Fatal("an ordinary state error stopped the replica")
	}
	s.must("upsert pod", fmt.Errorf("%w: connection gone", scheduler.ErrStateLost))
	if !errors.Is(context.Cause(ctx), scheduler.ErrStateLost) {
		t.Fatalf("cause %v", context.Cause(ctx))
	}
}

// TestDeployConfigMap: deploy/configmap.yaml's config.yaml is a valid configuration, and its commented
// stateDB lines are too once uncommented.
func TestDeployConfigMap(t *testing.T) {
	data, err := os.ReadFile("../../../deploy/configmap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(data, &cm); err != nil {
		t.Fatal(err)
	}
	text := cm.Data["config.yaml"]
	f := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(f, []byte(text), 0o644)
	cfg, err := ParseFlags([]string{"--config", f})
	if err != nil || cfg.StateDB != "" || cfg.SchedulerName != "weave-scheduler" || cfg.SolverGapLimit != 50 {
		t.Fatalf("%+v %v", cfg, err)
	}
	text = strings.ReplaceAll(text, "# stateDB:", "stateDB:")
	text = strings.ReplaceAll(text, "# stateSchema:", "stateSchema:")
	text = strings.ReplaceAll(text, "# disabledPolicies:", "disabledPolicies:")
	os.WriteFile(f, []byte(text), 0o644)
	cfg, err = ParseFlags([]string{"--config", f})
	if err != nil || !strings.HasPrefix(cfg.StateDB, "postgres://") || cfg.StateSchema != "weave_scheduler" {
		t.Fatalf("with stateDB: %q %q %v", cfg.StateDB, cfg.StateSchema, err)
	}
	if len(cfg.DisabledPolicies) != 2 {
		t.Fatalf("disabledPolicies: %v", cfg.DisabledPolicies)
	}
}
