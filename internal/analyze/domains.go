package analyze

import (
	"fmt"

	"github.com/weavesql/weave/internal/ir"
)

// inferDomains finds, for every decision column, the sets of values it may
// take. A pod must never be "placed" on a node name that matches no node: it
// would escape every join-based constraint. Sources, intersected:
//
//   - a foreign key on the column: the referenced column's values;
//   - a hard constraint whose conjunct is "col in (uncorrelated subquery over
//     input columns)": the subquery's values;
//   - a hard constraint joining the column by equality with an input column
//     of a table or pushed-down view: that column's values.
//
// Boolean columns need no source. Any other column without one is an error
// that says how to fix it.
func (a *analyzer) inferDomains() {
	for _, v := range a.prog.Views {
		if v.Kind != ir.Hard {
			continue
		}
		q := v.Query
		// Every conjunct of the check holds for every row (or group):
		// memberships and equalities there pin a column. Filters only
		// choose the rows that are checked, but an equality join with an
		// input column is what the paper's constraint_node_predicates
		// relies on to keep a pod off names that match no node.
		checks := conjuncts(q.Check)
		for _, e := range checks {
			a.domainFrom(v, q, e, true)
		}
		v.ByDomain = !q.Aggregate && len(q.From) == 1 && q.From[0].Kind == ir.FromTable && len(q.Filters) == 0 &&
			len(checks) == 1 && a.membershipDomain(v, q, checks[0])
		// Only a view without grouping: in a grouped hard view the join
		// merely chooses the rows that are counted (joining a helper view
		// there must not restrict the column to that view's values).
		if !q.Aggregate {
			for _, e := range q.Filters {
				a.domainFrom(v, q, e, false)
			}
		}
	}
	for _, t := range a.prog.Tables {
		for _, c := range t.Columns {
			if c.Variable && len(c.Domain) == 0 && c.Type != ir.Bool {
				a.stmt = t.Name
				a.errorf(a.varPos[c],
					"cannot infer the values variable column %s.%s may take: declare a foreign key (%s %s references other_table(col)), "+
						"or constrain it in a @hard_constraint view with \"%s in (select ...)\" or by joining it with an input column",
					t.Name, c.Name, c.Name, sqlType(c.Type), c.Name)
			}
		}
	}
}

// sqlType names t in SQL, for messages that suggest a declaration.
func sqlType(t ir.Type) string {
	switch t {
	case ir.Int:
		return "integer"
	case ir.Bool:
		return "boolean"
	}
	return "varchar"
}

// foreignKeys checks every single-column foreign key and records, for a
// decision column, the referenced column's values as a domain source.
func (a *analyzer) foreignKeys() {
	for _, t := range a.prog.Tables {
		for _, c := range t.Columns {
			if c.References == nil {
				continue
			}
			a.stmt = t.Name
			rt, ri := a.foreignKeyTarget(t, c)
			if rt == nil || !c.Variable || rt.Columns[ri].Variable {
				continue
			}
			c.Domain = append(c.Domain, &ir.DomainSource{
				Reason: fmt.Sprintf("foreign key references %s(%s)", rt.Name, rt.Columns[ri].Name),
				Pos:    pos(a.fkPos[c]),
				Query:  columnQuery(&ir.Source{Alias: rt.Name, Kind: ir.FromTable, Table: rt, Columns: tableColumns(rt)}, ri),
			})
		}
	}
}

// foreignKeyTarget resolves the single-column foreign key of column c of
// table t, reporting an unknown table or column or a type mismatch.
func (a *analyzer) foreignKeyTarget(t *ir.Table, c *ir.Column) (*ir.Table, int) {
	p := a.fkPos[c]
	rt := a.tables[c.References.Table]
	if rt == nil {
		if !a.broken[c.References.Table] {
			a.errorf(p, "column %s references unknown table %s", c.Name, c.References.Table)
		}
		return nil, -1
	}
	col := c.References.Column
	if col == "" {
		if len(rt.PrimaryKey) != 1 {
			a.errorf(p, "column %s references table %s, which has no single-column primary key; name the column: references %s(col)", c.Name, rt.Name, rt.Name)
			return nil, -1
		}
		col = rt.Columns[rt.PrimaryKey[0]].Name
	}
	ri := rt.Column(col)
	if ri < 0 {
		a.errorf(p, "column %s references unknown column %s(%s)", c.Name, rt.Name, col)
		return nil, -1
	}
	if rc := rt.Columns[ri]; rc.Type != c.Type && rc.Type != ir.Invalid && c.Type != ir.Invalid {
		a.errorf(p, "column %s is %s but references %s(%s), %s", c.Name, article(c.Type), rt.Name, col, article(rc.Type))
		return nil, -1
	}
	return rt, ri
}

