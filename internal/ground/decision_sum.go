package ground

import (
	"github.com/weavesql/weave/internal/ir"
)

// Sums over a constant relation joined to a decision column, without the
// join.
//
//	select 0 - 10 * sum(g.pods) from group_node_load g
//	join pending_pod on pending_pod.node_name = g.node_name and pending_pod.group_name = g.group_name
//
// joins every row of g (a node holding pods of a group) with every pending
// pod that may go to its node: 47,500 (pod, node) tuples per
// TopologySpreading batch, each made into a member, an item and a term
// "[x = node] × pods" that weightedSum then folds back into one table per
// pod (t = table[x], an element constraint). That took a third of the
// batch's grounding. decisionSums computes the same tables directly: for
// each row a of the constant relation, the weight once, then the pending
// rows whose variable may equal a's key (the decision column's index), the
// other filters tested on the stored values, and a's weight added to
// table_b[key] of each.
//
// It applies to an aggregate query over two sources, the first constant
// (a pushed-down view or an input table), the second a table with a
// decision column joined to the first by equality, whose other filters
// read stored values only, whose aggregates are all count or sum (not
// distinct) over the first source's columns, and which is either not
// grouped or grouped by stored columns of the second source (G2's
// gang_pod_domain: per pod, the domain number of its node). Anything else
// goes the general way. The result is the value the general way gives:
// the same groups, each present exactly when one of its pairs is, the
// same tables and literals, a sum NULL exactly when no pair is present
// (here "x ∉ the keys" for every row), a count never NULL.

