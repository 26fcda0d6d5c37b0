package weave

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/weavesql/weave/internal/ir"
)

// dialect is the SQL database a model is connected to, told by the
// driver of the *sql.DB (never by a DSN).
type dialect int

const (
	// dialectSQLite covers SQLite and any other driver: Weave's behaviour
	// before PostgreSQL support.
	dialectSQLite dialect = iota
	// dialectPostgres is PostgreSQL through pgx's database/sql driver.
	dialectPostgres
)

func dialectOf(db *sql.DB) dialect {
	if db == nil {
		return dialectSQLite
	}
	if _, ok := db.Driver().(*stdlib.Driver); ok {
		return dialectPostgres
	}
	return dialectSQLite
}

// snapshotOptions are the options of the read transaction of a solve. On
// PostgreSQL the default isolation (READ COMMITTED) gives every statement
// its own snapshot; REPEATABLE READ gives the whole transaction one, so
// that the tables and views a solve reads are consistent with each other.
// SQLite's read transaction is a snapshot already.
func snapshotOptions(d dialect) *sql.TxOptions {
	if d == dialectPostgres {
		return &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	return &sql.TxOptions{ReadOnly: true}
}

// jitOff turns PostgreSQL's JIT compilation off until the end of tx, for
// the reads of a solve and the checks of verification. The views a model
// reads nest correlated subqueries several deep, over tables that are
// small or have no statistics yet: the planner's estimates pass the cost
// at which PostgreSQL compiles a query (jit_above_cost), and compiling one
// such view took 16 s where running it takes milliseconds (the
// scheduler's topology_spread_domain on three nodes).
func jitOff(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, "set local jit = off")
	return err
}

// dbError wraps a database error of a phase ("reading the state",
// "verify"), saying so plainly when the connection itself was lost: the
// solve then returns no result, and the next one reconnects.
func dbError(phase string, err error) error {
	if connectionLost(err) {
		return fmt.Errorf("weave: %s: the connection to the database was lost: %w", phase, err)
	}
	return fmt.Errorf("weave: %s: %w", phase, err)
}

// connectionLost reports whether err means the database went away rather
// than rejected a statement.
func connectionLost(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		// Class 08: connection exception; 57P01-57P03: administrator
		// shutdown, crash shutdown, cannot connect now.
		return strings.HasPrefix(pg.Code, "08") || strings.HasPrefix(pg.Code, "57P")
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	return strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "connection reset")
}

// checkCollation rejects a PostgreSQL database whose collation orders
// strings differently from SQLite and from Weave (byte order), when the
// model compares strings by order outside the views the database
// evaluates by itself: the solver and the database would disagree.
func (m *Model) checkCollation(ctx context.Context, db *sql.DB) error {
	where := m.stringOrdering()
	if where == "" {
		return nil
	}
	var coll string
	if err := db.QueryRowContext(ctx, "select datcollate from pg_database where datname = current_database()").Scan(&coll); err != nil {
		return fmt.Errorf("weave: reading the database collation: %w", err)
	}
	if byteOrderCollation(coll) {
		return nil
	}
	return fmt.Errorf("%w: view %s orders strings, and the database collation %s orders them differently from Weave (byte order); "+
		"create the database with LC_COLLATE 'C' (create database ... template template0 lc_collate 'C' lc_ctype 'C')",
		ErrSchemaMismatch, where, coll)
}

func byteOrderCollation(c string) bool {
	switch strings.ToLower(c) {
	case "c", "posix", "c.utf8", "c.utf-8", "ucs_basic":
		return true
	}
	return false
}

