package weave

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weavesql/weave/internal/ir"
	"github.com/weavesql/weave/internal/sqlfront"
)

// compareViews compares the policy's views that the database already has
// (the user loaded the policy, or part of it, with their own client) with
// the policy's queries, and returns a problem naming each one that
// differs. Weave uses such a view when it is the policy's query and never
// replaces or drops it: the user's objects are the user's. A view the
// database does not have is no problem here (a pushed-down view the
// model reads and the database lacks is reported by Connect's column
// checks), and neither is a table of a view's name.
func (m *Model) compareViews(ctx context.Context, db *sql.DB) ([]string, error) {
	var views []*sqlfront.CreateView
	for _, st := range m.ast.Stmts {
		if v, ok := st.(*sqlfront.CreateView); ok {
			views = append(views, v)
		}
	}
	if len(views) == 0 {
		return nil, nil
	}
	if dialectOf(db) == dialectPostgres {
		return comparePostgresViews(ctx, db, views)
	}
	return compareSQLiteViews(ctx, db, views)
}

// mismatch is the problem of a view the database has with another query.
func viewMismatch(name, why string) string {
	return fmt.Sprintf("view %s in the database is not the policy's view (%s); Weave neither replaces nor drops a view it did not create: "+
		"drop it, or load the policy's", name, why)
}

// compareSQLiteViews parses the text SQLite keeps of each view and compares
// its query with the policy's, as printed back by the parser (spacing,
// case and comments aside).
func compareSQLiteViews(ctx context.Context, db *sql.DB, views []*sqlfront.CreateView) ([]string, error) {
	var problems []string
	// One read of each schema's catalogue, not one query per view: a
	// policy set has tens of views, and each query cost a prepare.
	catalogues := map[string]map[string]sqliteObject{}
	for _, v := range views {
		master := "sqlite_master"
		if v.Schema != "" {
			master = quote(v.Schema) + ".sqlite_master"
		}
		objects, ok := catalogues[master]
		if !ok {
			var err error
			if objects, err = readSQLiteCatalogue(ctx, db, master); err != nil {
				return nil, dbError("reading the definition of view "+v.Name, err)
			}
			catalogues[master] = objects
		}
		obj, ok := objects[foldASCII(v.Name)]
		if !ok {
			continue
		}
		if !obj.text.Valid {
			return nil, dbError("reading the definition of view "+v.Name, fmt.Errorf("%s has no definition of %s %s", master, obj.kind, v.Name))
		}
		if obj.kind != "view" {
			continue
		}
		text := obj.text.String
		have := parseStoredView(text)
		switch {
		case !have.ok:
			problems = append(problems, viewMismatch(v.Name, "Weave cannot read its definition: "+oneLine(text)))
		case have.query != sqlfront.FormatSelect(v.Query):
			problems = append(problems, viewMismatch(v.Name, "its query differs: the database has "+oneLine(have.query)))
		case have.columns != strings.Join(v.Columns, ","):
			problems = append(problems, viewMismatch(v.Name, "its column list differs"))
		}
	}
	return problems, nil
}

// sqliteObject is a table or view of a SQLite catalogue: its type and the
// text of its definition.
type sqliteObject struct {
	kind string
	text sql.NullString
}

// readSQLiteCatalogue reads the tables and views of a sqlite_master (master
// is its qualified name), by name folded as SQLite's NOCASE collation folds
// it (ASCII letters only): SQLite refuses two tables or views whose names
// fold alike, so a name finds the one object "name = ? collate nocase"
// finds.
func readSQLiteCatalogue(ctx context.Context, db *sql.DB, master string) (map[string]sqliteObject, error) {
	rows, err := db.QueryContext(ctx, "select name, type, sql from "+master+" where type in ('table', 'view')")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]sqliteObject{}
	for rows.Next() {
		var name string
		var obj sqliteObject
		if err := rows.Scan(&name, &obj.kind, &obj.text); err != nil {
			return nil, err
		}
		if _, dup := out[foldASCII(name)]; !dup {
			out[foldASCII(name)] = obj
		}
	}
	return out, rows.Err()
}

// foldASCII lowers the ASCII letters of s, as SQLite's NOCASE collation
// compares (other letters are compared as they are).
func foldASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// storedView is what compareSQLiteViews compares of a view definition
// SQLite keeps: its query as the parser prints it back and its column
// list. ok is false when the text is not one create view statement.
type storedView struct {
	ok             bool
	query, columns string
}

