package ground

import (
	"github.com/weavesql/weave/cp"
	"github.com/weavesql/weave/internal/ir"
)

// Bin groups without tuples. The commonest grouped view of a placement
// model,
//
//	select ... from node_free join pending_pod
//	  on pending_pod.node_name = node_free.node_name
//	group by node_free.node_name ... having sum(pending_pod.cpu) <= ...
//
// pairs every node with every pod that may go there: nodes × pods tuples,
// grouped back by node, each group a bin whose members are exactly the
// pods listed under that node in the decision column's index. binGroups
// builds those groups from the index lists directly: one group per node,
// its items and sizes computed once per list, and member tuples made only
// if an expression needs them (a non-load aggregate, a subquery).

// lazyGroup is a group whose members are not made yet: the tuple of the
// other sources, plus each candidate row of the decision source.
type lazyGroup struct {
	prefix *tuple // rows of every source but src (src's slot is nil)
	src    int
	r      *rel
	cands  []candidate
}

// membersOf returns a group's members, making them for a lazy group.
func (g *grounder) membersOf(grp *group) []member {
	lz := grp.lazy
	if lz == nil {
		return grp.members
	}
	grp.lazy = nil
	n := len(lz.prefix.rows)
	grp.members = make([]member, len(lz.cands))
	for i, c := range lz.cands {
		t := g.newTuple(n)
		copy(t.rows, lz.prefix.rows)
		t.rows[lz.src] = &lz.r.rows[c.row]
		t.outer, t.guard = lz.prefix.outer, c.guard
		grp.members[i] = member{t: t, guard: c.guard}
	}
	return grp.members
}

// memberCount is the number of members of a group.
func memberCount(grp *group) int {
	if grp.lazy != nil {
		return len(grp.lazy.cands)
	}
	return len(grp.members)
}

// binList is what one index list (the rows whose variable may take one
// value) makes of a bin: its items, and per sum aggregate their sizes.
type binList struct {
	items []cp.IntVar
	v     int64
	// sizes are shared by the lists of the same rows in the same order
	// (every node lists every pod that may go anywhere).
	sizes map[*ir.Agg][]int64
	cands []candidate
}

// binGroups returns q's groups built from the decision column's index, or
// false when q is not of that shape: grouped; its last source joined only
// by "decision column = expression over the other sources" (a hash lookup
// in the index of the values the variables may take); the group keys read
// only the other sources, every combination of their rows its own group;
// and no other condition on the pairs.
func (g *grounder) binGroups(q *ir.Query, outer *tuple) ([]*group, bool) {
	n := len(q.From)
	if g.opts.Explain || g.opts.NoLoads || !q.Aggregate || len(q.GroupBy) == 0 || n < 2 {
		return nil, false
	}
	last := n - 1
	kp := newKeyPlan(q)
	if kp == nil {
		return nil, false
	}
	for _, s := range kp.srcs {
		if s == last {
			return nil, false
		}
	}
	var lastFilters, prefixFilters []ir.Expr
	for _, f := range q.Filters {
		switch lvl := maxSource(f); {
		case lvl == last:
			lastFilters = append(lastFilters, f)
		case f.Var():
			return nil, false // a condition on the decisions of the other sources
		default:
			prefixFilters = append(prefixFilters, f)
		}
	}
	if len(lastFilters) != 1 {
		return nil, false
	}
	r := g.source(q.From[last], outer)
	for i := range r.rows {
		if !isTrue(r.rows[i].guard) {
			return nil, false
		}
	}
	plan := g.planLookup(q, last, r, lastFilters)
	if plan.varIndex == nil || plan.used != lastFilters[0] {
		return nil, false
	}
	pq := *q
	pq.From, pq.Filters = q.From[:last], prefixFilters
	prefixes := g.join(&pq, outer)
	type built struct {
		key    []value
		prefix *tuple
		cands  []candidate
		list   *binList
	}
	var out []built
	seen := map[string]bool{}
	for _, p := range prefixes {
		if !isTrue(p.guard) {
			return nil, false
		}
		t := &tuple{rows: make([]*row, n), outer: p.outer, guard: fTrue}
		copy(t.rows, p.rows)
		if v := g.expr(plan.probe, scope{t: t}); v.k != kConst {
			return nil, false
		}
		key := make([]value, len(q.GroupBy))
		for i, e := range q.GroupBy {
			if key[i] = g.expr(e, scope{t: t}); key[i].k != kConst {
				return nil, false
			}
		}
		k, _ := constKey(key)
		if seen[k] {
			return nil, false // two combinations in one group: not one bin
		}
		seen[k] = true
		cands := plan.candidates(g, t, r, nil)
		if len(cands) == 0 {
			continue
		}
		list, ok := g.binListOf(cands)
		if !ok {
			return nil, false
		}
		out = append(out, built{key, t, cands, list})
	}
	groups := make([]*group, len(out))
	for i, b := range out {
		first := g.newTuple(n)
		copy(first.rows, b.prefix.rows)
		first.rows[last] = &r.rows[b.cands[0].row]
		first.outer, first.guard = b.prefix.outer, b.cands[0].guard
		groups[i] = &group{q: q, key: b.key, outer: outer, first: first,
			lazy: &lazyGroup{prefix: b.prefix, src: last, r: r, cands: b.cands},
			bin:  &binGroup{v: b.list.v, items: b.list.items}, list: b.list}
	}
	return groups, true
}

