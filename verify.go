package weave

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/weavesql/weave/internal/ir"
	"github.com/weavesql/weave/internal/sqlfront"
)

// verify writes the solution into the database inside a transaction that
// is rolled back, and lets the database evaluate every hard view (no
// violating row or group) and every soft view (the value Weave claims).
// A disagreement is a compiler bug: ErrVerify names the view.
func (m *Model) verify(ctx context.Context, res *Result) error {
	soft, err := m.evaluateInDB(ctx, res.Tables)
	if err != nil {
		return err
	}
	for _, v := range m.prog.Views {
		if v.Kind != ir.Soft {
			continue
		}
		if got, want := soft[v.Name], res.Soft[v.Name]; got != want {
			return fmt.Errorf("%w: soft constraint %s: the database computes %d, the solver claims %d", ErrVerify, v.Name, got, want)
		}
	}
	return nil
}

// evaluateInDB puts the given tables in place of the stored ones inside a
// transaction that is rolled back, checks every hard view (an ErrVerify
// error names the first violated one) and returns the value of every soft
// view as the database computes it.
func (m *Model) evaluateInDB(ctx context.Context, tables map[string]*Table) (map[string]int64, error) {
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, dbError("verify", err)
	}
	defer tx.Rollback()
	pg := dialectOf(m.db) == dialectPostgres
	for _, t := range m.prog.Tables {
		tab := tables[t.Name]
		if tab == nil {
			continue
		}
		if pg && len(t.PrimaryKey) > 0 && m.referenced(t) {
			// PostgreSQL enforces foreign keys: the rows other tables
			// reference cannot be deleted, so they are updated in place.
			if err := updateRows(ctx, tx, t, tab); err != nil {
				return nil, err
			}
			continue
		}
		if _, err := tx.ExecContext(ctx, "delete from "+quote(t.Name)); err != nil {
			return nil, dbError("verify", err)
		}
		cols := make([]string, len(t.Columns))
		marks := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			cols[i] = quote(c.Name)
			marks[i] = fmt.Sprintf("$%d", i+1)
		}
		stmt, err := tx.PrepareContext(ctx, fmt.Sprintf("insert into %s (%s) values (%s)", quote(t.Name), strings.Join(cols, ", "), strings.Join(marks, ", ")))
		if err != nil {
			return nil, dbError("verify", err)
		}
		for _, row := range tab.Rows {
			args := make([]any, len(t.Columns))
			for i, c := range t.Columns {
				args[i] = row[c.Name]
			}
			if _, err := stmt.ExecContext(ctx, args...); err != nil {
				stmt.Close()
				return nil, dbError("verify: writing "+t.Name, err)
			}
		}
		stmt.Close()
	}
	views := map[string]*sqlfront.CreateView{}
	for _, st := range m.ast.Stmts {
		if v, ok := st.(*sqlfront.CreateView); ok {
			views[v.Name] = v
		}
	}
	for _, v := range m.prog.Views {
		if v.Kind == ir.Intermediate {
			if _, err := tx.ExecContext(ctx, v.Text); err != nil {
				return nil, fmt.Errorf("weave: verify: creating view %s: %w", v.Name, err)
			}
		}
	}
	soft := map[string]int64{}
	for _, v := range m.prog.Views {
		sel := views[v.Name].Query
		switch v.Kind {
		case ir.Hard:
			if err := m.verifyHard(ctx, tx, v, sel); err != nil {
				return nil, err
			}
		case ir.Soft:
			got, err := sumQuery(ctx, tx, "select * from ("+sqlfront.FormatSelect(sel)+") as weave_v")
			if err != nil {
				return nil, fmt.Errorf("weave: verify: soft constraint %s: %w", v.Name, err)
			}
			soft[v.Name] = got
		}
	}
	return soft, nil
}

type sqlTx = *sql.Tx

