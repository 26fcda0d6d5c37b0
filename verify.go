package weave

import (
	"context"
	"database/sql"
	"fmt"
	"hash/crc32"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/weavesql/weave/internal/ir"
	"github.com/weavesql/weave/internal/sqlfront"
)

// verify checks the solution against the database: the assignment goes
// into temporary tables, and the database evaluates every hard view (no
// violating row or group) and every soft view (the value Weave claims)
// over them. A disagreement is a compiler bug: ErrVerify names the view.
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

// evaluateInDB checks every hard view (an ErrVerify error names the first
// violated one) and returns the value of every soft view as the database
// computes it, with the given tables in place of the stored ones.
func (m *Model) evaluateInDB(ctx context.Context, tables map[string]*Table) (map[string]int64, error) {
	vr, err := m.openVerifier(ctx)
	if err != nil {
		return nil, err
	}
	defer vr.close()
	return vr.evaluate(ctx, tables)
}

// A verifier checks assignments against the database without writing to
// the user's tables or locking them against writers.
//
// On one connection, each table with decision columns gets a temporary
// copy (local to that connection), each compiled view a checked view
// reads becomes a temporary view over those copies, and the checks are
// the views' SQL as written with their references to those tables and
// views replaced. The user's own views of the same names are neither read
// nor replaced (Connect compares them with the policy). It needs the
// SELECT privilege on the tables and views read and, on PostgreSQL, TEMP
// on the database; no trigger of the user's fires.
//
// On PostgreSQL it all happens in one REPEATABLE READ transaction (one
// snapshot for every check), rolled back at the end, which drops the
// temporary objects; each assignment is loaded after a savepoint and
// rolled back to it. Reads take no lock that blocks a writer. SQLite
// holds a read lock for as long as a transaction lasts, which in rollback
// journal mode keeps writers from committing: the temporary objects are
// created and filled in short transactions and each check is a statement
// of its own; they are dropped at the end (and before, if an interrupted
// verification left them behind on the connection).
type verifier struct {
	m       *Model
	dialect dialect
	conn    *sql.Conn
	tx      *sql.Tx // PostgreSQL: the transaction everything runs in
	views   map[string]*sqlfront.CreateView
	defs    map[string]*sqlfront.CreateTable
	tables  []*ir.Table       // the tables with temporary copies
	temp    map[string]string // table or view name -> its temporary relation (SQL)
}

// openVerifier creates the temporary tables and views of a verification
// on a connection of its own. close releases them.
func (m *Model) openVerifier(ctx context.Context) (*verifier, error) {
	conn, err := m.db.Conn(ctx)
	if err != nil {
		return nil, dbError("verify", err)
	}
	vr := &verifier{m: m, dialect: dialectOf(m.db), conn: conn, temp: map[string]string{},
		views: map[string]*sqlfront.CreateView{}, defs: map[string]*sqlfront.CreateTable{}}
	for _, st := range m.ast.Stmts {
		switch s := st.(type) {
		case *sqlfront.CreateView:
			vr.views[s.Name] = s
		case *sqlfront.CreateTable:
			vr.defs[s.Name] = s
		}
	}
	for _, t := range m.prog.Tables {
		if t.HasVariables() {
			vr.tables = append(vr.tables, t)
		}
	}
	if vr.dialect == dialectPostgres {
		tx, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
		if err != nil {
			conn.Close()
			return nil, dbError("verify", err)
		}
		vr.tx = tx
		// The temporary tables have no statistics until analysed (fill
		// analyses large ones), so a check's estimates pass the JIT cost
		// too.
		if err := jitOff(ctx, tx); err != nil {
			vr.close()
			return nil, dbError("verify", err)
		}
		if err := vr.setUp(ctx, tx); err != nil {
			vr.close()
			return nil, err
		}
		return vr, nil
	}
	if err := vr.drop(ctx); err != nil {
		conn.Close()
		return nil, dbError("verify: dropping temporary tables", err)
	}
	err = vr.inTx(ctx, func(tx *sql.Tx) error { return vr.setUp(ctx, tx) })
	if err != nil {
		vr.close()
		return nil, err
	}
	return vr, nil
}

// inTx runs f in a transaction on the verifier's connection (SQLite).
func (vr *verifier) inTx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := vr.conn.BeginTx(ctx, nil)
	if err != nil {
		return dbError("verify", err)
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return dbError("verify", err)
	}
	return nil
}

