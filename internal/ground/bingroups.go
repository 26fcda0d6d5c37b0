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

// lazyGroup is a group whose members are not made yet: per combination of
// rows of the other sources (prefix, src's slot nil) that falls in the
// group, the candidate rows of the decision source.
type lazyGroup struct {
	parts []lazyPart
	src   int
	r     *rel
}

// binGroupParts holds what binGroups allocates for one group.
type binGroupParts struct {
	grp  group
	lazy lazyGroup
	bin  binGroup
	part [1]lazyPart
}

type lazyPart struct {
	prefix *tuple
	cands  []candidate
}

// membersOf returns a group's members, making them for a lazy group.
func (g *grounder) membersOf(grp *group) []member {
	lz := grp.lazy
	if lz == nil {
		return grp.members
	}
	grp.lazy = nil
	grp.members = make([]member, 0, memberCountLazy(lz))
	for _, p := range lz.parts {
		n := len(p.prefix.rows)
		for i := range p.cands {
			c := &p.cands[i]
			t := g.newTuple(n)
			copy(t.rows, p.prefix.rows)
			t.rows[lz.src] = &lz.r.rows[c.row]
			t.outer, t.guard = p.prefix.outer, c.cond(g.m)
			grp.members = append(grp.members, member{t: t, guard: t.guard})
		}
	}
	return grp.members
}

func memberCountLazy(lz *lazyGroup) int {
	n := 0
	for _, p := range lz.parts {
		n += len(p.cands)
	}
	return n
}

