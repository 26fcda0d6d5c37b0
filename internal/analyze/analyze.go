// Package analyze turns a parsed schema into Weave's IR: it resolves names,
// types every expression, marks what depends on decision columns, decides
// the role of each view (pushed down, hard, soft, intermediate), infers the
// domain of each decision column and rejects, with a position, every
// construct Weave does not support.
package analyze

import (
	"fmt"
	"slices"
	"sort"

	"github.com/weavesql/weave/internal/ir"
	"github.com/weavesql/weave/internal/sqlfront"
)

// Options configure analysis.
type Options struct {
	// ConstraintAggregates are the names of registered constraint
	// aggregates (all_different and user-defined ones), lower case.
	ConstraintAggregates map[string]bool
}

// Analyze lowers a parsed schema to IR. It reports every error it finds, as
// a sqlfront.ErrorList sorted by position.
func Analyze(s *sqlfront.Schema, opts Options) (*ir.Program, error) {
	a := &analyzer{
		opts: opts, prog: &ir.Program{},
		tables: map[string]*ir.Table{}, views: map[string]*ir.View{}, broken: map[string]bool{},
		colPos: map[*ir.Column]sqlfront.Pos{}, varPos: map[*ir.Column]sqlfront.Pos{}, fkPos: map[*ir.Column]sqlfront.Pos{},
		decidedOut: map[*ir.Query][]bool{}, decidedCols: map[*ir.Source][]bool{},
	}
	for _, st := range s.Stmts {
		switch st := st.(type) {
		case *sqlfront.CreateTable:
			a.table(st)
		case *sqlfront.CreateIndex:
			a.index(st)
		case *sqlfront.CreateView:
			a.view(st)
		}
	}
	a.foreignKeys()
	if len(a.errs) == 0 {
		a.inferDomains()
	}
	a.errs.Sort()
	if len(a.errs) > 0 {
		return nil, a.errs
	}
	return a.prog, nil
}

type analyzer struct {
	opts   Options
	prog   *ir.Program
	tables map[string]*ir.Table
	views  map[string]*ir.View
	errs   sqlfront.ErrorList
	stmt   string // name of the table or view being analysed
	// broken names the tables and views whose definition had errors: a
	// reference to one reports nothing more (the error is already there).
	broken map[string]bool
	// Source positions of column definitions, of the @variable_columns
	// items and of foreign keys, for errors found after the statement.
	colPos, varPos, fkPos map[*ir.Column]sqlfront.Pos
	// decidedOut marks the outputs of each query whose values the solver
	// decides (see decided); decidedCols holds them for a source that
	// reads a view or derived table.
	decidedOut  map[*ir.Query][]bool
	decidedCols map[*ir.Source][]bool
	// outerJoin is the first left join of the view being analysed, nil if
	// none: the database evaluates one, the grounder does not, so a view
	// with one must be pushed down.
	outerJoin *sqlfront.Join
	// stringMinMax is the first min or max over strings of the view being
	// analysed, nil if none: the grounder compares integers only, so a
	// view with one must be pushed down too.
	stringMinMax *sqlfront.FuncCall
}

func (a *analyzer) errorf(p sqlfront.Pos, format string, args ...any) {
	a.errs = append(a.errs, &sqlfront.Error{Pos: p, Stmt: a.stmt, Msg: fmt.Sprintf(format, args...)})
}

// article prefixes a type's name with "a" or "an", for messages.
func article(t ir.Type) string {
	if t == ir.Int {
		return "an integer"
	}
	return "a " + t.String()
}

func pos(p sqlfront.Pos) ir.Pos { return ir.Pos{Line: p.Line, Col: p.Col} }

func columnType(t sqlfront.TypeName) (ir.Type, bool) {
	switch t.Name {
	case "int", "integer", "bigint", "smallint":
		return ir.Int, true
	case "boolean", "bool":
		return ir.Bool, true
	case "varchar", "char", "text":
		return ir.String, true
	}
	return ir.Invalid, false
}

func (a *analyzer) nameTaken(name string, p sqlfront.Pos) bool {
	if a.tables[name] != nil || a.views[name] != nil || a.broken[name] {
		a.errorf(p, "%q is already defined", name)
		return true
	}
	return false
}

