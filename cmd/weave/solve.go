package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver (PostgreSQL)
	"github.com/weavesql/weave"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// solveConfig holds the flags of "weave solve".
type solveConfig struct {
	schema, data, dsn string
	timeout           time.Duration
	seed              int64
	format            string
	verify            bool
	backend           string
}

func runSolve(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var cfg solveConfig
	fs := flagSet("solve", &cfg, stderr)
	if code, done := parseFlags(fs, args, stdout, stderr); done {
		return code
	}
	model, db, code := connectState(ctx, "solve", cfg, stdin, stderr)
	if model == nil {
		return code
	}
	defer db.Close()
	var err error
	opts := weave.SolveOptions{Timeout: cfg.timeout, Seed: cfg.seed, Verify: cfg.verify}
	if opts.Backend, err = backendFor(cfg.backend); err != nil {
		reportError(stderr, cfg.schema, err)
		return exitError
	}
	res, err := model.Solve(ctx, opts)
	if err != nil {
		reportError(stderr, cfg.schema, err)
		return exitError
	}
	if cfg.format == "json" {
		err = writeJSON(stdout, res)
	} else {
		err = writeText(stdout, res, model.Views())
	}
	if err != nil {
		fmt.Fprintf(stderr, "weave: writing the result: %v\n", err)
		return exitError
	}
	return exitCode(res.Status)
}

// flagSet returns the flags of the subcommand name (solve, check or
// explain), bound to cfg: the one definition the command parses and the
// docs test holds the documentation to.
func flagSet(name string, cfg *solveConfig, stderr io.Writer) *flag.FlagSet {
	fs := newFlagSet(name, stderr)
	switch name {
	case "check":
		fs.StringVar(&cfg.schema, "schema", "", "policy `file` (tables and annotated views)")
		fs.StringVar(&cfg.format, "format", "text", "output format: text or json")
	case "solve":
		stateFlags(fs, cfg)
		fs.Int64Var(&cfg.seed, "seed", 0, "random seed")
		fs.BoolVar(&cfg.verify, "verify", false, "re-check the solution inside the database")
		fs.StringVar(&cfg.backend, "backend", "native", "solver: native (package cp) or minizinc (MiniZinc with Gecode)")
	case "explain":
		stateFlags(fs, cfg)
	}
	return fs
}

// stateFlags registers the flags that name the policy and the state,
// shared by solve and explain.
func stateFlags(fs *flag.FlagSet, cfg *solveConfig) {
	fs.StringVar(&cfg.schema, "schema", "", "policy `file` (tables and annotated views)")
	fs.StringVar(&cfg.data, "data", "", "SQL `script` loaded into a fresh in-memory SQLite database (- for stdin)")
	fs.StringVar(&cfg.dsn, "db", "", "existing database: sqlite:PATH, PATH, or postgres://USER@HOST:PORT/DB?sslmode=disable")
	fs.DurationVar(&cfg.timeout, "timeout", 5*time.Second, "search time limit (0 = none)")
	fs.StringVar(&cfg.format, "format", "text", "output format: text or json")
}

// connectState validates the flags, compiles the policy, opens the state
// and connects the model to it. On failure it reports on stderr and
// returns a nil model with the exit status.
func connectState(ctx context.Context, cmd string, cfg solveConfig, stdin io.Reader, stderr io.Writer) (*weave.Model, *sql.DB, int) {
	if msg := cfg.validate(); msg != "" {
		fmt.Fprintf(stderr, "weave %s: %s\n\n%s", cmd, msg, usage)
		return nil, nil, exitError
	}
	model, err := compileFile(cfg.schema)
	if err != nil {
		reportError(stderr, cfg.schema, err)
		return nil, nil, exitError
	}
	db, err := openState(ctx, model, cfg, stdin)
	if err != nil {
		reportError(stderr, cfg.schema, err)
		return nil, nil, exitError
	}
	if err := model.Connect(db); err != nil {
		db.Close()
		reportError(stderr, cfg.schema, err)
		return nil, nil, exitError
	}
	return model, db, exitOK
}

// validate checks the flag combination; it returns a message, or "".
func (c *solveConfig) validate() string {
	switch {
	case c.schema == "":
		return "--schema is required"
	case c.data == "" && c.dsn == "":
		return "one of --data or --db is required"
	case c.data != "" && c.dsn != "":
		return "--data and --db are mutually exclusive"
	case c.format != "text" && c.format != "json":
		return fmt.Sprintf("--format must be text or json, not %q", c.format)
	case c.timeout < 0:
		return "--timeout must not be negative"
	}
	return ""
}

// exitCode maps a solve status to the command's exit status.
func exitCode(s weave.Status) int {
	switch s {
	case weave.Optimal, weave.Feasible:
		return exitOK
	case weave.Infeasible:
		return exitInfeasible
	case weave.Unknown:
		return exitUnknown
	}
	return exitError
}

// openState returns the database holding the state: a fresh in-memory
// SQLite database with the schema created and the --data script (a file,
// or stdin for "-") loaded,
// or the existing database named by --db.
func openState(ctx context.Context, model *weave.Model, cfg solveConfig, stdin io.Reader) (*sql.DB, error) {
	if cfg.dsn != "" {
		return openDSN(cfg.dsn)
	}
	name := cfg.data
	var script []byte
	var err error
	if name == "-" {
		name = "<stdin>"
		script, err = io.ReadAll(stdin)
	} else {
		script, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, err
	}
	// Every connection to ":memory:" is its own database: keep exactly one.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := model.CreateSchema(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	if err := runScript(ctx, db, name, string(script)); err != nil {
		db.Close()
		return nil, fmt.Errorf("loading the data: %w", err)
	}
	return db, nil
}

// openDSN opens an existing database. "sqlite:PATH" (also
// "sqlite://PATH") and a plain PATH name a SQLite file, which must exist:
// it is opened, never created, and never written to (verification's
// temporary tables are the connection's). postgres:// and
// postgresql:// DSNs (libpq's URL form, read by pgx) name a PostgreSQL
// database, which must be reachable and hold the schema's tables.
func openDSN(dsn string) (*sql.DB, error) {
	lower := strings.ToLower(dsn)
	if strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://") {
		return openPostgres(dsn)
	}
	path := dsn
	if strings.HasPrefix(lower, "sqlite:") {
		path = dsn[len("sqlite:"):]
		path = strings.TrimPrefix(path, "//")
	} else if i := strings.Index(dsn, "://"); i > 0 && !strings.ContainsAny(dsn[:i], `/\.`) {
		return nil, fmt.Errorf("unsupported database %q: use sqlite:PATH or a plain path", dsn[:i])
	}
	if path == "" {
		return nil, fmt.Errorf("--db %q names no file", dsn)
	}
	file := path
	if i := strings.IndexByte(file, '?'); i >= 0 {
		file = file[:i] // driver parameters, e.g. ?_pragma=busy_timeout(5000)
	}
	st, err := os.Stat(file)
	if err != nil {
		return nil, fmt.Errorf("opening the database: %w", err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("opening the database: %s is a directory", file)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return nil, fmt.Errorf("opening the database: %w", err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening the database %s: %w", file, err)
	}
	return db, nil
}

// openPostgres opens a PostgreSQL database and checks that it answers.
func openPostgres(dsn string) (*sql.DB, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("opening the database: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening the database: %w", err)
	}
	return db, nil
}
