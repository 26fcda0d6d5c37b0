package rewrite

import "github.com/weavesql/weave/internal/ir"

// pairwiseToAllDifferent recognises a hard constraint that forbids every
// pair of rows of one group from sharing a decision value, and states it as
// one all_different per group, which the solver propagates as a whole
// instead of n²/2 separate inequalities (paper §4):
//
//	select * from pod a join pod b
//	  on a.app = b.app and a.name < b.name      -- same group, each pair once
//	where a.node <> b.node                       -- pairwise different
//	→
//	select all_different(a.node) from pod a group by a.app
//
// It applies when both sources are the same table, every filter is an
// equality of one input column across the aliases (the group key) or an
// ordering/inequality of the single-column primary key across them, and the
// check is "a.x <> b.x" on a decision column that cannot be NULL (NULL
// makes "<>" unknown, which all_different would ignore).
func pairwiseToAllDifferent(p *ir.Program) bool {
	return eachQuery(p, func(v *ir.View, q *ir.Query) bool {
		if v.Kind != ir.Hard || q.Aggregate || len(q.From) != 2 {
			return false
		}
		a, b := q.From[0], q.From[1]
		if a.Kind != ir.FromTable || b.Kind != ir.FromTable || a.Table != b.Table {
			return false
		}
		t := a.Table
		if len(t.PrimaryKey) != 1 {
			return false
		}
		pk := t.PrimaryKey[0]
		// col returns the column read by e on source 0 and 1, if e is a
		// plain reference to one of them.
		col := func(e ir.Expr) (src, c int, ok bool) {
			r, isRef := e.(*ir.ColRef)
			if !isRef || r.Up != 0 {
				return 0, 0, false
			}
			return r.Source, r.Col, true
		}
		across := func(x *ir.Binary) (c int, ok bool) {
			s1, c1, ok1 := col(x.L)
			s2, c2, ok2 := col(x.R)
			if !ok1 || !ok2 || s1 == s2 || c1 != c2 {
				return 0, false
			}
			return c1, true
		}
		var keys []int
		pairOnce := false
		for _, f := range q.Filters {
			x, ok := f.(*ir.Binary)
			if !ok {
				return false
			}
			c, ok := across(x)
			if !ok {
				return false
			}
			switch {
			case x.Op == "=" && !t.Columns[c].Variable:
				keys = append(keys, c)
			case (x.Op == "<" || x.Op == ">" || x.Op == "<>") && c == pk:
				pairOnce = true
			default:
				return false
			}
		}
		check, ok := q.Check.(*ir.Binary)
		if !ok || check.Op != "<>" || !pairOnce {
			return false
		}
		x, ok := across(check)
		if !ok || !t.Columns[x].Variable || t.Columns[x].Nullable {
			return false
		}
		ref := func(c int) *ir.ColRef {
			return &ir.ColRef{P: q.Pos, Source: 0, Col: c, Name: a.Alias + "." + t.Columns[c].Name, T: t.Columns[c].Type, IsVar: t.Columns[c].Variable}
		}
		q.From = q.From[:1]
		q.Filters = nil
		q.Check = nil
		q.Aggregate = true
		q.GroupBy = nil
		for _, k := range keys {
			q.GroupBy = append(q.GroupBy, ref(k))
		}
		q.Constraints = []*ir.Agg{{P: check.P, Func: "all_different", Arg: ref(x), T: ir.Bool, Constraint: true}}
		q.Select = nil
		for _, k := range keys {
			q.Select = append(q.Select, &ir.Output{Name: t.Columns[k].Name, Expr: ref(k)})
		}
		return true
	})
}