func (a *analyzer) table(st *sqlfront.CreateTable) {
	a.stmt = st.Name
	if a.nameTaken(st.Name, st.NamePos) {
		return
	}
	t := &ir.Table{Name: st.Name, Schema: st.Schema, Pos: pos(st.Pos), Text: st.Text}
	for _, cd := range st.Columns {
		typ, ok := columnType(cd.Type)
		if !ok {
			a.errorf(cd.Pos, "column %s: unsupported type %s (use integer, bigint, boolean, varchar or text)", cd.Name, cd.Type.Name)
		}
		if t.Column(cd.Name) >= 0 {
			a.errorf(cd.Pos, "duplicate column %s", cd.Name)
			continue
		}
		c := &ir.Column{Name: cd.Name, Type: typ, NotNull: cd.NotNull || cd.PrimaryKey}
		a.colPos[c] = cd.Pos
		if cd.PrimaryKey {
			t.PrimaryKey = append(t.PrimaryKey, len(t.Columns))
		}
		if fk := cd.References; fk != nil {
			ref := &ir.ColumnRefTarget{Table: fk.RefTable}
			if len(fk.RefColumns) == 1 {
				ref.Column = fk.RefColumns[0]
			}
			c.References = ref
			a.fkPos[c] = fk.Pos
		}
		t.Columns = append(t.Columns, c)
	}
	for _, name := range st.PrimaryKey {
		i := t.Column(name)
		if i < 0 {
			a.errorf(st.Pos, "primary key names unknown column %s", name)
			continue
		}
		if slices.Contains(t.PrimaryKey, i) {
			continue // declared on the column and listed again by the parser
		}
		t.PrimaryKey = append(t.PrimaryKey, i)
		t.Columns[i].NotNull = true
	}
	for _, fk := range st.ForeignKeys {
		if len(fk.Columns) != 1 {
			continue // multi-column keys constrain rows, not single domains
		}
		i := t.Column(fk.Columns[0])
		if i < 0 {
			a.errorf(fk.Pos, "foreign key names unknown column %s", fk.Columns[0])
			continue
		}
		ref := &ir.ColumnRefTarget{Table: fk.RefTable}
		if len(fk.RefColumns) == 1 {
			ref.Column = fk.RefColumns[0]
		}
		t.Columns[i].References = ref
		a.fkPos[t.Columns[i]] = fk.Pos
	}
	for _, an := range st.Annotations {
		switch an.Name {
		case "variable_columns":
			if len(an.Items) == 0 {
				a.errorf(an.Pos, "@variable_columns needs a column list, e.g. -- @variable_columns (node_name)")
			}
			for _, it := range an.Items {
				i := t.Column(it.Name)
				if i < 0 {
					a.errorf(it.Pos, "@variable_columns names unknown column %s of table %s", it.Name, t.Name)
					continue
				}
				c := t.Columns[i]
				c.Variable = true
				if _, ok := a.varPos[c]; !ok {
					a.varPos[c] = it.Pos
				}
				for _, o := range it.Options {
					if o == "nullable" {
						c.Nullable = true
					} else {
						a.errorf(it.Pos, "unknown option %q for variable column %s (the only option is nullable)", o, it.Name)
					}
				}
				if c.Nullable && c.NotNull {
					a.errorf(it.Pos, "variable column %s is declared not null and nullable", it.Name)
				}
				// A single-column key on a decision column means the solver
				// must pick distinct values: an all_different over the
				// column. A key spanning several columns must be input.
				if slices.Contains(t.PrimaryKey, i) {
					if len(t.PrimaryKey) > 1 {
						a.errorf(it.Pos, "variable column %s is part of a primary key of several columns; such keys must be input columns", it.Name)
					} else {
						c.Unique = true
					}
				}
				for _, u := range st.Unique {
					if len(u) == 1 && u[0] == c.Name {
						c.Unique = true
					} else if len(u) > 1 && slices.Contains(u, c.Name) {
						a.errorf(it.Pos, "variable column %s is part of a unique key of several columns; only single-column keys on decision columns are supported", it.Name)
					}
				}
			}
		default:
			a.errorf(an.Pos, "@%s does not apply to a table (only @variable_columns does)", an.Name)
		}
	}
	a.tables[t.Name] = t
	a.prog.Tables = append(a.prog.Tables, t)
}

func (a *analyzer) index(st *sqlfront.CreateIndex) {
	a.stmt = st.Name
	t := a.tables[st.Table]
	if t == nil {
		a.errorf(st.Pos, "index %s is on unknown table %s", st.Name, st.Table)
		return
	}
	a.sameSchema(st.Pos, st.TableSchema, t.Schema, t.Name)
	for _, c := range st.Columns {
		if t.Column(c) < 0 {
			a.errorf(st.Pos, "index %s names unknown column %s of table %s", st.Name, c, t.Name)
			return
		}
	}
	t.Indexes = append(t.Indexes, st.Text)
}

// sameSchema reports, at pos, a reference qualified by schema to a table
// or view the policy declares in another schema. Names are the policy's
// own: one name is one table or view, whichever schema holds it, and a
// reference may leave the schema out.
func (a *analyzer) sameSchema(pos sqlfront.Pos, schema, declared, name string) {
	if schema != "" && declared != "" && schema != declared {
		a.errorf(pos, "%s.%s: the policy declares %s in schema %s", schema, name, name, declared)
	}
}