// close drops what the verifier created and returns its connection.
func (vr *verifier) close() {
	if vr.tx != nil {
		vr.tx.Rollback()
	} else {
		vr.drop(context.Background())
	}
	vr.conn.Close()
}

func (vr *verifier) hook(stage string) {
	if vr.m.verifyHook != nil {
		vr.m.verifyHook(stage)
	}
}

// evaluate checks one assignment: the given tables (by name) in place of
// the stored ones. It returns the value of every soft view; an ErrVerify
// error names the first violated hard view or table constraint.
func (vr *verifier) evaluate(ctx context.Context, tables map[string]*Table) (map[string]int64, error) {
	var checks execer = vr.conn
	if vr.tx != nil {
		checks = vr.tx
		if _, err := vr.tx.ExecContext(ctx, "savepoint weave_verify"); err != nil {
			return nil, dbError("verify", err)
		}
		// Rolled back to and released: savepoints must not pile up over
		// the assignments of a brute force.
		defer func() {
			vr.tx.ExecContext(context.Background(), "rollback to savepoint weave_verify")
			vr.tx.ExecContext(context.Background(), "release savepoint weave_verify")
		}()
		if err := vr.fill(ctx, vr.tx, tables); err != nil {
			return nil, err
		}
	} else {
		err := vr.inTx(ctx, func(tx *sql.Tx) error {
			for _, t := range vr.tables {
				if _, err := tx.ExecContext(ctx, "delete from "+vr.temp[t.Name]); err != nil {
					return dbError("verify", err)
				}
			}
			return vr.fill(ctx, tx, tables)
		})
		if err != nil {
			return nil, err
		}
	}
	vr.hook("loaded")
	if err := vr.checkTables(ctx, checks); err != nil {
		return nil, err
	}
	soft := map[string]int64{}
	for _, v := range vr.m.prog.Views {
		sel := vr.views[v.Name].Query
		switch v.Kind {
		case ir.Hard:
			vr.hook("check " + v.Name)
			if err := vr.checkHard(ctx, checks, v, sel); err != nil {
				return nil, err
			}
		case ir.Soft:
			vr.hook("check " + v.Name)
			got, err := sumQuery(ctx, checks, "select * from ("+vr.format(sel)+") as weave_v")
			if err != nil {
				return nil, fmt.Errorf("weave: verify: soft constraint %s: %w", v.Name, err)
			}
			soft[v.Name] = got
		}
	}
	vr.hook("checked")
	return soft, nil
}

// tempName is the name of the temporary copy of a table or view: within
// PostgreSQL's 63 bytes, distinct for distinct names.
func tempName(name string) string {
	t := "weave_verify_" + name
	if len(t) > 63 {
		t = fmt.Sprintf("%s_%08x", t[:54], crc32.ChecksumIEEE([]byte(name)))
	}
	return t
}

// qualifiedTemp is the SQL text naming a temporary relation: qualified by
// the connection's temporary schema, so that nothing else answers to it.
func (vr *verifier) qualifiedTemp(name string) string {
	if vr.dialect == dialectPostgres {
		return "pg_temp." + quote(name)
	}
	return "temp." + quote(name)
}

// format prints a select with its references to the tables and views
// that have temporary copies replaced by them.
func (vr *verifier) format(sel *sqlfront.Select) string {
	return sqlfront.FormatSelectRenaming(sel, func(ref *sqlfront.TableRef) string {
		return vr.temp[ref.Name]
	})
}

