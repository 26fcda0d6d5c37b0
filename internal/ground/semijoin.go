package ground

import (
	"github.com/weavesql/weave/internal/ir"
)

// Semi-join reduction of fetched tables by decision domains.
//
// A decision column whose domain is a set read from the database (the
// scheduler's node_sample_only: "node_name is null or node_name in
// (select node_name from sampled_node)") can only ever equal one of those
// values. A table that every compiled view joins through that column
// (h01: "pending_pod join node on pending_pod.node_name = node.name")
// only matters in its rows whose key is in the set: the others join no
// value the variable can take. Such a table is read with the set as a
// filter,
//
//	select ... from node                                   (10,000 rows)
//	select ... from node where name in (select node_name from sampled_node)   (500)
//
// which the database evaluates in the snapshot's transaction, where the
// domain is read too. At 10,000 nodes reading node was 16 of a placement
// batch's 52 ms of reads.
//
// A table qualifies when every occurrence of it in the compiled part of
// the program (hard, soft and intermediate views, their subqueries and
// derived tables, and domain sources) is one of:
//
//   - a source of a query one of whose filters (join conditions, or the
//     where clause unless it is a hard view's check) is "t.k = d", with d a
//     decision column of a table source of that query or of an enclosing
//     one, whose domain has the set among its sources: a row of t whose k
//     is outside the set makes the filter false for every value of d (a
//     NULL d matches nothing either), so it is never part of the result;
//   - the query of a domain source of such a column d (its foreign key's
//     "select name from node"): the domain is the intersection of its
//     sources, which the set's rows leave as it is.
//
// Every occurrence must name the same column k and the same set. The set
// must be a query of one column of one table or pushed-down view, without
// filters, so that it can be written back as SQL.

// restriction is the filter a table is read with: key in (select col
// from source).
type restriction struct {
	key    string // column of the restricted table
	source string // table or pushed-down view holding the set (its name)
	sql    string // the same, as SQL (ir.Source.SQLName)
	col    string // its column
}

// columnOf recognises "select s.col from s" (no filter, grouping or
// correlation) over an input table or a pushed-down view: the source and
// the column's name.
func columnOf(q *ir.Query) (*ir.Source, string, bool) {
	if q == nil || len(q.From) != 1 || len(q.Filters) != 0 || q.Aggregate || len(q.GroupBy) != 0 ||
		len(q.Having) != 0 || q.Check != nil || q.Correlated || len(q.Select) != 1 {
		return nil, "", false
	}
	s := q.From[0]
	if s.Kind != ir.FromInput && !(s.Kind == ir.FromTable && !s.Table.HasVariables()) {
		return nil, "", false
	}
	ref, ok := q.Select[0].Expr.(*ir.ColRef)
	if !ok || ref.Up != 0 || ref.Source != 0 {
		return nil, "", false
	}
	return s, s.Columns[ref.Col].Name, true
}

// keyed is r reading the restricted table's column key.
func (r *restriction) keyed(key string) *restriction {
	k := *r
	k.key = key
	return &k
}

// domainSet is the SQL-expressible domain source of a decision column,
// nil if it has none. A pushed-down view is preferred to a table: it is
// the computed set (the sample), where a table is usually the foreign
// key's whole target, the very table to reduce.
func domainSet(c *ir.Column) (*restriction, *ir.DomainSource) {
	var table *restriction
	var tableSource *ir.DomainSource
	for _, d := range c.Domain {
		s, col, ok := columnOf(d.Query)
		if !ok {
			continue
		}
		r := &restriction{source: s.Name(), sql: s.SQLName(), col: col}
		if s.Kind == ir.FromInput {
			return r, d
		}
		if table == nil {
			table, tableSource = r, d
		}
	}
	return table, tableSource
}

