package analyze

import (
	"fmt"

	"github.com/weavesql/weave/internal/ir"
	"github.com/weavesql/weave/internal/sqlfront"
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
	for _, t := range a.prog.Tables {
		for ci, c := range t.Columns {
			if !c.Variable || c.References == nil {
				continue
			}
			a.stmt = t.Name
			rt := a.tables[c.References.Table]
			if rt == nil {
				a.errorf(sqlfront.Pos{Line: t.Pos.Line, Col: t.Pos.Col}, "column %s references unknown table %s", c.Name, c.References.Table)
				continue
			}
			col := c.References.Column
			if col == "" && len(rt.PrimaryKey) == 1 {
				col = rt.Columns[rt.PrimaryKey[0]].Name
			}
			ri := rt.Column(col)
			if ri < 0 {
				a.errorf(sqlfront.Pos{Line: t.Pos.Line, Col: t.Pos.Col}, "column %s references unknown column %s(%s)", c.Name, rt.Name, col)
				continue
			}
			if rt.Columns[ri].Variable {
				continue
			}
			c.Domain = append(c.Domain, &ir.DomainSource{
				Reason: fmt.Sprintf("foreign key references %s(%s)", rt.Name, col),
				Pos:    t.Pos,
				Query:  columnQuery(&ir.Source{Alias: rt.Name, Kind: ir.FromTable, Table: rt, Columns: tableColumns(rt)}, ri),
			})
			_ = ci
		}
	}
	for _, v := range a.prog.Views {
		if v.Kind != ir.Hard {
			continue
		}
		q := v.Query
		var conds []ir.Expr
		conds = append(conds, q.Filters...)
		if !q.Aggregate {
			conds = append(conds, conjuncts(q.Check)...)
		}
		for _, e := range conds {
			a.domainFrom(v, q, e)
		}
	}
	for _, t := range a.prog.Tables {
		for _, c := range t.Columns {
			if c.Variable && len(c.Domain) == 0 && c.Type != ir.Bool {
				a.stmt = t.Name
				a.errorf(sqlfront.Pos{Line: t.Pos.Line, Col: t.Pos.Col},
					"cannot infer the values variable column %s.%s may take: declare a foreign key (%s %s references other_table(col)), "+
						"or constrain it in a @hard_constraint view with \"%s in (select ...)\" or by joining it with an input column",
					t.Name, c.Name, c.Name, c.Type, c.Name)
			}
		}
	}
}

// domainFrom records a domain source when conjunct e of hard view v is a
// membership or an equality join that pins a decision column.
func (a *analyzer) domainFrom(v *ir.View, q *ir.Query, e ir.Expr) {
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
		if c == nil || e.Not {
			return
		}
		if e.Sub != nil && !e.Sub.Correlated && !e.Sub.Var() {
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
