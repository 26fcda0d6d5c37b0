package weave

import (
	"context"
	"database/sql"
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/weavesql/weave/internal/ground"
	"github.com/weavesql/weave/internal/ir"
)

// CreateSchema creates the schema's tables, their indexes and the views
// pushed down to the database in an empty database, in schema order, in
// one transaction. Views that touch decision columns are compiled, not
// created. It also creates an index for every equality between columns
// of two tables in a pushed-down view (a join or a correlated lookup):
// unindexed correlated lookups cost seconds at 100k rows.
func (m *Model) CreateSchema(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("weave: creating schema: %w", err)
	}
	defer tx.Rollback()
	exec := func(stmt string) error {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("weave: creating schema: %w\nstatement: %s", err, stmt)
		}
		return nil
	}
	for _, t := range m.prog.Tables {
		if err := exec(t.Text); err != nil {
			return err
		}
		for _, ix := range t.Indexes {
			if err := exec(ix); err != nil {
				return err
			}
		}
	}
	for _, ix := range m.lookupIndexes(dialectOf(db)) {
		if err := exec(ix); err != nil {
			return err
		}
	}
	for _, v := range m.prog.Views {
		if v.Kind == ir.Pushdown {
			if err := exec(v.Text); err != nil {
				return err
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("weave: creating schema: %w", err)
	}
	return nil
}

// lookupIndexes returns "create index if not exists" statements for the
// table columns compared by equality in pushed-down views.
func (m *Model) lookupIndexes(d dialect) []string {
	seen := map[string]bool{}
	var out []string
	add := func(t *ir.Table, col int) {
		if len(t.PrimaryKey) == 1 && t.PrimaryKey[0] == col {
			return // already indexed
		}
		name := "weave_ix_" + t.Name + "_" + t.Columns[col].Name
		if len(name) > 63 {
			// PostgreSQL truncates names to 63 bytes: two long names
			// would collide, and "if not exists" would hide it.
			name = fmt.Sprintf("%s_%08x", name[:54], crc32.ChecksumIEEE([]byte(name)))
		}
		if seen[name] {
			return
		}
		seen[name] = true
		// PostgreSQL puts an index in its table's schema and takes the
		// table's name qualified; SQLite takes the index's name qualified
		// by the attached database and the table's name bare.
		index, table := quote(name), t.SQLName()
		if d == dialectSQLite && t.Schema != "" {
			index, table = quote(t.Schema)+"."+quote(name), quote(t.Name)
		}
		out = append(out, fmt.Sprintf("create index if not exists %s on %s (%s)",
			index, table, quote(t.Columns[col].Name)))
	}
	var visit func(q *ir.Query, outer []*ir.Query)
	visit = func(q *ir.Query, outer []*ir.Query) {
		stack := append([]*ir.Query{q}, outer...)
		for _, s := range q.From {
			if s.Kind == ir.FromQuery && s.View == nil && s.Query != nil {
				visit(s.Query, nil) // a derived table sees no enclosing query
			}
		}
		table := func(c *ir.ColRef) (*ir.Table, bool) {
			if c.Up >= len(stack) {
				return nil, false
			}
			s := stack[c.Up].From[c.Source]
			return s.Table, s.Kind == ir.FromTable
		}
		ir.InspectOwn(q, func(e ir.Expr) bool {
			switch e := e.(type) {
			case *ir.Binary:
				l, lok := e.L.(*ir.ColRef)
				r, rok := e.R.(*ir.ColRef)
				if e.Op == "=" && lok && rok {
					if t, ok := table(l); ok && l.Up == 0 {
						add(t, l.Col)
					}
					if t, ok := table(r); ok && r.Up == 0 {
						add(t, r.Col)
					}
				}
			case *ir.In:
				if e.Sub != nil {
					visit(e.Sub, stack)
					return false
				}
			case *ir.Exists:
				visit(e.Sub, stack)
				return false
			case *ir.Scalar:
				visit(e.Sub, stack)
				return false
			}
			return true
		})
	}
	for _, v := range m.prog.Views {
		if v.Kind == ir.Pushdown {
			visit(v.Query, nil)
		}
	}
	return out
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// Connect binds the model to a database holding the state. It checks that
// every table and pushed-down view the model reads exists with the columns
// and compatible types the schema declares, and names what is missing or
// mismatched (ErrSchemaMismatch). Views of the policy's names that the
// database already has (a policy loaded with the database's own client)
// are compared with the policy's queries: one that differs is an
// ErrSchemaMismatch naming it. Connect writes nothing to the database.
func (m *Model) Connect(db *sql.DB) error {
	return m.connect(db, relationColumns{})
}

// ConnectAll connects each model to db as Connect does, in order, and
// returns the first one's error, leaving the models after it unconnected.
// Models of one database read many of the same tables and views (a
// scheduler's placement and preemption models read the same forty views):
// ConnectAll reads each one's columns from the database once for all the
// models, and checks each model's declarations against them. Preparing the
// query that reads a view's columns (SQLite plans the whole view) was
// the larger part of connecting a model.
func ConnectAll(db *sql.DB, models ...*Model) error {
	read := relationColumns{}
	for _, m := range models {
		if err := m.connect(db, read); err != nil {
			return err
		}
	}
	return nil
}

// relationColumns holds the columns Connect read of each table or view, by
// its SQL name, for the models ConnectAll connects after the first.
type relationColumns map[string]*columnsRead

// columnsRead is what the database says of a relation's columns: their
// names and type names, or why they could not be read (queryErr: the
// relation does not exist or cannot be read; err: its columns could not).
type columnsRead struct {
	names, types  []string
	queryErr, err error
}

// columns reads the columns of the relation sqlName, once per read.
func (read relationColumns) columns(ctx context.Context, db *sql.DB, sqlName string) *columnsRead {
	if c, ok := read[sqlName]; ok {
		return c
	}
	c := &columnsRead{}
	read[sqlName] = c
	rows, err := db.QueryContext(ctx, "select * from "+sqlName+" where 1 = 0")
	if err != nil {
		c.queryErr = err
		return c
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		c.err = err
		return c
	}
	for _, ct := range cts {
		c.names = append(c.names, ct.Name())
		c.types = append(c.types, ct.DatabaseTypeName())
	}
	return c
}

func (m *Model) connect(db *sql.DB, read relationColumns) error {
	ctx := context.Background()
	tables, inputs := ground.Needs(m.prog)
	var problems []string
	check := func(kind, name, sqlName string, cols []string, types []ir.Type) {
		c := read.columns(ctx, db, sqlName)
		if c.queryErr != nil {
			problems = append(problems, fmt.Sprintf("%s %s does not exist or cannot be read (%v)", kind, name, c.queryErr))
			return
		}
		if c.err != nil {
			problems = append(problems, fmt.Sprintf("%s %s: %v", kind, name, c.err))
			return
		}
		have := map[string]string{} // column -> database type name
		for i, n := range c.names {
			have[strings.ToLower(n)] = c.types[i]
		}
		if kind == "view" {
			// Views are read by position: databases name unnamed
			// expression columns differently (SQLite: the expression's
			// text; PostgreSQL: the function's name or ?column?).
			if len(c.names) != len(cols) {
				problems = append(problems, fmt.Sprintf("view %s has %d columns in the database, the schema declares %d (%s)", name, len(c.names), len(cols), strings.Join(cols, ", ")))
				return
			}
			have = map[string]string{}
			for i, col := range cols {
				have[col] = c.types[i]
			}
		}
		for i, col := range cols {
			dbType, ok := have[col]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s %s has no column %s", kind, name, col))
				continue
			}
			if !compatible(dbType, types[i]) {
				problems = append(problems, fmt.Sprintf("column %s.%s has type %s in the database, the schema declares %s", name, col, dbType, types[i]))
			}
		}
	}
	for _, t := range tables {
		var cols []string
		var types []ir.Type
		for _, c := range t.Columns {
			cols = append(cols, c.Name)
			types = append(types, c.Type)
		}
		check("table", t.Name, t.SQLName(), cols, types)
	}
	for _, v := range inputs {
		var cols []string
		var types []ir.Type
		for _, o := range v.Query.Select {
			cols = append(cols, o.Name)
			types = append(types, o.Expr.Type())
		}
		check("view", v.Name, v.SQLName(), cols, types)
	}
	differ, err := m.compareViews(ctx, db)
	if err != nil {
		return err
	}
	problems = append(problems, differ...)
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrSchemaMismatch, strings.Join(problems, "; "))
	}
	if dialectOf(db) == dialectPostgres {
		if err := m.checkCollation(ctx, db); err != nil {
			return err
		}
	}
	m.mu.Lock()
	m.reads.close()
	m.db, m.reads, m.readsPrepared = db, nil, false
	m.mu.Unlock()
	return nil
}

// compatible reports whether a database type name can hold a Weave type.
// Unknown or empty names (SQLite views, expressions) are accepted: values
// are checked again as they are read.
func compatible(dbType string, t ir.Type) bool {
	d := strings.ToUpper(dbType)
	if i := strings.IndexByte(d, '('); i >= 0 {
		d = d[:i]
	}
	d = strings.TrimSpace(d)
	ints := []string{"INT", "INTEGER", "BIGINT", "SMALLINT", "INT2", "INT4", "INT8", "NUMERIC"}
	bools := []string{"BOOL", "BOOLEAN"}
	strs := []string{"VARCHAR", "TEXT", "CHAR", "BPCHAR", "CHARACTER VARYING", "CHARACTER", "NAME"}
	in := func(l []string) bool {
		for _, x := range l {
			if d == x {
				return true
			}
		}
		return false
	}
	if !in(ints) && !in(bools) && !in(strs) {
		return true
	}
	switch t {
	case ir.Int:
		return in(ints)
	case ir.Bool:
		// SQLite stores booleans as integers.
		return in(bools) || in(ints)
	case ir.String:
		return in(strs)
	}
	return true
}