// stringOrdering returns the name of the first compiled view (one Weave
// evaluates rather than the database) that compares strings with <, <=,
// > or >=, or "".
func (m *Model) stringOrdering() string {
	for _, v := range m.prog.Views {
		if v.Kind == ir.Pushdown {
			continue
		}
		found := false
		var visit func(q *ir.Query)
		visit = func(q *ir.Query) {
			if q == nil || found {
				return
			}
			for _, s := range q.From {
				if s.Kind == ir.FromQuery {
					visit(s.Query)
				}
			}
			ir.InspectQuery(q, func(e ir.Expr) bool {
				switch e := e.(type) {
				case *ir.Binary:
					switch e.Op {
					case "<", "<=", ">", ">=":
						if e.L.Type() == ir.String || e.R.Type() == ir.String {
							found = true
						}
					}
				case *ir.In:
					visit(e.Sub)
				case *ir.Exists:
					visit(e.Sub)
				case *ir.Scalar:
					visit(e.Sub)
				}
				return !found
			})
		}
		visit(v.Query)
		if found {
			return v.Name
		}
	}
	return ""
}

// LoadRows appends rows to a table in one transaction: with PostgreSQL's
// COPY (pgx CopyFrom) when db is a pgx database, otherwise (SQLite) with
// a prepared multi-row insert. Values are int64 (or any Go integer),
// bool, string or nil. The table and columns are quoted as given: Weave's
// names are lower case.
func LoadRows(ctx context.Context, db *sql.DB, table string, columns []string, rows [][]any) error {
	if len(columns) == 0 {
		return fmt.Errorf("weave: loading %s: no columns", table)
	}
	for i, r := range rows {
		if len(r) != len(columns) {
			return fmt.Errorf("weave: loading %s: row %d has %d values, want %d", table, i, len(r), len(columns))
		}
	}
	if len(rows) == 0 {
		return nil
	}
	if dialectOf(db) == dialectPostgres {
		return copyRows(ctx, db, table, columns, rows)
	}
	return insertRows(ctx, db, table, columns, rows)
}

func copyRows(ctx context.Context, db *sql.DB, table string, columns []string, rows [][]any) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return dbError("loading "+table, err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		pc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", dc)
		}
		n, err := pc.Conn().CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromRows(rows))
		if err == nil && n != int64(len(rows)) {
			err = fmt.Errorf("copied %d rows of %d", n, len(rows))
		}
		return err
	})
	if err != nil {
		return dbError("loading "+table, err)
	}
	return nil
}

// insertBatch bounds the rows of one insert statement (SQLite allows
// 32766 parameters).
const insertBatch = 256

func insertRows(ctx context.Context, db *sql.DB, table string, columns []string, rows [][]any) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return dbError("loading "+table, err)
	}
	defer tx.Rollback()
	if err := insertAll(ctx, tx, quote(table), columns, rows); err != nil {
		return dbError("loading "+table, err)
	}
	if err := tx.Commit(); err != nil {
		return dbError("loading "+table, err)
	}
	return nil
}

// execer is what insertAll and the verifier run statements on: a
// *sql.Tx or a *sql.Conn.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// insertAll appends rows to relation (its SQL text, quoted) with
// prepared multi-row inserts.
func insertAll(ctx context.Context, ex execer, relation string, columns []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	per := insertBatch
	if max := 30000 / len(columns); per > max {
		per = max
	}
	cols := make([]string, len(columns))
	for i, c := range columns {
		cols[i] = quote(c)
	}
	statement := func(n int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "insert into %s (%s) values ", relation, strings.Join(cols, ", "))
		k := 1
		for r := 0; r < n; r++ {
			if r > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('(')
			for c := range columns {
				if c > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "$%d", k)
				k++
			}
			b.WriteByte(')')
		}
		return b.String()
	}
	var full *sql.Stmt
	var err error
	args := make([]any, 0, per*len(columns))
	for start := 0; start < len(rows); start += per {
		end := min(start+per, len(rows))
		args = args[:0]
		for _, r := range rows[start:end] {
			args = append(args, r...)
		}
		if end-start == per {
			if full == nil {
				if full, err = ex.PrepareContext(ctx, statement(per)); err != nil {
					return err
				}
				defer full.Close()
			}
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = ex.ExecContext(ctx, statement(end-start), args...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
