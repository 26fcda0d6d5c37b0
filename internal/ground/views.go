package ground

import (
	"github.com/weavesql/weave/cp"
	"github.com/weavesql/weave/internal/ir"
	"sort"
)

// hard posts a hard-constraint view: every row of its from clause that the
// filters keep satisfies the check (without aggregation), or every group
// satisfies the having clause and the selected constraint aggregates.
func (g *grounder) hard(v *ir.View) {
	q := v.Query
	defer func() { g.assume = nil }()
	if !q.Aggregate {
		// A check often holds for a row of one source whatever it is paired
		// with (the node is ready, the pod requests no particular node):
		// such rows are not paired at all.
		deps := sourcesRead(q.Check)
		memo := map[[2]*row]form{}
		skips := g.rowSkips(q)
		// When the check holds for every row of a source (every node is
		// ready), no pair posts anything: nothing to join.
		for i, skip := range skips {
			if skip == nil || q.From[i].Kind == ir.FromQuery && q.From[i].Query.Correlated {
				continue
			}
			r := g.source(q.From[i], nil)
			all := true
			for ri := range r.rows {
				if !skip(r, ri) {
					all = false
					break
				}
			}
			if all {
				return
			}
		}
		tuples := g.joinPruned(q, nil, skips)
		subs := g.opts.Explain && hasSubquery(q.Check)
		for _, t := range tuples {
			var ct form
			key, ok := memoKey(t, deps)
			if ok {
				if f, hit := memo[key]; hit {
					ct = f
				} else {
					ct = truthT(g.expr(q.Check, scope{t: t}))
					memo[key] = ct
				}
			} else {
				ct = truthT(g.expr(q.Check, scope{t: t}))
			}
			if g.opts.Explain && !isTrue(ct) && !isFalse(t.guard) {
				// One assumption per decision row (the pod), and per
				// row from a group it reads (node n1's spare capacity).
				l, ids := g.tupleLineage(t)
				at := site{sc: scope{t: t}}
				if subs {
					at.check = q.Check
				}
				lit := g.assumption(v, l.decision, ids, &l, at)
				g.assume = &lit
			}
			g.postImplied(g.emptyBinGuard(t.guard, ct), ct)
		}
		return
	}
	subs := g.opts.Explain && q.Check != nil && hasSubquery(q.Check)
	for _, grp := range g.groupsOf(q, nil) {
		if g.opts.Explain {
			// A group is identified by every row its members share (the
			// node whose capacity it is), plus its key values; Resolve
			// names its candidate members too (the pods that could go to
			// the node), as a person would.
			l := g.groupLineage(grp, v)
			key := append(append([]RowRef(nil), l.decision...), l.data...)
			at := site{sc: scope{grp: grp}}
			if subs {
				at.check = q.Check
			}
			lit := g.assumption(v, key, nil, &l, at, grp.key...)
			g.assume = &lit
		}
		if q.Check != nil {
			ct := truthT(g.expr(q.Check, scope{grp: grp}))
			switch {
			case len(q.GroupBy) == 0:
				// Without group by the single group always exists, even
				// when no row is selected: the check holds unconditionally.
				g.postImplied(fTrue, ct)
			case grp.bin != nil:
				g.postImplied(g.guardForBin(grp.bin, ct))
			default:
				g.postImplied(g.groupGuard(grp), ct)
			}
		}
		for _, a := range q.Constraints {
			g.constraintAggregate(a, grp)
		}
	}
}

// constraintAggregate posts a registered aggregate over one group.
func (g *grounder) constraintAggregate(a *ir.Agg, grp *group) {
	agg, ok := g.opts.Aggregates[a.Func]
	if !ok {
		g.fail("aggregate %s is not registered", a.Func)
	}
	var vals []cp.LinearExpr
	var present []cp.Lit
	for _, m := range g.membersOf(grp) {
		v := g.expr(a.Arg, scope{t: m.t})
		if v.isNullConst() {
			continue
		}
		p := and(m.guard, neg(v.null))
		if isFalse(p) {
			continue
		}
		var e lin
		switch v.k {
		case kStr:
			e = varLin(v.sv)
		case kConst:
			if s, ok := v.c.(string); ok {
				e = constLin(g.dict.get(s))
				break
			}
			e, _, _ = g.asLin(v)
		default:
			e, _, _ = g.asLin(v)
		}
		vals = append(vals, e.expr())
		if g.assume != nil {
			// Under an assumption the aggregate is posted row by row,
			// each row present only while the assumption holds.
			p = and(p, fLit{*g.assume})
		}
		present = append(present, g.litOf(p))
	}
	if g.opts.PairwiseAllDifferent && a.Func == "all_different" {
		for i := range vals {
			for j := i + 1; j < len(vals); j++ {
				var d cp.LinearExpr
				d.AddExpr(vals[i], 1).AddExpr(vals[j], -1)
				g.note(g.m.AddNotEqual(d, 0).OnlyEnforceIf(present[i], present[j]))
			}
		}
		return
	}
	for _, c := range agg.Post(g.m, vals, present) {
		g.note(c)
	}
}