// binListOf returns the bin of an index list, made once per list: every
// candidate's condition is "its variable = v" for one v.
func (g *grounder) binListOf(cands []candidate) (*binList, bool) {
	if l, ok := g.binLists[&cands[0]]; ok && len(l.items) == len(cands) {
		return l, true
	}
	l := &binList{items: make([]cp.IntVar, len(cands)), cands: cands}
	h := uint64(len(cands))
	for i, c := range cands {
		e, ok := c.guard.(fEq)
		if !ok || e.not || i > 0 && e.v != l.v {
			return nil, false
		}
		l.v, l.items[i] = e.v, e.x
		h = (h ^ uint64(c.row)) * 0x100000001B3
	}
	for _, o := range g.rowSeqs[h] {
		if sameRows(o.cands, cands) {
			l.sizes = o.sizes
			break
		}
	}
	if l.sizes == nil {
		l.sizes = map[*ir.Agg][]int64{}
		g.rowSeqs[h] = append(g.rowSeqs[h], l)
	}
	g.binLists[&cands[0]] = l
	return l, true
}

// sameRows reports whether two index lists list the same rows in order.
func sameRows(a, b []candidate) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].row != b[i].row {
			return false
		}
	}
	return true
}

// lazySizes returns the sizes of sum(e.Arg) over a lazy bin group's
// members, computed once per index list, or false when one is not a
// constant non-negative integer.
func (g *grounder) lazySizes(e *ir.Agg, grp *group) ([]int64, bool) {
	lz, list := grp.lazy, grp.list
	if s, ok := list.sizes[e]; ok {
		return s, s != nil // computed for the list, not this group alone
	}
	// The sizes are the list's when the argument reads the decision source
	// alone (the pod's request); otherwise they are this group's.
	deps := sourcesRead(e.Arg)
	own := len(deps) == 1 && deps[0] == lz.src
	size := g.sizeOf(e)
	t := &tuple{rows: make([]*row, len(lz.prefix.rows)), outer: lz.prefix.outer}
	copy(t.rows, lz.prefix.rows)
	sizes := make([]int64, len(lz.cands))
	for i, c := range lz.cands {
		t.rows[lz.src], t.guard = &lz.r.rows[c.row], c.guard
		v, ok := size(t)
		if !ok {
			if own {
				list.sizes[e] = nil
			}
			return nil, false
		}
		sizes[i] = v
	}
	if own {
		list.sizes[e] = sizes
	}
	return sizes, true
}