// onlyPushedDown reports, at pos, that what (left join, union, order by,
// limit) is supported only in views the database evaluates, saying why v
// is not one and what to do instead.
func (a *analyzer) onlyPushedDown(pos sqlfront.Pos, what string, v *ir.View, instead string) {
	why := "reads decision columns"
	if v.Kind != ir.Intermediate {
		why = "is a " + v.Kind.String()
	}
	a.errorf(pos, "%s is supported only in views over input columns, which the database evaluates; view %s %s: %s", what, v.Name, why, instead)
}

// unionArms analyses the arms after a view's first select ("union [all]
// select ..."): each must yield as many columns as the first, of the same
// types (NULL goes with any), and a view is variable if any arm is. The
// view's columns are the first arm's, as in SQL. It reports false after
// an error.
func (a *analyzer) unionArms(st *sqlfront.CreateView, first *ir.Query, v *ir.View) bool {
	for _, u := range st.Query.Union {
		nerr := len(a.errs)
		q := a.query(u.Select, nil, v.Kind)
		if q == nil || len(a.errs) > nerr {
			return false
		}
		if len(q.Select) != len(first.Select) {
			a.errorf(u.Select.Pos, "this select of the union yields %d columns, the first yields %d", len(q.Select), len(first.Select))
			return false
		}
		for i, o := range q.Select {
			t, ft := o.Expr.Type(), first.Select[i].Expr.Type()
			if t != ft && t != ir.Null && ft != ir.Null {
				a.errorf(u.Select.Pos, "column %d (%s) is %s in this select of the union, %s in the first", i+1, first.Select[i].Name, t, ft)
				return false
			}
		}
		v.Variable = v.Variable || queryVar(q)
	}
	return true
}

// orderLimit checks the "order by ... limit n" that may end a view: only a
// view over input columns, which the database evaluates, may have them (the
// model reads its rows; a view it compiles has no order and no first
// rows). A term naming one of the view's columns is that column; another is
// an expression over the view's from clause, as its select list's (not with
// union, where SQL orders by the result's columns only). It reports false
// after an error.
func (a *analyzer) orderLimit(st *sqlfront.CreateView, q *ir.Query, v *ir.View) bool {
	vq := st.Query
	if len(vq.OrderBy) == 0 && vq.Limit == nil {
		return true
	}
	if v.Kind != ir.Pushdown {
		var pos sqlfront.Pos
		what := "order by"
		if len(vq.OrderBy) > 0 {
			pos = vq.OrderBy[0].Pos
		} else {
			pos, what = vq.Limit.Pos, "limit"
		}
		a.onlyPushedDown(pos, what, v, "put it in a view of input columns that it reads")
		return false
	}
	for _, o := range vq.OrderBy {
		if c, ok := o.Expr.(*sqlfront.ColumnRef); ok && c.Table == "" && slices.ContainsFunc(q.Select, func(out *ir.Output) bool { return out.Name == c.Column }) {
			continue
		}
		if len(vq.Union) > 0 {
			a.errorf(o.Pos, "with union, order by names columns of the view (%s)", sqlfront.Format(o.Expr))
			return false
		}
		term := *vq
		term.Items = []*sqlfront.SelectItem{{Pos: o.Pos, Expr: o.Expr}}
		term.Distinct, term.OrderBy, term.Limit = false, nil, nil
		nerr := len(a.errs)
		if a.query(&term, nil, ir.Intermediate) == nil || len(a.errs) > nerr {
			return false
		}
	}
	return true
}

