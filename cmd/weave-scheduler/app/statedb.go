package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/weavesql/weave/scheduler"
)

// stateSlots is how many schemas (StateSchema_0 ... _15) the replicas sharing one state database may claim:
// two replicas, plus those a rolling update starts before the old ones stop.
const stateSlots = 16

var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// checkStateDB validates --state-db and --state-schema without connecting.
func checkStateDB(cfg Config) error {
	if !schemaName.MatchString(cfg.StateSchema) || len(cfg.StateSchema) > 60 {
		return fmt.Errorf("--state-schema (stateSchema): %q is not a lower-case SQL name of at most 60 characters", cfg.StateSchema)
	}
	if cfg.StateDB == "" {
		return nil
	}
	if !strings.HasPrefix(cfg.StateDB, "postgres://") && !strings.HasPrefix(cfg.StateDB, "postgresql://") {
		scheme, _, ok := strings.Cut(cfg.StateDB, "://")
		if !ok {
			scheme = "no scheme"
		}
		return fmt.Errorf("--state-db (stateDB): want a PostgreSQL URL postgres://user@host:5432/db (empty: in-memory SQLite), got %s", scheme)
	}
	if _, err := pgx.ParseConfig(cfg.StateDB); err != nil {
		return fmt.Errorf("--state-db (stateDB): %w", err) // pgx redacts the password
	}
	return nil
}

// testHookBrainConfig, set by tests, adjusts the brain's configuration (a solver backend that takes its
// time, to have pods arrive while it solves).
var testHookBrainConfig func(*scheduler.Config)

// openBrain starts the scheduler on its state database: in memory when cfg.StateDB is empty; otherwise in
// the first schema StateSchema_i of the PostgreSQL database that no other replica holds (scheduler.New locks
// it, empties it and recreates the tables). The returned function closes the database after the scheduler.
func openBrain(cfg Config, sc scheduler.Config, log *slog.Logger) (*scheduler.Scheduler, func(), error) {
	if testHookBrainConfig != nil {
		testHookBrainConfig(&sc)
	}
	if cfg.StateDB == "" {
		b, err := scheduler.New(sc)
		return b, func() {}, err
	}
	if err := checkStateDB(cfg); err != nil {
		return nil, nil, err
	}
	cc, _ := pgx.ParseConfig(cfg.StateDB)
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = 10 * time.Second
	}
	if _, ok := cc.RuntimeParams["application_name"]; !ok {
		// pg_stat_activity shows which replica holds which schema.
		name := "weave-scheduler " + cfg.Identity
		if len(name) > 63 {
			name = name[:63]
		}
		cc.RuntimeParams["application_name"] = name
	}
	where := fmt.Sprintf("postgres://%s@%s:%d/%s", cc.User, cc.Host, cc.Port, cc.Database)
	admin := stdlib.OpenDB(*cc)
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		return nil, nil, fmt.Errorf("--state-db: cannot connect to %s: %w", where, err)
	}
	for i := 0; i < stateSlots; i++ {
		schema := fmt.Sprintf("%s_%d", cfg.StateSchema, i)
		if err := ensureSchema(ctx, admin, schema); err != nil {
			return nil, nil, fmt.Errorf("--state-db: creating schema %s in %s: %w", schema, where, err)
		}
		c := cc.Copy()
		c.RuntimeParams["search_path"] = schema
		db := stdlib.OpenDB(*c)
		db.SetMaxOpenConns(8) // one holds the schema's lock; solves, verification and readers use the others
		db.SetMaxIdleConns(4)
		sc.DB = db
		b, err := scheduler.New(sc)
		if errors.Is(err, scheduler.ErrStateInUse) {
			db.Close()
			continue
		}
		if err != nil {
			db.Close()
			return nil, nil, fmt.Errorf("--state-db: schema %s in %s: %w", schema, where, err)
		}
		log.Info("state database", "database", where, "schema", schema)
		return b, func() { db.Close() }, nil
	}
	return nil, nil, fmt.Errorf("--state-db: the %d schemas %s_0 ... %s_%d of %s are all held by running replicas",
		stateSlots, cfg.StateSchema, cfg.StateSchema, stateSlots-1, where)
}

// ensureSchema creates a schema unless it exists (then no CREATE privilege is needed). Two replicas may
// create the same schema at once: the loser's duplicate error is fine.
func ensureSchema(ctx context.Context, db *sql.DB, schema string) error {
	var exists bool
	if err := db.QueryRowContext(ctx, "select exists (select 1 from pg_namespace where nspname = $1)", schema).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	_, err := db.ExecContext(ctx, "create schema if not exists "+schema)
	var pg *pgconn.PgError
	if errors.As(err, &pg) && (pg.Code == "23505" || pg.Code == "42P06") { // unique_violation, duplicate_schema
		return nil
	}
	return err
}