func notTrue(e sqlfront.Expr) sqlfront.Expr {
	return &sqlfront.UnaryExpr{Op: "not", X: &sqlfront.FuncCall{Name: "coalesce", Args: []sqlfront.Expr{&sqlfront.ParenExpr{X: e}, &sqlfront.BoolLit{Value: false}}}}
}

// verifyHard counts the rows or groups of a hard view that violate it.
func (m *Model) verifyHard(ctx context.Context, tx sqlTx, v *ir.View, sel *sqlfront.Select) error {
	q := *sel
	countStar := []*sqlfront.SelectItem{{Expr: &sqlfront.FuncCall{Name: "count", Star: true}}}
	var query string
	var agg []*sqlfront.FuncCall
	for _, it := range sel.Items {
		if fc, ok := it.Expr.(*sqlfront.FuncCall); ok && m.aggs[fc.Name].Post != nil {
			agg = append(agg, fc)
		}
	}
	// The shape comes from the SQL as written, not from the IR: rewrite
	// passes may have restated the view (pairwise inequalities as
	// all_different), and the check must hold the rewrite to the original.
	isAgg := len(sel.GroupBy) > 0 || sel.Having != nil || len(agg) > 0 || m.selectsAggregate(sel)
	switch {
	case !isAgg:
		q.Items = countStar
		q.Where = notTrue(sel.Where)
		query = sqlfront.FormatSelect(&q)
	case sel.Having != nil:
		// The having condition becomes a column, so the query stays an
		// aggregate query with or without group by.
		q.Items = []*sqlfront.SelectItem{{Expr: sel.Having, Alias: "weave_ok"}}
		q.Having = nil
		query = "select count(*) from (" + sqlfront.FormatSelect(&q) + ") as weave_v where not coalesce(weave_ok, false)"
	}
	if query != "" {
		var n int64
		if err := tx.QueryRowContext(ctx, query).Scan(&n); err != nil {
			return fmt.Errorf("weave: verify: hard constraint %s: %w\nquery: %s", v.Name, err, query)
		}
		if n > 0 {
			return fmt.Errorf("%w: hard constraint %s: the database finds %d violating rows or groups", ErrVerify, v.Name, n)
		}
	}
	for _, fc := range agg {
		if err := m.verifyAggregate(ctx, tx, v, sel, fc); err != nil {
			return err
		}
	}
	return nil
}

// selectsAggregate reports whether a select list calls an aggregate.
func (m *Model) selectsAggregate(sel *sqlfront.Select) bool {
	found := false
	for _, it := range sel.Items {
		if it.Expr == nil {
			continue
		}
		sqlfront.Inspect(it.Expr, func(n sqlfront.Node) bool {
			switch n := n.(type) {
			case *sqlfront.FuncCall:
				switch n.Name {
				case "count", "sum", "min", "max":
					found = true
				}
			case *sqlfront.Select:
				return false
			}
			return !found
		})
	}
	return found
}

// verifyAggregate evaluates a constraint aggregate per group in Go over
// the rows the database returns.
func (m *Model) verifyAggregate(ctx context.Context, tx sqlTx, v *ir.View, sel *sqlfront.Select, fc *sqlfront.FuncCall) error {
	a := m.aggs[fc.Name]
	if a.Holds == nil {
		return nil
	}
	q := *sel
	q.Items = nil
	for _, g := range sel.GroupBy {
		q.Items = append(q.Items, &sqlfront.SelectItem{Expr: g})
	}
	q.Items = append(q.Items, &sqlfront.SelectItem{Expr: fc.Args[0]})
	q.GroupBy, q.Having = nil, nil
	query := sqlfront.FormatSelect(&q)
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return fmt.Errorf("weave: verify: hard constraint %s: %w\nquery: %s", v.Name, err, query)
	}
	defer rows.Close()
	groups := map[string][]any{}
	n := len(q.Items)
	for rows.Next() {
		vals := make([]any, n)
		ptrs := make([]any, n)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("weave: verify: %w", err)
		}
		for i, x := range vals {
			if b, ok := x.([]byte); ok {
				vals[i] = string(b)
			}
		}
		key := fmt.Sprint(vals[:n-1])
		groups[key] = append(groups[key], vals[n-1])
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("weave: verify: %w", err)
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !a.Holds(groups[k]) {
			return fmt.Errorf("%w: hard constraint %s: %s does not hold for group %s (values %v)", ErrVerify, v.Name, fc.Name, k, groups[k])
		}
	}
	return nil
}

