package analyze

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/weavesql/weave/internal/ir"
	"github.com/weavesql/weave/internal/sqlfront"
)

// testOptions registers all_different, as weave.Compile does.
var testOptions = Options{ConstraintAggregates: map[string]bool{"all_different": true}}

// analyzeSQL parses and analyses src. A parse error fails the test: these
// tests are about the analyser.
func analyzeSQL(t testing.TB, src string) (*ir.Program, error) {
	t.Helper()
	s, err := sqlfront.Parse(src)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	p, err := Analyze(s, testOptions)
	if err == nil {
		if verr := checkProgram(p); verr != nil {
			t.Fatalf("invariant: %v\n%s", verr, p)
		}
	}
	return p, err
}

// errorText renders an analysis error one "line:col: stmt: msg" per line,
// checking it is a sorted sqlfront.ErrorList with valid positions.
func errorText(t testing.TB, err error) string {
	t.Helper()
	var list sqlfront.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		t.Fatalf("error is not a non-empty sqlfront.ErrorList: %T %v", err, err)
	}
	var lines []string
	for i, e := range list {
		if !e.Pos.IsValid() || e.Pos.Col < 1 {
			t.Errorf("error without a position: %v", e)
		}
		if i > 0 && list[i-1].Pos.Offset > e.Pos.Offset {
			t.Errorf("errors not sorted by position: %v before %v", list[i-1], e)
		}
		lines = append(lines, e.Error())
	}
	return strings.Join(lines, "\n")
}

// checkProgram verifies the invariants every analysed program satisfies:
//
//   - every ColRef names, Up levels out, a query in scope, and a source and
//     column in range, with that column's type and decision marking;
//   - every expression has a type other than Invalid;
//   - a query is Correlated exactly when an expression in it (or in a
//     subquery of it) reads an enclosing query;
//   - views read only tables and earlier views, never constraint views;
//   - a view's kind and Variable flag agree with what it reads;
//   - every decision column other than a Boolean has a domain, and domain
//     queries are uncorrelated and read input columns only.
func checkProgram(p *ir.Program) error {
	c := &checker{tables: map[*ir.Table]bool{}, views: map[*ir.View]bool{}}
	for _, t := range p.Tables {
		c.tables[t] = true
	}
	for _, v := range p.Views {
		c.where = "view " + v.Name
		c.query(v.Query, nil)
		if v.Variable != queryVar(v.Query) {
			c.errf("view %s: Variable = %v but its query says %v", v.Name, v.Variable, queryVar(v.Query))
		}
		if v.Kind == ir.Pushdown && v.Variable || v.Kind == ir.Intermediate && !v.Variable {
			c.errf("view %s: kind %s but Variable = %v", v.Name, v.Kind, v.Variable)
		}
		if v.Query.Correlated {
			c.errf("view %s: a view's own query cannot be correlated", v.Name)
		}
		c.views[v] = true
	}
	for _, t := range p.Tables {
		for _, col := range t.Columns {
			if col.Type == ir.Invalid {
				c.errf("table %s: column %s has no type", t.Name, col.Name)
			}
			if !col.Variable {
				if len(col.Domain) > 0 || col.Nullable {
					c.errf("table %s: input column %s has a domain or is nullable", t.Name, col.Name)
				}
				continue
			}
			if len(col.Domain) == 0 && col.Type != ir.Bool {
				c.errf("table %s: decision column %s has no domain", t.Name, col.Name)
			}
			for _, d := range col.Domain {
				if (d.Query == nil) == (d.Values == nil) {
					c.errf("table %s: domain of %s (%s) needs exactly one of a query and values", t.Name, col.Name, d.Reason)
				}
				if d.Query != nil {
					c.where = fmt.Sprintf("domain of %s.%s", t.Name, col.Name)
					c.synthetic = true
					c.query(d.Query, nil)
					c.synthetic = false
					if d.Query.Correlated || queryVar(d.Query) || len(d.Query.Select) != 1 {
						c.errf("%s: the query must be uncorrelated, over input columns, with one column", c.where)
					} else if typ := d.Query.Select[0].Expr.Type(); typ != col.Type && typ != ir.Null {
						c.errf("%s: the query yields %s for a %s column", c.where, typ, col.Type)
					}
				}
			}
		}
	}
	return errors.Join(c.errs...)
}

type checker struct {
	tables map[*ir.Table]bool
	views  map[*ir.View]bool // views defined so far
	where  string
	// synthetic: checking a query Weave built (a foreign-key domain),
	// whose expressions have no source position.
	synthetic bool
	errs      []error
}

