package ground

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/weavesql/weave/internal/ir"
)

// Relation is the fetched content of a table or pushed-down view. Values
// are int64, bool, string or nil.
type Relation struct {
	Name    string
	Columns []string
	Types   []ir.Type
	Rows    [][]any
}

// Snapshot is everything one solve reads, fetched in one transaction.
type Snapshot struct {
	Relations map[string]*Relation
}

// Needs lists the tables and pushed-down views the compiled part of the
// program reads: tables with decision columns (they are returned solved),
// and every relation a hard, soft or intermediate view or a domain source
// reads. Views pushed down to the database and only read by other such
// views are not fetched: the model's size follows what its views select.
func Needs(p *ir.Program) (tables []*ir.Table, inputs []*ir.View) {
	seenT := map[*ir.Table]bool{}
	seenV := map[*ir.View]bool{}
	var visit func(q *ir.Query)
	visit = func(q *ir.Query) {
		if q == nil {
			return
		}
		for _, s := range q.From {
			switch s.Kind {
			case ir.FromTable:
				if !seenT[s.Table] {
					seenT[s.Table] = true
					tables = append(tables, s.Table)
				}
			case ir.FromInput:
				if !seenV[s.View] {
					seenV[s.View] = true
					inputs = append(inputs, s.View)
				}
			case ir.FromQuery:
				visit(s.Query)
			}
		}
		ir.InspectQuery(q, func(e ir.Expr) bool {
			switch e := e.(type) {
			case *ir.In:
				visit(e.Sub)
			case *ir.Exists:
				visit(e.Sub)
			case *ir.Scalar:
				visit(e.Sub)
			}
			return true
		})
	}
	for _, t := range p.Tables {
		if t.HasVariables() && !seenT[t] {
			seenT[t] = true
			tables = append(tables, t)
		}
		for _, c := range t.Columns {
			for _, d := range c.Domain {
				visit(d.Query)
			}
		}
	}
	for _, v := range p.Views {
		if v.Kind != ir.Pushdown {
			visit(v.Query)
		}
	}
	return tables, inputs
}

// Fetch reads the relations the program needs through q (a read
// transaction, so that they form one consistent snapshot).
func Fetch(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, p *ir.Program) (*Snapshot, error) {
	tables, inputs := Needs(p)
	snap := &Snapshot{Relations: map[string]*Relation{}}
	for _, t := range tables {
		r := &Relation{Name: t.Name}
		for _, c := range t.Columns {
			r.Columns = append(r.Columns, c.Name)
			r.Types = append(r.Types, c.Type)
		}
		order := ""
		if len(t.PrimaryKey) > 0 {
			var ks []string
			for _, k := range t.PrimaryKey {
				ks = append(ks, quoteIdent(t.Columns[k].Name))
			}
			order = " order by " + strings.Join(ks, ", ")
		}
		if err := r.load(ctx, q, "select "+quoteList(r.Columns)+" from "+quoteIdent(t.Name)+order); err != nil {
			return nil, err
		}
		snap.Relations[t.Name] = r
	}
	for _, v := range inputs {
		r := &Relation{Name: v.Name}
		for _, o := range v.Query.Select {
			r.Columns = append(r.Columns, o.Name)
			r.Types = append(r.Types, o.Expr.Type())
		}
		// Views are read by position: the name a database gives an unnamed
		// expression column differs (SQLite: its text; PostgreSQL: the
		// function's name or ?column?).
		if err := r.load(ctx, q, "select * from "+quoteIdent(v.Name)); err != nil {
			return nil, err
		}
		snap.Relations[v.Name] = r
	}
	return snap, nil
}

func (r *Relation) load(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, query string) error {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return fmt.Errorf("reading %s: %w", r.Name, err)
	}
	defer rows.Close()
	n := len(r.Columns)
	cts, err := rows.ColumnTypes()
	if err != nil {
		return fmt.Errorf("reading %s: %w", r.Name, err)
	}
	if len(cts) != n {
		return fmt.Errorf("reading %s: the database returns %d columns, the schema declares %d", r.Name, len(cts), n)
	}
	// PostgreSQL pads char(n) values with blanks and ignores them in
	// comparisons; SQLite stores them as written. Both compare equal
	// without the padding, so it is dropped.
	var padded []bool
	for i, ct := range cts {
		if strings.EqualFold(ct.DatabaseTypeName(), "BPCHAR") {
			if padded == nil {
				padded = make([]bool, n)
			}
			padded[i] = true
		}
	}
	for rows.Next() {
		raw := make([]any, n)
		ptrs := make([]any, n)
		for i := range raw {
			ptrs[i] = &raw[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("reading %s: %w", r.Name, err)
		}
		for i, v := range raw {
			if padded != nil && padded[i] {
				switch x := v.(type) {
				case string:
					v = strings.TrimRight(x, " ")
				case []byte:
					v = strings.TrimRight(string(x), " ")
				}
			}
			nv, err := normalize(v, r.Types[i])
			if err != nil {
				return fmt.Errorf("reading %s.%s: %w", r.Name, r.Columns[i], err)
			}
			raw[i] = nv
		}
		r.Rows = append(r.Rows, raw)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", r.Name, err)
	}
	return nil
}

// normalize converts a driver value to the Go type of the column's type.
func normalize(v any, t ir.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t {
	case ir.Int:
		switch x := v.(type) {
		case int64:
			return x, nil
		case int32:
			return int64(x), nil
		case int:
			return int64(x), nil
		case bool:
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		case string:
			// PostgreSQL's numeric (sum over bigint) arrives as text.
			return numericInt(x)
		case []byte:
			return numericInt(string(x))
		}
	case ir.Bool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case int64:
			return x != 0, nil
		}
	case ir.String:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
	}
	return nil, fmt.Errorf("value %v (%T) does not fit type %s", v, v, t)
}

// numericInt converts the text of an integral numeric value ("42",
// "-7", "3.000") to int64. A fraction is an error: PostgreSQL divides
// numeric values (sum over a bigint column) exactly where SQLite divides
// integers.
func numericInt(s string) (any, error) {
	t := s
	if i := strings.IndexByte(t, '.'); i >= 0 {
		if strings.Trim(t[i+1:], "0") != "" {
			return nil, fmt.Errorf("value %s is not an integer (PostgreSQL computed a decimal: sum over a bigint column is numeric there, and numeric division is exact; declare the column integer)", s)
		}
		t = t[:i]
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("value %q is not an integer", s)
	}
	return n, nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func quoteList(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = quoteIdent(c)
	}
	return strings.Join(q, ", ")
}