// sumQuery sums the single column of a query's rows (booleans 0/1, NULL 0).
func sumQuery(ctx context.Context, tx sqlTx, query string) (int64, error) {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return 0, fmt.Errorf("%w\nquery: %s", err, query)
	}
	defer rows.Close()
	var total int64
	for rows.Next() {
		var x any
		if err := rows.Scan(&x); err != nil {
			return 0, err
		}
		switch v := x.(type) {
		case int64:
			total += v
		case bool:
			if v {
				total++
			}
		case string, []byte:
			// PostgreSQL's numeric (sum over bigint) arrives as text.
			n, err := numericValue(v)
			if err != nil {
				return 0, err
			}
			total += n
		case nil:
		default:
			return 0, fmt.Errorf("soft constraint value %v (%T) is not an integer", x, x)
		}
	}
	return total, rows.Err()
}

// numericValue converts the text of an integral numeric ("42", "3.000")
// to int64.
func numericValue(v any) (int64, error) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case []byte:
		s = string(x)
	}
	t := s
	if i := strings.IndexByte(t, '.'); i >= 0 {
		if strings.Trim(t[i+1:], "0") != "" {
			return 0, fmt.Errorf("soft constraint value %s is not an integer (PostgreSQL divides numeric values exactly: sum over a bigint column is numeric there)", s)
		}
		t = t[:i]
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("soft constraint value %q is not an integer", s)
	}
	return n, nil
}

// referenced reports whether another table's foreign key may point at t.
func (m *Model) referenced(t *ir.Table) bool {
	for _, o := range m.prog.Tables {
		for _, c := range o.Columns {
			if c.References != nil && c.References.Table == t.Name {
				return true
			}
		}
		// Multi-column foreign keys are only in the statement's text.
		if low := strings.ToLower(o.Text); strings.Contains(low, "references "+t.Name) || strings.Contains(low, "references \""+t.Name+"\"") {
			return true
		}
	}
	return false
}

// updateRows writes a solved table over the stored one by primary key:
// every other column of every row is set to the row's value.
func updateRows(ctx context.Context, tx sqlTx, t *ir.Table, tab *Table) error {
	isKey := map[int]bool{}
	for _, k := range t.PrimaryKey {
		isKey[k] = true
	}
	var sets, conds []string
	var order []int
	n := 1
	for i, c := range t.Columns {
		if !isKey[i] {
			sets = append(sets, fmt.Sprintf("%s = $%d", quote(c.Name), n))
			order = append(order, i)
			n++
		}
	}
	if len(sets) == 0 {
		return nil
	}
	for _, k := range t.PrimaryKey {
		conds = append(conds, fmt.Sprintf("%s = $%d", quote(t.Columns[k].Name), n))
		order = append(order, k)
		n++
	}
	stmt, err := tx.PrepareContext(ctx, fmt.Sprintf("update %s set %s where %s", quote(t.Name), strings.Join(sets, ", "), strings.Join(conds, " and ")))
	if err != nil {
		return dbError("verify", err)
	}
	defer stmt.Close()
	for _, row := range tab.Rows {
		args := make([]any, len(order))
		for i, ci := range order {
			args[i] = row[t.Columns[ci].Name]
		}
		r, err := stmt.ExecContext(ctx, args...)
		if err != nil {
			return dbError("verify: writing "+t.Name, err)
		}
		if k, err := r.RowsAffected(); err == nil && k != 1 {
			return fmt.Errorf("weave: verify: writing %s: the row %v is no longer in the database", t.Name, args[len(sets):])
		}
	}
	return nil
}