func (a *analyzer) view(st *sqlfront.CreateView) {
	a.stmt = st.Name
	if a.nameTaken(st.Name, st.NamePos) {
		return
	}
	a.outerJoin, a.stringMinMax = nil, nil
	kind := ir.Intermediate
	annotated := false
	for _, an := range st.Annotations {
		switch an.Name {
		case "hard_constraint", "soft_constraint":
			if annotated {
				a.errorf(an.Pos, "a view is either a hard or a soft constraint, not both")
			}
			annotated = true
			kind = ir.Hard
			if an.Name == "soft_constraint" {
				kind = ir.Soft
			}
			if len(an.Items) > 0 {
				a.errorf(an.Pos, "@%s takes no arguments", an.Name)
			}
		default:
			a.errorf(an.Pos, "@%s does not apply to a view (use @hard_constraint or @soft_constraint)", an.Name)
		}
	}
	nerr := len(a.errs)
	var q *ir.Query
	if st.Query != nil {
		q = a.query(st.Query, nil, kind)
	}
	if q == nil || len(a.errs) > nerr {
		a.broken[st.Name] = true
		return
	}
	if len(st.Columns) > 0 {
		if len(st.Columns) != len(q.Select) {
			a.errorf(st.NamePos, "view %s names %d columns but its query yields %d", st.Name, len(st.Columns), len(q.Select))
			a.broken[st.Name] = true
			return
		}
		for i, n := range st.Columns {
			q.Select[i].Name = n
		}
	}
	seen := map[string]bool{}
	for _, o := range q.Select {
		if seen[o.Name] && kind != ir.Hard {
			a.errorf(st.Query.Pos, "view %s yields two columns named %s; give one an alias", st.Name, o.Name)
		}
		seen[o.Name] = true
	}
	v := &ir.View{Name: st.Name, Schema: st.Schema, Pos: pos(st.Pos), Kind: kind, Query: q, Text: st.Text, Variable: queryVar(q)}
	if !a.unionArms(st, q, v) {
		a.broken[st.Name] = true
		return
	}
	if kind == ir.Intermediate && !v.Variable {
		v.Kind = ir.Pushdown
	}
	if u := st.Query.Union; len(u) > 0 && v.Kind != ir.Pushdown {
		a.onlyPushedDown(u[0].Pos, "union", v, "put the union in a view of input columns that it reads")
		a.broken[st.Name] = true
		return
	}
	if !a.orderLimit(st, q, v) {
		a.broken[st.Name] = true
		return
	}
	if j := a.outerJoin; j != nil && v.Kind != ir.Pushdown {
		a.onlyPushedDown(j.Pos, "left join", v, "write it with inner joins, or put the left join in a view of input columns that it reads")
		a.broken[st.Name] = true
		return
	}
	if f := a.stringMinMax; f != nil && v.Kind != ir.Pushdown {
		a.onlyPushedDown(f.Position(), f.Name+" over strings", v, "compare integers, or put the "+f.Name+" in a view of input columns that it reads")
		a.broken[st.Name] = true
		return
	}
	switch kind {
	case ir.Intermediate:
	case ir.Soft:
		if len(q.Select) != 1 {
			a.errorf(st.Query.Pos, "a soft constraint yields one integer column; this view yields %d columns", len(q.Select))
		} else if t := q.Select[0].Expr.Type(); t != ir.Int && t != ir.Bool && t != ir.Null {
			a.errorf(st.Query.Pos, "a soft constraint yields an integer or boolean; this view yields a %s", t)
		}
	case ir.Hard:
		if q.Check == nil && len(q.Constraints) == 0 {
			if q.Aggregate {
				a.errorf(st.Query.Pos, "a hard constraint with group by needs a having clause or a constraint aggregate such as all_different(...) in its select list")
			} else {
				a.errorf(st.Query.Pos, "a hard constraint needs a where clause: every row of its from clause must satisfy it")
			}
		}
	}
	a.views[v.Name] = v
	a.prog.Views = append(a.prog.Views, v)
}

// queryVar reports whether the result of q depends on decision columns: a
// column it reads, a condition, or the rows of a view or derived table it
// reads (a view over an intermediate view is itself intermediate even when
// it selects input columns only, because which rows it has is decided).
func queryVar(q *ir.Query) bool {
	if q == nil {
		return false
	}
	for _, s := range q.From {
		// A table's decision columns matter only where an expression
		// reads them (select * reads them all); a compiled view's rows
		// may exist only under a decision.
		if s.Kind == ir.FromQuery && queryVar(s.Query) {
			return true
		}
	}
	var es []ir.Expr
	es = append(es, q.Filters...)
	es = append(es, q.GroupBy...)
	es = append(es, q.Having...)
	es = append(es, q.Check)
	for _, c := range q.Constraints {
		es = append(es, c)
	}
	for _, o := range q.Select {
		es = append(es, o.Expr)
	}
	for _, e := range es {
		if exprVar(e) {
			return true
		}
	}
	return false
}

// exprVar is Expr.Var, looking through subqueries with queryVar.
func exprVar(e ir.Expr) bool {
	found := false
	ir.Inspect(e, func(x ir.Expr) bool {
		if found {
			return false
		}
		// Subqueries are left to queryVar, which also looks through the
		// views they read; descending again would be exponential in the
		// nesting depth.
		switch x := x.(type) {
		case *ir.ColRef:
			found = x.IsVar
		case *ir.In:
			for _, e := range append([]ir.Expr{x.X}, x.List...) {
				found = found || exprVar(e)
			}
			found = found || x.Sub != nil && queryVar(x.Sub)
			return false
		case *ir.Exists:
			found = queryVar(x.Sub)
			return false
		case *ir.Scalar:
			found = queryVar(x.Sub)
			return false
		}
		return !found
	})
	return found
}

// sortedKeys returns the keys of m in order.
func sortedKeys[T any](m map[string]T) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