// setUp creates the temporary tables (empty) and views, on ex.
func (vr *verifier) setUp(ctx context.Context, ex execer) error {
	m := vr.m
	for _, t := range vr.tables {
		def := vr.defs[t.Name]
		name := tempName(t.Name)
		defs := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			defs[i] = quote(c.Name) + " " + typeText(def.Columns[i].Type)
		}
		if err := vr.exec(ctx, ex, "create temporary table "+quote(name)+" ("+strings.Join(defs, ", ")+")"); err != nil {
			return dbError("verify: creating a temporary table for "+t.Name, err)
		}
		vr.temp[t.Name] = vr.qualifiedTemp(name)
	}
	// The compiled views the checks read become temporary views over the
	// temporary tables, in schema order (a view reads views before it).
	read := map[string]bool{}
	for _, v := range m.prog.Views {
		if v.Kind == ir.Pushdown {
			continue
		}
		sqlfront.Inspect(vr.views[v.Name].Query, func(n sqlfront.Node) bool {
			if ref, ok := n.(*sqlfront.TableRef); ok {
				read[ref.Name] = true
			}
			return true
		})
	}
	for _, v := range m.prog.Views {
		if v.Kind == ir.Pushdown || !read[v.Name] {
			continue
		}
		cv := vr.views[v.Name]
		name := tempName(v.Name)
		cols := ""
		if len(cv.Columns) > 0 {
			q := make([]string, len(cv.Columns))
			for i, c := range cv.Columns {
				q[i] = quote(c)
			}
			cols = " (" + strings.Join(q, ", ") + ")"
		}
		if err := vr.exec(ctx, ex, "create temporary view "+quote(name)+cols+" as "+vr.format(cv.Query)); err != nil {
			return dbError("verify: creating a temporary copy of view "+v.Name, err)
		}
		vr.temp[v.Name] = vr.qualifiedTemp(name)
	}
	return nil
}

// analyzeRows is the size from which a temporary table is analysed once
// filled: below it, the planner's guesses cost less than an ANALYZE.
const analyzeRows = 1000

// fill loads the assignment into the temporary tables; a table missing
// from tables is copied from the stored one.
func (vr *verifier) fill(ctx context.Context, ex execer, tables map[string]*Table) error {
	for _, t := range vr.tables {
		cols := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			cols[i] = c.Name
		}
		tab := tables[t.Name]
		if tab == nil {
			q := make([]string, len(cols))
			for i, c := range cols {
				q[i] = quote(c)
			}
			list := strings.Join(q, ", ")
			if err := vr.exec(ctx, ex, "insert into "+vr.temp[t.Name]+" ("+list+") select "+list+" from "+t.SQLName()); err != nil {
				return dbError("verify: copying "+t.Name+" to a temporary table", err)
			}
			continue
		}
		rows := make([][]any, len(tab.Rows))
		for i, row := range tab.Rows {
			rows[i] = make([]any, len(t.Columns))
			for j, c := range t.Columns {
				rows[i][j] = row[c.Name]
			}
		}
		if err := insertAll(ctx, ex, vr.temp[t.Name], cols, rows); err != nil {
			return dbError("verify: writing "+t.Name+" to a temporary table", err)
		}
		if len(rows) >= analyzeRows {
			// Statistics, so that the checks over a large table are
			// planned for its size (a temporary table has none).
			if err := vr.exec(ctx, ex, "analyze "+vr.temp[t.Name]); err != nil {
				return dbError("verify: analysing the temporary copy of "+t.Name, err)
			}
		}
	}
	return nil
}