// soft returns the value of a soft-constraint view: the sum of its rows'
// values over the rows that exist (NULL counts as 0).
func (g *grounder) soft(v *ir.View) lin {
	r := g.eval(v.Query, nil)
	parts := make([]lin, 0, len(r.rows))
	for _, rw := range r.rows {
		l, null, ok := g.asLin(rw.vals[0])
		if !ok {
			continue
		}
		if rw.vals[0].zeroNull {
			null = fFalse // a NULL value counts 0, and the value is 0 then
		}
		parts = append(parts, g.times(and(rw.guard, neg(null)), l))
	}
	return sumLins(parts)
}

// rowSkips returns, per source of an ungrouped hard view, a test of the
// rows that satisfy the check on their own: rows for which a disjunct of
// the check that reads only that source is true. A disjunct that reads one
// source is evaluated once per row of it, not once per pair. Nil when no
// disjunct reads a single source.
func (g *grounder) rowSkips(q *ir.Query) []skipRow {
	bySource := map[int][]ir.Expr{}
	for _, d := range disjuncts(q.Check) {
		if deps := sourcesRead(d); len(deps) == 1 {
			bySource[deps[0]] = append(bySource[deps[0]], d)
		}
	}
	if len(bySource) == 0 {
		return nil
	}
	skips := make([]skipRow, len(q.From))
	for src, ds := range bySource {
		check := ds[0]
		for _, d := range ds[1:] {
			check = &ir.Binary{Op: "or", L: check, R: d, T: ir.Bool}
		}
		var memo []int8 // per row: 0 unknown, 1 holds, -1 does not
		var memoRel *rel
		skips[src] = func(r *rel, ri int) bool {
			if memoRel != r {
				memoRel, memo = r, make([]int8, len(r.rows))
			}
			if memo[ri] == 0 {
				t := &tuple{rows: make([]*row, len(q.From))}
				t.rows[src] = &r.rows[ri]
				ct := truthT(g.expr(check, scope{t: t}))
				memo[ri] = -1
				if isTrue(ct) {
					memo[ri] = 1
				}
			}
			return memo[ri] == 1
		}
	}
	return skips
}

// disjuncts splits e into the operands of its top-level "or"s.
func disjuncts(e ir.Expr) []ir.Expr {
	if b, ok := e.(*ir.Binary); ok && b.Op == "or" {
		return append(disjuncts(b.L), disjuncts(b.R)...)
	}
	return []ir.Expr{e}
}

// memoKey keys a check by the rows of the sources it reads (at most two).
func memoKey(t *tuple, deps []int) ([2]*row, bool) {
	var k [2]*row
	if deps == nil || len(deps) > 2 {
		return k, false
	}
	for i, d := range deps {
		k[i] = t.rows[d]
	}
	return k, true
}

// sourcesRead lists the sources of the query an expression reads (through
// its subqueries too), or nil when it reads enclosing queries.
func sourcesRead(e ir.Expr) []int {
	seen := map[int]bool{}
	outer := false
	refsOf(e, func(level, src int) {
		if level == 0 {
			seen[src] = true
		} else {
			outer = true
		}
	})
	if outer {
		return nil
	}
	out := make([]int, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Ints(out)
	return out
}

// refsOf calls fn for every column an expression reads (through its
// subqueries too) of its own query (level 0) or of an enclosing one
// (level 1 the query around it, and so on).
func refsOf(e ir.Expr, fn func(level, src int)) {
	var walk func(e ir.Expr, depth int)
	var walkQ func(q *ir.Query, depth int)
	walk = func(e ir.Expr, depth int) {
		ir.Inspect(e, func(x ir.Expr) bool {
			switch x := x.(type) {
			case *ir.ColRef:
				if x.Up >= depth {
					fn(x.Up-depth, x.Source)
				}
			case *ir.In:
				walk(x.X, depth)
				for _, l := range x.List {
					walk(l, depth)
				}
				if x.Sub != nil {
					walkQ(x.Sub, depth+1)
				}
				return false
			case *ir.Exists:
				walkQ(x.Sub, depth+1)
				return false
			case *ir.Scalar:
				walkQ(x.Sub, depth+1)
				return false
			}
			return true
		})
	}
	walkQ = func(q *ir.Query, depth int) {
		for _, s := range q.From {
			if s.Kind == ir.FromQuery && s.View == nil && s.Query != nil {
				walkQ(s.Query, depth+1)
			}
		}
		var all []ir.Expr
		all = append(all, q.Filters...)
		all = append(all, q.GroupBy...)
		all = append(all, q.Having...)
		if q.Check != nil {
			all = append(all, q.Check)
		}
		for _, o := range q.Select {
			all = append(all, o.Expr)
		}
		for _, a := range q.Constraints {
			all = append(all, a)
		}
		for _, x := range all {
			walk(x, depth)
		}
	}
	walk(e, 0)
}