// decisionSums returns the groups of q with their aggregates computed, or
// nil when q does not have that form. Without group by that is the one
// group of q; grouped by stored columns of the decision table, one group
// per value of those columns that some pair joins (per pending pod when the
// key holds the pod's name), present when one of its rows' variables takes
// a value some row of the constant relation joins: the groups the general
// way makes, each member a pair. An explanation takes the general way: its
// group has the members an explanation names.
func (g *grounder) decisionSums(q *ir.Query, outer *tuple) []*group {
	if g.opts.NaiveSums || g.opts.Explain || !q.Aggregate || len(q.Constraints) != 0 || q.Distinct || len(q.From) != 2 {
		return nil
	}
	sa, sb := q.From[0], q.From[1]
	if sb.Kind != ir.FromTable || !sb.Table.HasVariables() || sa.Kind == ir.FromTable && sa.Table.HasVariables() {
		return nil
	}
	for _, k := range q.GroupBy {
		if c, ok := k.(*ir.ColRef); !ok || c.Up != 0 || c.Source != 1 {
			return nil // a key over the constant relation or an expression: the general way
		}
	}
	aggs, ok := decisionSumAggs(q)
	if !ok || len(aggs) == 0 {
		return nil
	}
	ra, rb := g.source(sa, outer), g.source(sb, outer)
	for i := range ra.constCols {
		if !ra.constCols[i] {
			return nil
		}
	}
	for i := range ra.rows {
		if !isTrue(ra.rows[i].guard) {
			return nil
		}
	}
	// The group key of each row of the decision table: stored values only.
	var keys [][]value
	if len(q.GroupBy) > 0 {
		keys = make([][]value, len(rb.rows))
		for ri := range rb.rows {
			keys[ri] = make([]value, len(q.GroupBy))
			for i, k := range q.GroupBy {
				v := rb.rows[ri].vals[k.(*ir.ColRef).Col]
				if v.k != kConst {
					return nil
				}
				keys[ri][i] = v
			}
		}
	}
	// The equality with the decision column, wherever it stands among
	// the filters (planLookup takes the first equality it can index,
	// which may be one on a stored column, and builds its index).
	var lookup *lookupPlan
	for _, f := range q.Filters {
		if !f.Var() {
			continue
		}
		if lp := g.planLookup(q, 1, rb, []ir.Expr{f}); lp.varIndex != nil {
			lookup = lp
			break
		}
	}
	if lookup == nil {
		return nil
	}
	var rest []ir.Expr
	var eqs []*colEq
	for _, f := range q.Filters {
		if f == lookup.used {
			continue
		}
		if f.Var() {
			return nil // a filter on the decision: the general way
		}
		rest = append(rest, f)
		eqs = append(eqs, colEqOf(f))
	}
	// A filter that reads the decision table's stored columns only (N5's
	// "pending_pod.pod_group is not null") is decided once per row of it,
	// not once per pair: a batch of 100 pods at 500 nodes has 100,000
	// pairs. onlyB[i] holds the verdicts of rest[i] by row (0: not yet).
	onlyB := make([][]int8, len(rest))
	for i, f := range rest {
		if srcs := sourcesRead(f); len(srcs) == 1 && srcs[0] == 1 {
			onlyB[i] = make([]int8, len(rb.rows))
		}
	}
	// An equality between a column of the constant relation and one of
	// the decision table (G2's "pending_pod.pod_group = d.pod_group") is
	// decided once per value of the first and row of the second: a batch
	// of 100 pods in four groups at 230 nodes tested it on 92,000 pairs.
	// byValue[i] holds its verdicts per value, aCol[i] that column.
	byValue := make([]map[any][]int8, len(rest))
	aCol := make([]*ir.ColRef, len(rest))
	for i, e := range eqs {
		if e == nil || e.r == nil || e.l.Up != 0 || e.r.Up != 0 || onlyB[i] != nil {
			continue
		}
		switch {
		case e.l.Source == 0 && e.r.Source == 1:
			aCol[i] = e.l
		case e.r.Source == 0 && e.l.Source == 1:
			aCol[i] = e.r
		default:
			continue
		}
		byValue[i] = map[any][]int8{}
	}
	rowVerdicts := make([][]int8, len(rest)) // byValue's slices for the current row of ra
	const verdictTrue, verdictFalse = 1, 2
	type entry struct {
		v, w int64
	}
	type perAgg struct {
		k       []int64   // by row of rb: weights of pairs whose variable is fixed at the key
		fixed   []bool    // by row of rb: some such pair is present
		entries [][]entry // by row of rb: weights by the value of its variable
	}
	per := make([]perAgg, len(aggs))
	for i := range per {
		per[i] = perAgg{k: make([]int64, len(rb.rows)), fixed: make([]bool, len(rb.rows)), entries: make([][]entry, len(rb.rows))}
	}
	xs := make([]int32, len(rb.rows)) // the variable of each row of rb that has entries
	// Grouped, the pairs each row of rb is in, whatever the aggregates (its
	// group's presence): the values of its variable that join some row of
	// ra, or a pair present anyway. Without group by the one group exists
	// anyway, and nothing is recorded.
	var memberVals [][]int64
	var memberFixed []bool
	if keys != nil {
		memberVals, memberFixed = make([][]int64, len(rb.rows)), make([]bool, len(rb.rows))
	}
	weights := make([]int64, len(aggs))
	present := make([]bool, len(aggs))
	t := &tuple{rows: make([]*row, 2), outer: outer, guard: fTrue}
	for ai := range ra.rows {
		t.rows[0], t.rows[1] = &ra.rows[ai], nil
		for k, e := range aggs {
			weights[k], present[k] = 1, true
			if e.Arg == nil {
				continue
			}
			v := g.expr(e.Arg, scope{t: t})
			if v.k != kConst {
				return nil
			}
			switch c := v.c.(type) {
			case nil:
				present[k] = false // NULL: neither counted nor summed
			case int64:
				weights[k] = c
			case bool:
				weights[k] = 0
				if c {
					weights[k] = 1
				}
			default:
				if e.Func == "sum" {
					return nil
				}
			}
		}
		for i, m := range byValue {
			rowVerdicts[i] = nil
			if m == nil {
				continue
			}
			if v, ok := storedValue(t, aCol[i]); ok && comparableValue(v) {
				if rowVerdicts[i] = m[v]; rowVerdicts[i] == nil {
					rowVerdicts[i] = make([]int8, len(rb.rows))
					m[v] = rowVerdicts[i]
				}
			}
		}
	next:
		for _, c := range lookup.candidates(g, t, rb, nil) {
			t.rows[1] = &rb.rows[c.row]
			if !isTrue(t.rows[1].guard) {
				return nil
			}
			for i, f := range rest {
				if vs := onlyB[i]; vs != nil && vs[c.row] != 0 {
					if vs[c.row] == verdictFalse {
						continue next
					}
					continue
				}
				if vs := rowVerdicts[i]; vs != nil && vs[c.row] != 0 {
					if vs[c.row] == verdictFalse {
						continue next
					}
					continue
				}
				if eqs[i] != nil {
					holds, decided := eqs[i].test(t)
					if !decided {
						return nil
					}
					if vs := rowVerdicts[i]; vs != nil {
						vs[c.row] = verdictFalse
						if holds {
							vs[c.row] = verdictTrue
						}
					}
					if !holds {
						continue next
					}
					continue
				}
				switch ft := truthT(g.expr(f, scope{t: t})); {
				case isFalse(ft):
					if onlyB[i] != nil {
						onlyB[i][c.row] = verdictFalse
					}
					continue next
				case !isTrue(ft):
					return nil
				}
				if onlyB[i] != nil {
					onlyB[i][c.row] = verdictTrue
				}
			}
			switch {
			case c.guard == nil:
				xs[c.row] = c.x
				if keys != nil {
					memberVals[c.row] = append(memberVals[c.row], c.v)
				}
			case isTrue(c.guard):
				if keys != nil {
					memberFixed[c.row] = true
				}
			default:
				return nil
			}
			for k := range aggs {
				if !present[k] {
					continue
				}
				p := &per[k]
				if c.guard == nil {
					p.entries[c.row] = append(p.entries[c.row], entry{c.v, weights[k]})
				} else {
					p.k[c.row] += weights[k]
					p.fixed[c.row] = true
				}
			}
		}
	}
	// The rows of rb by group: every row in the one group without group
	// by; by key otherwise, in the order of their rows, rows in no pair
	// left out (a group with no pair does not exist).
	var parts [][]int
	var partKeys [][]value
	if keys == nil {
		all := make([]int, len(rb.rows))
		for i := range all {
			all[i] = i
		}
		parts = [][]int{all}
	} else {
		byKey := map[string]int{}
		for ri := range rb.rows {
			if !memberFixed[ri] && len(memberVals[ri]) == 0 {
				continue
			}
			k, _ := constKey(keys[ri])
			i, ok := byKey[k]
			if !ok {
				i = len(parts)
				byKey[k] = i
				parts = append(parts, nil)
				partKeys = append(partKeys, keys[ri])
			}
			parts[i] = append(parts[i], ri)
		}
	}
	out := make([]*group, 0, len(parts))
	for pi, rows := range parts {
		grp := &group{q: q, guard: fTrue, outer: outer, pre: make(map[*ir.Agg]value, len(aggs))}
		if keys != nil {
			grp.key = partKeys[pi]
			grp.first = &tuple{rows: []*row{nil, &rb.rows[rows[0]]}, outer: outer, guard: fTrue}
			var in []form // "some pair of the group is present"
			for _, ri := range rows {
				if memberFixed[ri] {
					in = []form{fTrue}
					break
				}
				in = append(in, fIn{x: g.m.Var(int(xs[ri])), vals: memberVals[ri]})
			}
			grp.guard = or(in...)
		}
		for k, e := range aggs {
			p := &per[k]
			sums := []lin{}
			var some []form // "x takes one of its row's keys", per row
			fixed := false
			for _, ri := range rows {
				if p.fixed[ri] {
					fixed = true
					sums = append(sums, constLin(p.k[ri]))
				}
				es := p.entries[ri]
				if len(es) == 0 {
					continue
				}
				x := g.m.Var(int(xs[ri]))
				vs, ws := make([]int64, len(es)), make([]int64, len(es))
				for i, en := range es {
					vs[i], ws[i] = en.v, en.w
				}
				some = append(some, fIn{x: x, vals: vs})
				if tv, ok := g.tableOf(x, vs, ws); ok {
					sums = append(sums, varLin(tv))
					continue
				}
				for i, v := range vs {
					sums = append(sums, g.times(fEq{x: x, v: v}, constLin(ws[i])))
				}
			}
			sum := sumLins(sums)
			if e.Func == "count" {
				grp.pre[e] = intVal(sum, fFalse)
				continue
			}
			null := fFalse
			if !fixed {
				null = neg(or(some...))
			}
			grp.pre[e] = zeroWhenNull(intVal(sum, null))
		}
		out = append(out, grp)
	}
	return out
}