// checkTables checks the constraints of the tables with decision columns
// that the temporary copies do not carry and that involve a decision
// column: not null, primary keys and unique column sets, and foreign keys
// (which PostgreSQL and SQLite allow from a temporary table to temporary
// tables only). A violation is ErrVerify, naming the table.
func (vr *verifier) checkTables(ctx context.Context, ex execer) error {
	byName := map[string]*ir.Table{}
	for _, t := range vr.m.prog.Tables {
		byName[t.Name] = t
	}
	for _, t := range vr.tables {
		def := vr.defs[t.Name]
		rel := vr.temp[t.Name]
		variable := func(cols []string) bool {
			for _, c := range cols {
				if i := t.Column(c); i >= 0 && t.Columns[i].Variable {
					return true
				}
			}
			return false
		}
		type check struct{ what, query string }
		var checks []check
		var keys [][]string
		if len(def.PrimaryKey) > 0 {
			keys = append(keys, def.PrimaryKey)
		}
		keys = append(keys, def.Unique...)
		// The parser lists column constraints with the table's.
		for _, c := range def.Columns {
			if (c.NotNull || c.PrimaryKey || slices.Contains(def.PrimaryKey, c.Name)) && variable([]string{c.Name}) {
				checks = append(checks, check{"column " + c.Name + " is null",
					"select count(*) from " + rel + " where " + quote(c.Name) + " is null"})
			}
		}
		for _, k := range keys {
			if !variable(k) {
				continue
			}
			q := make([]string, len(k))
			nn := make([]string, len(k))
			for i, c := range k {
				q[i] = quote(c)
				nn[i] = quote(c) + " is not null"
			}
			checks = append(checks, check{"two rows share (" + strings.Join(k, ", ") + ")",
				"select count(*) from (select " + strings.Join(q, ", ") + " from " + rel + " where " + strings.Join(nn, " and ") +
					" group by " + strings.Join(q, ", ") + " having count(*) > 1) as weave_v"})
		}
		for _, fk := range def.ForeignKeys {
			if !variable(fk.Columns) {
				continue
			}
			ref := byName[fk.RefTable]
			refCols := fk.RefColumns
			if len(refCols) == 0 && ref != nil {
				for _, k := range ref.PrimaryKey {
					refCols = append(refCols, ref.Columns[k].Name)
				}
			}
			if ref == nil || len(refCols) != len(fk.Columns) {
				continue // the database rejected it when the table was created
			}
			refRel := vr.temp[fk.RefTable]
			if refRel == "" {
				refRel = ref.SQLName()
			}
			var nn, eq []string
			for i, c := range fk.Columns {
				nn = append(nn, "weave_c."+quote(c)+" is not null")
				eq = append(eq, "weave_p."+quote(refCols[i])+" = weave_c."+quote(c))
			}
			checks = append(checks, check{"(" + strings.Join(fk.Columns, ", ") + ") references no row of " + fk.RefTable,
				"select count(*) from " + rel + " as weave_c where " + strings.Join(nn, " and ") +
					" and not exists (select 1 from " + refRel + " as weave_p where " + strings.Join(eq, " and ") + ")"})
		}
		for _, c := range checks {
			var n int64
			if err := ex.QueryRowContext(ctx, c.query).Scan(&n); err != nil {
				return fmt.Errorf("weave: verify: table %s: %w\nquery: %s", t.Name, err, c.query)
			}
			if n > 0 {
				return fmt.Errorf("%w: table %s: %s (%d rows)", ErrVerify, t.Name, c.what, n)
			}
		}
	}
	return nil
}

func (vr *verifier) exec(ctx context.Context, ex execer, stmt string) error {
	if _, err := ex.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("%w\nstatement: %s", err, stmt)
	}
	return nil
}

// drop drops the temporary tables and views a verification on SQLite
// creates, views first, whether or not they exist (an interrupted
// verification may have left them on the connection).
func (vr *verifier) drop(ctx context.Context) error {
	var first error
	views := vr.m.prog.Views
	for i := len(views) - 1; i >= 0; i-- {
		if views[i].Kind == ir.Pushdown {
			continue
		}
		if _, err := vr.conn.ExecContext(ctx, "drop view if exists temp."+quote(tempName(views[i].Name))); err != nil && first == nil {
			first = err
		}
	}
	for _, t := range vr.tables {
		if _, err := vr.conn.ExecContext(ctx, "drop table if exists temp."+quote(tempName(t.Name))); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// typeText is a column type as SQL.
func typeText(t sqlfront.TypeName) string {
	if len(t.Args) == 0 {
		return t.Name
	}
	args := make([]string, len(t.Args))
	for i, a := range t.Args {
		args[i] = strconv.Itoa(a)
	}
	return t.Name + "(" + strings.Join(args, ", ") + ")"
}

func notTrue(e sqlfront.Expr) sqlfront.Expr {
	return &sqlfront.UnaryExpr{Op: "not", X: &sqlfront.FuncCall{Name: "coalesce", Args: []sqlfront.Expr{&sqlfront.ParenExpr{X: e}, &sqlfront.BoolLit{Value: false}}}}
}

// verifyHard counts the rows or groups of a hard view that violate it.
func (vr *verifier) checkHard(ctx context.Context, tx execer, v *ir.View, sel *sqlfront.Select) error {
	m := vr.m
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
		query = vr.format(&q)
	case sel.Having != nil:
		// The having condition becomes a column, so the query stays an
		// aggregate query with or without group by.
		q.Items = []*sqlfront.SelectItem{{Expr: sel.Having, Alias: "weave_ok"}}
		q.Having = nil
		query = "select count(*) from (" + vr.format(&q) + ") as weave_v where not coalesce(weave_ok, false)"
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
		if err := vr.checkAggregate(ctx, tx, v, sel, fc); err != nil {
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
func (vr *verifier) checkAggregate(ctx context.Context, tx execer, v *ir.View, sel *sqlfront.Select, fc *sqlfront.FuncCall) error {
	m := vr.m
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
	query := vr.format(&q)
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
func sumQuery(ctx context.Context, tx execer, query string) (int64, error) {
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