// restrictions finds the tables that can be read reduced, and how.
func restrictions(p *ir.Program) map[*ir.Table]*restriction {
	// The set of each decision column that has one.
	sets := map[*ir.Column]*restriction{}
	setSource := map[*ir.Column]*ir.DomainSource{}
	for _, t := range p.Tables {
		for _, c := range t.Columns {
			if !c.Variable {
				continue
			}
			if r, d := domainSet(c); r != nil {
				sets[c], setSource[c] = r, d
			}
		}
	}
	if len(sets) == 0 {
		return nil
	}
	// What each occurrence of an input table allows; a nil entry means
	// some occurrence is not tied to a set.
	found := map[*ir.Table]*restriction{}
	untied := map[*ir.Table]bool{}
	tie := func(t *ir.Table, r *restriction) {
		if untied[t] {
			return
		}
		if r == nil {
			untied[t] = true
			return
		}
		if o := found[t]; o != nil && *o != *r {
			untied[t] = true
			return
		}
		found[t] = r
	}
	// walk visits q; member is the decision column d when q is the
	// subquery of "d [not] in (q)".
	var walk func(q *ir.Query, stack []*ir.Query, member *ir.Column)
	walked := map[*ir.Query]bool{}
	walkRoot := func(q *ir.Query) {
		if q != nil && !walked[q] {
			walked[q] = true
			walk(q, nil, nil)
		}
	}
	walk = func(q *ir.Query, stack []*ir.Query, member *ir.Column) {
		stack = append(stack, q)
		for i, s := range q.From {
			switch {
			case s.Kind == ir.FromTable && !s.Table.HasVariables():
				r := tiedBy(q, i, stack, sets)
				if r == nil && member != nil {
					r = memberOf(q, i, sets[member])
				}
				tie(s.Table, r)
			case s.Kind == ir.FromQuery && s.View != nil:
				walkRoot(s.View.Query)
			case s.Kind == ir.FromQuery && s.Query != nil:
				walk(s.Query, nil, nil) // a derived table sees no enclosing query
			}
		}
		var visit func(e ir.Expr) bool
		visit = func(e ir.Expr) bool {
			var sub *ir.Query
			var in *ir.Column
			switch e := e.(type) {
			case *ir.In:
				sub = e.Sub
				if ref, ok := e.X.(*ir.ColRef); ok && sub != nil {
					in = decisionColumn(ref, stack)
				}
				ir.Inspect(e.X, visit)
				for _, x := range e.List {
					ir.Inspect(x, visit)
				}
			case *ir.Exists:
				sub = e.Sub
			case *ir.Scalar:
				sub = e.Sub
			}
			if sub != nil {
				walk(sub, stack, in)
				return false // walk visits the subquery's own expressions
			}
			return true
		}
		ir.InspectOwn(q, visit)
	}
	for _, v := range p.Views {
		if v.Kind == ir.Hard || v.Kind == ir.Soft || v.Kind == ir.Intermediate {
			walkRoot(v.Query)
		}
	}
	for _, t := range p.Tables {
		for _, c := range t.Columns {
			for _, d := range c.Domain {
				if d.Query == nil || walked[d.Query] {
					continue
				}
				walked[d.Query] = true
				if r := sets[c]; r != nil && setSource[c] != d {
					if s, col, ok := columnOf(d.Query); ok && s.Kind == ir.FromTable {
						// Another source of the same column (its foreign
						// key): the set's rows leave the intersection as
						// it is.
						tie(s.Table, r.keyed(col))
						continue
					}
				}
				walk(d.Query, nil, nil)
			}
		}
	}
	out := map[*ir.Table]*restriction{}
	for t, r := range found {
		if !untied[t] && r.source != t.Name {
			out[t] = r
		}
	}
	return out
}

// tiedBy returns the restriction an occurrence of a table as source i of
// q allows (nil: none): a filter of q equating one of its columns with a
// decision column that has a set.
func tiedBy(q *ir.Query, i int, stack []*ir.Query, sets map[*ir.Column]*restriction) *restriction {
	t := q.From[i].Table
	for _, f := range q.Filters {
		b, ok := f.(*ir.Binary)
		if !ok || b.Op != "=" {
			continue
		}
		for _, side := range [][2]ir.Expr{{b.L, b.R}, {b.R, b.L}} {
			own, ok1 := side[0].(*ir.ColRef)
			other, ok2 := side[1].(*ir.ColRef)
			if !ok1 || !ok2 || own.Up != 0 || own.Source != i {
				continue
			}
			c := decisionColumn(other, stack)
			if c == nil || sets[c] == nil {
				continue
			}
			return sets[c].keyed(t.Columns[own.Col].Name)
		}
	}
	return nil
}

// memberOf returns the restriction an occurrence of a table as source i
// of q allows when q is the subquery of "d [not] in (q)", d a decision
// column with the set r (nil: none): q selects a not-NULL column of the
// table, so a row whose value is outside the set is never the one d
// equals, and dropping it leaves "in" and "not in" as they were (a NULL
// among the values would not: NOT IN would become unknown).
func memberOf(q *ir.Query, i int, r *restriction) *restriction {
	if r == nil || q.Aggregate || len(q.Select) != 1 {
		return nil
	}
	ref, ok := q.Select[0].Expr.(*ir.ColRef)
	if !ok || ref.Up != 0 || ref.Source != i {
		return nil
	}
	c := q.From[i].Table.Columns[ref.Col]
	if !c.NotNull {
		return nil
	}
	return r.keyed(c.Name)
}

// decisionColumn returns the decision column a column reference made in
// the innermost query of stack reads, or nil.
func decisionColumn(ref *ir.ColRef, stack []*ir.Query) *ir.Column {
	level := len(stack) - 1 - ref.Up
	if level < 0 {
		return nil
	}
	q := stack[level]
	if ref.Source >= len(q.From) {
		return nil
	}
	s := q.From[ref.Source]
	if s.Kind != ir.FromTable || ref.Col >= len(s.Table.Columns) {
		return nil
	}
	if c := s.Table.Columns[ref.Col]; c.Variable {
		return c
	}
	return nil
}
