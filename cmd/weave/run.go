package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/weavesql/weave"
)

// Exit statuses: part of the command's contract.
const (
	exitOK         = 0 // a solution was found (OPTIMAL or FEASIBLE); check passed
	exitError      = 1 // any error: usage, bad SQL, bad data, database, verification
	exitInfeasible = 2 // the hard constraints are proven infeasible
	exitUnknown    = 3 // no solution within the time limit
)

const usage = `Usage:
  weave solve --schema POLICY.sql (--data STATE.sql | --db DSN) [flags]
  weave check --schema POLICY.sql [--format text|json]
  weave explain --schema POLICY.sql (--data STATE.sql | --db DSN) [--format text|json]
  weave help

Commands:
  solve   compile the policy, load the cluster state and solve it
  check   compile the policy and list each view's role and the decision columns
  explain ground and solve once; print what each view became in the model
          (pushed down, or variables and constraints by kind), before and
          after presolve
  help    print this help

Solve flags:
  --schema FILE     the policy: tables and views annotated with
                    -- @variable_columns, -- @hard_constraint, -- @soft_constraint
  --data FILE       a SQL script (inserts) loaded into a fresh in-memory SQLite
                    database after the schema's tables and pushed-down views
                    are created there; - reads the script from stdin
  --db DSN          an existing database: sqlite:PATH, a plain PATH (SQLite), or
                    postgres://USER@HOST:PORT/DB?sslmode=disable (PostgreSQL)
                    (&search_path=S for a schema S); the tables must already be
                    there (psql -f POLICY.sql, sqlite3 FILE '.read POLICY.sql'):
                    Weave writes nothing to it, and views of the policy's
                    names are compared with the policy's
  --timeout D       search time limit, e.g. 500ms, 5s, 1m (default 5s; 0 = none)
  --seed N          random seed; the same seed and data give the same solution
  --format F        text (default) or json
  --verify          re-check the solution inside the database, against
                    temporary tables (SELECT suffices, and TEMP on PostgreSQL)
  --backend B       native (default: package cp) or minizinc (MiniZinc with
                    Gecode, the paper's pipeline; needs the minizinc command)

Exit status:
  0  a solution was found (OPTIMAL or FEASIBLE), or check found no error
  1  an error: usage, bad SQL, bad data, database, verification
  2  the hard constraints are proven infeasible (INFEASIBLE)
  3  no solution was found within the time limit (UNKNOWN)
`

// run is the whole command, testable in-process: it returns the exit
// status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitError
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	switch args[0] {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	case "solve":
		return runSolve(ctx, args[1:], stdin, stdout, stderr)
	case "check":
		return runCheck(args[1:], stdout, stderr)
	case "explain":
		return runExplain(ctx, args[1:], stdin, stdout, stderr)
	}
	fmt.Fprintf(stderr, "weave: unknown command %q\n\n%s", args[0], usage)
	return exitError
}

// newFlagSet returns a FlagSet for a subcommand that reports its errors
// (unknown flags, bad values) on stderr; parseFlags adds the usage.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("weave "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses a subcommand's flags. It returns done with the exit
// status when the command must stop: -h (usage on stdout, 0), a bad flag
// (usage on stderr, 1) or stray arguments (1).
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, done bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return exitOK, true
		}
		fmt.Fprint(stderr, "\n"+usage)
		return exitError, true
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "weave: unexpected argument %q\n\n%s", fs.Arg(0), usage)
		return exitError, true
	}
	return 0, false
}

// reportError prints an error on stderr: every positioned compile error
// on its own line as "file:line:col: view: message", other errors as
// "weave: message".
func reportError(stderr io.Writer, schemaFile string, err error) {
	var list weave.CompileErrors
	if errors.As(err, &list) && len(list) > 0 {
		for _, e := range list {
			fmt.Fprintf(stderr, "%s:%s\n", schemaFile, e.Error())
		}
		return
	}
	if errors.Is(err, weave.ErrCompile) {
		fmt.Fprintf(stderr, "%s: %v\n", schemaFile, err)
		return
	}
	// The library's errors say "weave: " themselves: one prefix, not two.
	msg := err.Error()
	if !strings.HasPrefix(msg, "weave: ") {
		msg = "weave: " + msg
	}
	fmt.Fprintln(stderr, msg)
}

// compileFile reads and compiles a schema file.
func compileFile(path string) (*weave.Model, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return weave.Compile(string(src))
}