// decisionSumAggs lists the aggregates of q's select list, having clause
// and check when every one is count or sum (not distinct) over the first
// source's columns only and nothing outside them reads a source of q.
func decisionSumAggs(q *ir.Query) ([]*ir.Agg, bool) {
	var aggs []*ir.Agg
	ok := true
	visit := func(e ir.Expr) {
		ir.Inspect(e, func(x ir.Expr) bool {
			switch x := x.(type) {
			case *ir.Agg:
				if x.Func != "count" && x.Func != "sum" || x.Distinct {
					ok = false
				}
				if x.Arg != nil {
					srcs := sourcesRead(x.Arg)
					if srcs == nil || len(srcs) > 1 || len(srcs) == 1 && srcs[0] != 0 {
						ok = false
					}
				}
				aggs = append(aggs, x)
				return false
			case *ir.ColRef:
				if x.Up == 0 && groupKeyIndex(q, x) < 0 {
					ok = false // a column outside an aggregate, not a key of the group
				}
			case *ir.In, *ir.Exists, *ir.Scalar:
				ok = false // subqueries: the general way
			}
			return true
		})
	}
	for _, o := range q.Select {
		visit(o.Expr)
	}
	for _, h := range q.Having {
		visit(h)
	}
	if q.Check != nil {
		visit(q.Check)
	}
	return aggs, ok
}

// groupKeyIndex returns the position of column c (of q's own sources)
// among q's group by columns, or -1.
func groupKeyIndex(q *ir.Query, c *ir.ColRef) int {
	for i, k := range q.GroupBy {
		if kc, ok := k.(*ir.ColRef); ok && kc.Up == 0 && kc.Source == c.Source && kc.Col == c.Col {
			return i
		}
	}
	return -1
}