// domainFrom records a domain source when conjunct e of hard view v is a
// membership or an equality join that pins a decision column.
//
// check says e is a conjunct of the view's check; a membership only pins
// the column there (in a filter it only selects the rows to check).
func (a *analyzer) domainFrom(v *ir.View, q *ir.Query, e ir.Expr, check bool) {
	target := func(x ir.Expr) *ir.Column {
		r, ok := x.(*ir.ColRef)
		if !ok || r.Up != 0 || !r.IsVar {
			return nil
		}
		s := q.From[r.Source]
		if s.Kind != ir.FromTable {
			return nil
		}
		return s.Table.Columns[r.Col]
	}
	switch e := e.(type) {
	case *ir.In:
		c := target(e.X)
		if c == nil || e.Not || !check {
			return
		}
		if e.Sub != nil && !e.Sub.Correlated && !queryVar(e.Sub) {
			c.Domain = append(c.Domain, &ir.DomainSource{Reason: "in (subquery)", View: v.Name, Pos: e.P, Query: e.Sub})
		}
		if e.Sub == nil {
			var vals []any
			for _, x := range e.List {
				k, ok := x.(*ir.Const)
				if !ok {
					return
				}
				vals = append(vals, k.Value)
			}
			c.Domain = append(c.Domain, &ir.DomainSource{Reason: "in (list)", View: v.Name, Pos: e.P, Values: vals})
		}
	case *ir.Binary:
		if e.Op == "or" {
			// "c is null or c in (...)" pins a nullable column to the
			// values listed or NULL, which its domain holds anyway.
			if in := nullOrIn(e); in != nil {
				if c := target(in.X); c != nil && c.Nullable {
					a.domainFrom(v, q, in, check)
				}
			}
			return
		}
		if e.Op != "=" {
			return
		}
		for _, pair := range [][2]ir.Expr{{e.L, e.R}, {e.R, e.L}} {
			c := target(pair[0])
			r, ok := pair[1].(*ir.ColRef)
			if c == nil || !ok || r.Up != 0 || r.IsVar {
				continue
			}
			s := q.From[r.Source]
			if s.Kind != ir.FromTable && s.Kind != ir.FromInput {
				continue
			}
			c.Domain = append(c.Domain, &ir.DomainSource{
				Reason: fmt.Sprintf("joined with %s.%s", s.Name(), s.Columns[r.Col].Name),
				View:   v.Name, Pos: e.P,
				Query: columnQuery(&ir.Source{Alias: s.Alias, Kind: s.Kind, Table: s.Table, View: s.View, Columns: s.Columns}, r.Col),
			})
		}
	}
}

// membershipDomain reports whether check is exactly a membership that
// domainFrom made a domain source of: "x in (...)", or "x is null or x in
// (...)" on a nullable x. The domain then holds every value the check
// allows and no other (a nullable column's domain holds NULL).
func (a *analyzer) membershipDomain(v *ir.View, q *ir.Query, check ir.Expr) bool {
	in, _ := check.(*ir.In)
	if b, isOr := check.(*ir.Binary); isOr && b.Op == "or" {
		in = nullOrIn(b)
	}
	if in == nil {
		return false
	}
	r, isCol := in.X.(*ir.ColRef)
	if !isCol || r.Up != 0 || !r.IsVar {
		return false
	}
	for _, d := range q.From[r.Source].Table.Columns[r.Col].Domain {
		if d.View == v.Name && d.Pos == in.P {
			return true
		}
	}
	return false
}

// nullOrIn returns the membership of "c is null or c in (...)" (either
// order), nil for any other disjunction.
func nullOrIn(b *ir.Binary) *ir.In {
	for _, pair := range [][2]ir.Expr{{b.L, b.R}, {b.R, b.L}} {
		n, isNull := pair[0].(*ir.IsNull)
		in, isIn := pair[1].(*ir.In)
		if isNull && isIn && !n.Not && sameColumn(n.X, in.X) {
			return in
		}
	}
	return nil
}

// sameColumn reports whether two expressions are the same column of the
// same source.
func sameColumn(a, b ir.Expr) bool {
	x, ok1 := a.(*ir.ColRef)
	y, ok2 := b.(*ir.ColRef)
	return ok1 && ok2 && x.Up == y.Up && x.Source == y.Source && x.Col == y.Col
}

func tableColumns(t *ir.Table) []ir.SourceColumn {
	var cols []ir.SourceColumn
	for _, c := range t.Columns {
		cols = append(cols, ir.SourceColumn{Name: c.Name, Type: c.Type, Var: c.Variable})
	}
	return cols
}

// columnQuery is "select s.col from s".
func columnQuery(s *ir.Source, col int) *ir.Query {
	c := s.Columns[col]
	return &ir.Query{
		From:   []*ir.Source{s},
		Select: []*ir.Output{{Name: c.Name, Expr: &ir.ColRef{Source: 0, Col: col, Name: s.Alias + "." + c.Name, T: c.Type}}},
	}
}