// storedViews memoizes parseStoredView by the definition's text: every
// Connect compares each of the policy's views the database has, and
// parsing their text again was about a sixth of starting a scheduler
// (two models connected to the views one of them had just created). The
// parse is a function of the text alone, so the memo returns what parsing
// would. It keeps at most maxStoredViews texts (a policy set has tens of
// views; a process that meets more parses the rest each time).
var (
	storedViews     sync.Map // text -> storedView
	storedViewCount atomic.Int64
)

const maxStoredViews = 4096

// parseStoredView parses the text of a view definition read from
// sqlite_master.
func parseStoredView(text string) storedView {
	if v, ok := storedViews.Load(text); ok {
		return v.(storedView)
	}
	var out storedView
	s, err := sqlfront.Parse(text + ";")
	if err == nil && len(s.Stmts) == 1 {
		if have, ok := s.Stmts[0].(*sqlfront.CreateView); ok {
			out = storedView{ok: true, query: sqlfront.FormatSelect(have.Query), columns: strings.Join(have.Columns, ",")}
		}
	}
	if storedViewCount.Load() < maxStoredViews {
		if _, loaded := storedViews.LoadOrStore(text, out); !loaded {
			storedViewCount.Add(1)
		}
	}
	return out
}

// comparePostgresViews has PostgreSQL print both queries: the user's view
// and, beside it, the policy's query as a temporary view (created in a
// transaction that is rolled back), each with pg_get_viewdef, which
// normalises spacing, case and parentheses. Creating the temporary view
// needs the TEMP privilege; without it Connect fails, naming the view,
// rather than use a view it could not compare.
func comparePostgresViews(ctx context.Context, db *sql.DB, views []*sqlfront.CreateView) ([]string, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, dbError("comparing views", err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, dbError("comparing views", err)
	}
	defer tx.Rollback()
	var problems []string
	for _, v := range views {
		var oid int64
		var kind string
		err := tx.QueryRowContext(ctx, "select c.oid::bigint, c.relkind::text from pg_class c where c.oid = to_regclass($1)", ir.QualifiedName(v.Schema, v.Name)).Scan(&oid, &kind)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, dbError("reading the definition of view "+v.Name, err)
		}
		if kind != "v" && kind != "m" {
			continue
		}
		if _, err := tx.ExecContext(ctx, "savepoint weave_compare"); err != nil {
			return nil, dbError("comparing views", err)
		}
		cols := ""
		if len(v.Columns) > 0 {
			q := make([]string, len(v.Columns))
			for i, c := range v.Columns {
				q[i] = quote(c)
			}
			cols = " (" + strings.Join(q, ", ") + ")"
		}
		_, err = tx.ExecContext(ctx, "create temporary view weave_compare_view"+cols+" as "+sqlfront.FormatSelect(v.Query))
		if err != nil {
			var pg *pgconn.PgError
			if errors.As(err, &pg) && pg.Code == "42501" { // insufficient_privilege
				// Reading a view of the user's without comparing it would
				// take a query that may differ for the policy's.
				return nil, fmt.Errorf("weave: view %s is in the database and cannot be compared with the policy's query: "+
					"that needs the TEMP privilege on the database: %w", v.Name, err)
			}
			if connectionLost(err) {
				return nil, dbError("comparing views", err)
			}
			problems = append(problems, viewMismatch(v.Name, "the policy's query does not run beside it: "+oneLine(err.Error())))
		} else {
			var have, want string
			var same bool
			err := tx.QueryRowContext(ctx, `select pg_get_viewdef($1::oid), pg_get_viewdef('pg_temp.weave_compare_view'::regclass),
				(select array_agg(attname::text order by attnum) from pg_attribute where attrelid = $1::oid and attnum > 0 and not attisdropped) =
				(select array_agg(attname::text order by attnum) from pg_attribute where attrelid = 'pg_temp.weave_compare_view'::regclass and attnum > 0 and not attisdropped)`,
				oid).Scan(&have, &want, &same)
			if err != nil {
				return nil, dbError("comparing view "+v.Name, err)
			}
			switch {
			case have != want:
				problems = append(problems, viewMismatch(v.Name, "its query differs: the database has "+oneLine(have)))
			case !same:
				problems = append(problems, viewMismatch(v.Name, "its column names differ"))
			}
		}
		if _, err := tx.ExecContext(ctx, "rollback to savepoint weave_compare"); err != nil {
			return nil, dbError("comparing views", err)
		}
	}
	return problems, nil
}

// oneLine collapses runs of white space, for a definition in a message.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