func (c *checker) errf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// query checks q, whose enclosing queries are outer (innermost last). It
// returns the largest number of levels any reference in q reaches out of q
// (0 when q reads only itself).
func (c *checker) query(q *ir.Query, outer []*ir.Query) int {
	if q == nil {
		c.errf("%s: nil query", c.where)
		return 0
	}
	for _, s := range q.From {
		switch s.Kind {
		case ir.FromTable:
			if !c.tables[s.Table] {
				c.errf("%s: reads table %v, not in the program", c.where, s.Name())
			} else if len(s.Columns) != len(s.Table.Columns) {
				c.errf("%s: source %s has %d columns, its table %d", c.where, s.Alias, len(s.Columns), len(s.Table.Columns))
			}
		case ir.FromInput:
			if s.View == nil || !c.views[s.View] || s.View.Kind != ir.Pushdown {
				c.errf("%s: input source %s is not an earlier pushed-down view", c.where, s.Alias)
			}
		case ir.FromQuery:
			if s.View != nil {
				if !c.views[s.View] || s.View.Kind != ir.Intermediate || s.Query != s.View.Query {
					c.errf("%s: source %s is not an earlier intermediate view", c.where, s.Alias)
				}
				continue // checked as a view of its own
			}
			// A derived table cannot see the enclosing queries.
			if c.query(s.Query, nil) > 0 {
				c.errf("%s: derived table %s is correlated", c.where, s.Alias)
			}
			if len(s.Columns) != len(s.Query.Select) {
				c.errf("%s: derived table %s has %d columns, its query %d", c.where, s.Alias, len(s.Columns), len(s.Query.Select))
			}
		}
	}
	scopes := append(append([]*ir.Query(nil), outer...), q)
	reach := 0
	var es []ir.Expr
	es = append(es, q.Filters...)
	es = append(es, q.GroupBy...)
	es = append(es, q.Having...)
	if q.Check != nil {
		es = append(es, q.Check)
	}
	for _, a := range q.Constraints {
		es = append(es, a)
		if !a.Constraint || a.Type() != ir.Bool {
			c.errf("%s: %s in Constraints is not a constraint aggregate", c.where, ir.FormatExpr(a))
		}
	}
	for _, o := range q.Select {
		if o.Name == "" {
			c.errf("%s: unnamed output", c.where)
		}
		es = append(es, o.Expr)
	}
	for _, e := range es {
		if r := c.expr(e, scopes); r > reach {
			reach = r
		}
	}
	if q.Correlated != (reach > 0) {
		c.errf("%s: query %s has Correlated = %v but reaches %d levels out", c.where, ir.FormatQuery(q), q.Correlated, reach)
	}
	return reach
}

// expr checks e, evaluated in the last of scopes; it returns how many
// levels out of that query e reaches.
func (c *checker) expr(e ir.Expr, scopes []*ir.Query) int {
	if e == nil {
		c.errf("%s: nil expression", c.where)
		return 0
	}
	if e.Type() == ir.Invalid {
		c.errf("%s: %s has no type", c.where, ir.FormatExpr(e))
	}
	if p := e.Position(); (p.Line < 1 || p.Col < 1) && !c.synthetic {
		c.errf("%s: %s has no position", c.where, ir.FormatExpr(e))
	}
	reach := 0
	sub := func(q *ir.Query) {
		if r := c.query(q, scopes) - 1; r > reach {
			reach = r
		}
	}
	kids := func(xs ...ir.Expr) {
		for _, x := range xs {
			if x == nil {
				continue
			}
			if r := c.expr(x, scopes); r > reach {
				reach = r
			}
		}
	}
	switch e := e.(type) {
	case *ir.ColRef:
		lvl := len(scopes) - 1 - e.Up
		if e.Up < 0 || lvl < 0 {
			c.errf("%s: %s reaches %d levels out of %d", c.where, e.Name, e.Up, len(scopes)-1)
			return 0
		}
		q := scopes[lvl]
		if e.Source < 0 || e.Source >= len(q.From) {
			c.errf("%s: %s: source %d out of range (%d sources)", c.where, e.Name, e.Source, len(q.From))
			return e.Up
		}
		s := q.From[e.Source]
		if e.Col < 0 || e.Col >= len(s.Columns) {
			c.errf("%s: %s: column %d out of range (%d columns)", c.where, e.Name, e.Col, len(s.Columns))
			return e.Up
		}
		sc := s.Columns[e.Col]
		if want := s.Alias + "." + sc.Name; e.Name != want || e.T != sc.Type || e.IsVar != sc.Var {
			c.errf("%s: %s %s var=%v resolves to %s %s var=%v", c.where, e.Name, e.T, e.IsVar, want, sc.Type, sc.Var)
		}
		return e.Up
	case *ir.Const:
	case *ir.Binary:
		kids(e.L, e.R)
	case *ir.Unary:
		kids(e.X)
	case *ir.Agg:
		if e.Arg == nil && e.Func != "count" {
			c.errf("%s: %s without an argument", c.where, e.Func)
		}
		kids(e.Arg)
	case *ir.In:
		kids(e.X)
		kids(e.List...)
		if (e.Sub == nil) == (e.List == nil) {
			c.errf("%s: in needs exactly one of a list and a subquery", c.where)
		}
		if e.Sub != nil {
			sub(e.Sub)
		}
	case *ir.Exists:
		sub(e.Sub)
	case *ir.Scalar:
		sub(e.Sub)
	case *ir.Case:
		for _, w := range e.Whens {
			kids(w.Cond, w.Result)
		}
		kids(e.Else)
	case *ir.IsNull:
		kids(e.X)
	case *ir.Coalesce:
		kids(e.Args...)
	default:
		c.errf("%s: unknown expression %T", c.where, e)
	}
	return reach
}

// paperSQL is testdata/paper.sql at the module root.
func paperSQL(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("../../testdata/paper.sql")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