// memberCount is the number of members of a group.
func memberCount(grp *group) int {
	if grp.lazy != nil {
		return memberCountLazy(grp.lazy)
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
// false when q is not of that shape: grouped; its last source joined by
// "decision column = expression over the other sources" (a hash lookup in
// the index of the values the variables may take) and otherwise only by
// conditions on stored values (decided once per pair of a row of it and
// the one other source they read); the group keys read only the other
// sources. A group that one combination of the other sources' rows makes
// is a bin; one that several make (a zone's nodes) is not, and its
// members are made when asked for.
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
	r := g.source(q.From[last], outer)
	for i := range r.rows {
		if !isTrue(r.rows[i].guard) {
			return nil, false
		}
	}
	// One filter is the index lookup; the others must not read decisions.
	var plan *lookupPlan
	var extra []*pairFilter
	for _, f := range lastFilters {
		if plan == nil {
			if p := g.planLookup(q, last, r, []ir.Expr{f}); p.varIndex != nil && p.used == f {
				plan = p
				continue
			}
		}
		if f.Var() {
			return nil, false
		}
		pf, ok := newPairFilter(f, last)
		if !ok {
			return nil, false
		}
		extra = append(extra, pf)
	}
	if plan == nil {
		return nil, false
	}
	pq := *q
	pq.From, pq.Filters = q.From[:last], prefixFilters
	prefixes := g.join(&pq, outer)
	var groups []*group
	byKey := map[string]*group{}
	var kept []candidate
	// A group's parts are cut from one block, as are the keys: five
	// allocations a group were a tenth of a one-pod batch's.
	var slab []binGroupParts
	var keys []value
	for _, p := range prefixes {
		if !isTrue(p.guard) {
			return nil, false
		}
		t := g.newTuple(n)
		copy(t.rows, p.rows)
		t.outer, t.guard = p.outer, fTrue
		if v := g.expr(plan.probe, scope{t: t}); v.k != kConst {
			return nil, false
		}
		cands := plan.candidates(g, t, r, nil)
		if len(extra) > 0 && len(cands) > 0 {
			var ok bool
			if kept, ok = g.keep(extra, t, r, cands, kept); !ok {
				return nil, false
			}
			if len(kept) < len(cands) {
				cands = append([]candidate(nil), kept...)
			}
		}
		if len(cands) == 0 {
			continue
		}
		if len(keys) < len(q.GroupBy) {
			keys = make([]value, len(q.GroupBy)*max(len(prefixes)-len(groups), 1))
		}
		key := keys[:len(q.GroupBy):len(q.GroupBy)]
		keys = keys[len(q.GroupBy):]
		for i, e := range q.GroupBy {
			if key[i] = g.expr(e, scope{t: t}); key[i].k != kConst {
				return nil, false
			}
		}
		k, _ := constKey(key)
		if grp := byKey[k]; grp != nil {
			// Several combinations in one group: not one bin.
			grp.lazy.parts = append(grp.lazy.parts, lazyPart{t, cands})
			grp.bin, grp.list = nil, nil
			continue
		}
		list, ok := g.binListOf(cands)
		if !ok {
			return nil, false
		}
		first := g.newTuple(n)
		copy(first.rows, t.rows)
		first.rows[last] = &r.rows[cands[0].row]
		first.outer, first.guard = t.outer, cands[0].cond(g.m)
		if len(slab) == 0 {
			slab = make([]binGroupParts, max(len(prefixes)-len(groups), 1))
		}
		gp := &slab[0]
		slab = slab[1:]
		gp.part[0] = lazyPart{t, cands}
		gp.lazy = lazyGroup{parts: gp.part[:1:1], src: last, r: r}
		gp.bin = binGroup{v: list.v, items: list.items}
		gp.grp = group{q: q, key: key, outer: outer, first: first, lazy: &gp.lazy, bin: &gp.bin, list: list}
		grp := &gp.grp
		byKey[k] = grp
		groups = append(groups, grp)
	}
	return groups, true
}

// pairFilter is a condition on stored values of the decision source's row
// and at most one other source's row, decided once per pair of rows: per
// row of the other source, a verdict per row of the decision source.
//
// An equality between a column of the other source and one of the
// decision source (H5b's "pr.resource = f.resource") depends on the other
// row's value of its column only: its verdicts are kept per value, so that
// the 230 (node, resource) rows of a batch's one resource share one slice,
// where per row each pair was evaluated (23,000 evaluations a batch of 100
// pods).
type pairFilter struct {
	f        ir.Expr
	other    int // the other source read, or -1
	memo     map[*row][]int8
	otherCol *ir.ColRef // the other source's column of such an equality
	byValue  map[any][]int8
}

// Verdicts of a pairFilter.
const (
	pairUnknown int8 = iota
	pairHolds
	pairFails
)

func newPairFilter(f ir.Expr, last int) (*pairFilter, bool) {
	deps := sourcesRead(f)
	if deps == nil {
		return nil, false // reads an enclosing query
	}
	pf := &pairFilter{f: f, other: -1, memo: map[*row][]int8{}}
	for _, d := range deps {
		switch {
		case d == last:
		case pf.other < 0:
			pf.other = d
		default:
			return nil, false
		}
	}
	if e := colEqOf(f); e != nil && e.r != nil && pf.other >= 0 && e.l.Up == 0 && e.r.Up == 0 {
		switch {
		case e.l.Source == pf.other && e.r.Source == last:
			pf.otherCol = e.l
		case e.r.Source == pf.other && e.l.Source == last:
			pf.otherCol = e.r
		}
		if pf.otherCol != nil {
			pf.byValue = map[any][]int8{}
		}
	}
	return pf, true
}

// comparableValue reports whether a stored value can key a map: the
// types columns hold (NULL, integers, booleans, strings).
func comparableValue(v any) bool {
	switch v.(type) {
	case nil, int64, bool, string:
		return true
	}
	return false
}

// verdicts returns the slice of verdicts (by row of the decision source)
// for the other row of t, made on first use.
func (pf *pairFilter) verdicts(t *tuple, n int) []int8 {
	var other *row
	if pf.other >= 0 {
		other = t.rows[pf.other]
	}
	if pf.otherCol != nil {
		if v, ok := storedValue(t, pf.otherCol); ok && comparableValue(v) {
			vs := pf.byValue[v]
			if vs == nil {
				vs = make([]int8, n)
				pf.byValue[v] = vs
			}
			return vs
		}
	}
	vs := pf.memo[other]
	if vs == nil {
		vs = make([]int8, n)
		pf.memo[other] = vs
	}
	return vs
}

// keep filters the candidates of the prefix t by the extra filters, into
// buf; not decided when one depends on a decision after all.
func (g *grounder) keep(fs []*pairFilter, t *tuple, r *rel, cands, buf []candidate) ([]candidate, bool) {
	verdicts := make([][]int8, len(fs))
	for i, pf := range fs {
		verdicts[i] = pf.verdicts(t, len(r.rows))
	}
	last := len(t.rows) - 1
	saved := t.rows[last]
	defer func() { t.rows[last] = saved }()
	buf = buf[:0]
next:
	for _, c := range cands {
		for i, pf := range fs {
			switch verdicts[i][c.row] {
			case pairFails:
				continue next
			case pairUnknown:
				t.rows[last] = &r.rows[c.row]
				ft := truthT(g.expr(pf.f, scope{t: t}))
				switch {
				case isTrue(ft):
					verdicts[i][c.row] = pairHolds
				case isFalse(ft):
					verdicts[i][c.row] = pairFails
					continue next
				default:
					return nil, false
				}
			}
		}
		buf = append(buf, c)
	}
	return buf, true
}

// binListOf returns the bin of an index list, made once per list: every
// candidate's condition is "its variable = v" for one v.
func (g *grounder) binListOf(cands []candidate) (*binList, bool) {
	if l, ok := g.binLists[&cands[0]]; ok && len(l.items) == len(cands) {
		return l, true
	}
	l := &binList{items: make([]cp.IntVar, len(cands)), cands: cands}
	h := uint64(len(cands))
	for i := range cands {
		c := &cands[i]
		x, v := g.m.Var(int(c.x)), c.v
		if c.guard != nil {
			e, ok := c.guard.(fEq)
			if !ok || e.not {
				return nil, false
			}
			x, v = e.x, e.v
		}
		if i > 0 && v != l.v {
			return nil, false
		}
		l.v, l.items[i] = v, x
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
// members, computed once per list of rows, or false when one is not a
// constant non-negative integer.
func (g *grounder) lazySizes(e *ir.Agg, grp *group) ([]int64, bool) {
	lz, list := grp.lazy, grp.list
	if list == nil || len(lz.parts) != 1 {
		return nil, false
	}
	if s, ok := list.sizes[e]; ok {
		return s, s != nil // computed for the list, not this group alone
	}
	// The sizes are the list's when the argument reads the decision source
	// alone (the pod's request); otherwise they are this group's.
	deps := sourcesRead(e.Arg)
	own := len(deps) == 1 && deps[0] == lz.src
	size := g.sizeOf(e)
	part := lz.parts[0]
	t := &tuple{rows: make([]*row, len(part.prefix.rows)), outer: part.prefix.outer}
	copy(t.rows, part.prefix.rows)
	sizes := make([]int64, len(part.cands))
	for i, c := range part.cands {
		t.rows[lz.src], t.guard = &lz.r.rows[c.row], c.cond(g.m)
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
