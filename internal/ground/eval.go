package ground

import (
	"slices"
	"sort"
	"strconv"

	"github.com/weavesql/weave/cp"
	"github.com/weavesql/weave/internal/ir"
)

// row is one row of a relation under evaluation: its values and the
// condition under which it exists (decision variables may filter it).
type row struct {
	vals  []value
	guard form
}

// rel is an evaluated relation.
type rel struct {
	rows []row
	// constCols[i] reports that column i is constant in every row, so it
	// can be indexed for hash joins.
	constCols []bool
}

// tuple binds one row to each source of a query; outer is the tuple of
// the enclosing query for correlated subqueries.
type tuple struct {
	rows  []*row
	outer *tuple
	guard form
}

// member is a tuple in a group, present under guard.
type member struct {
	t     *tuple
	guard form
}

// group is one group of an aggregate query.
type group struct {
	q       *ir.Query
	key     []value
	members []member
	guard   form // nil for a bin group until asked for (groupGuard)
	outer   *tuple
	bin     *binGroup
	// A group built from an index list (bingroups.go) has its members made
	// on demand (membersOf), its first member ready for column references.
	lazy  *lazyGroup
	first *tuple
	list  *binList
	// pre holds aggregates computed without members (decision_sum.go).
	pre map[*ir.Agg]value
}

// groupGuard is the condition under which the group exists.
func (g *grounder) groupGuard(grp *group) form {
	if grp.guard == nil && grp.bin != nil {
		grp.guard = g.presence(grp.bin)
	}
	if grp.guard == nil {
		// A lazy group of several index lists: some member is present.
		ms := g.membersOf(grp)
		gs := make([]form, len(ms))
		for i, m := range ms {
			gs[i] = m.guard
		}
		grp.guard = or(gs...)
	}
	return grp.guard
}

// scope is where an expression is evaluated: a tuple, or a group.
type scope struct {
	t   *tuple
	grp *group
}

type indexKey struct {
	r   *rel
	col int
}

// baseRel turns a fetched table or view into a relation whose decision
// cells are solver variables.
func (g *grounder) baseRel(s *ir.Source) *rel {
	name := s.Name()
	if r, ok := g.base[name]; ok {
		return r
	}
	data := g.relation(name)
	if data == nil {
		g.fail("relation %s was not read", name)
	}
	r := &rel{rows: make([]row, len(data.Rows)), constCols: make([]bool, len(data.Columns))}
	var vars [][]cp.IntVar
	if s.Kind == ir.FromTable {
		vars = g.vars[s.Table]
	}
	for ci := range data.Columns {
		r.constCols[ci] = s.Kind != ir.FromTable || !s.Table.Columns[ci].Variable
	}
	for ri, d := range data.Rows {
		vals := make([]value, len(d))
		for ci, c := range d {
			if r.constCols[ci] {
				vals[ci] = constVal(c)
				continue
			}
			vals[ci] = g.varValue(vars[ri][ci], s.Table.Columns[ci].Type)
		}
		r.rows[ri] = row{vals: vals, guard: fTrue}
	}
	if g.opts.Explain {
		ref := RowRef{Table: s.Table}
		if s.Kind == ir.FromInput {
			ref = RowRef{Table: PushdownTable(s.View), View: s.View}
		}
		for ri := range r.rows {
			ref.Row = ri
			g.origin[&r.rows[ri]] = ref
		}
	}
	g.base[name] = r
	return r
}

// varValue is the symbolic value of a decision variable.
func (g *grounder) varValue(x cp.IntVar, t ir.Type) value {
	null := fFalse
	if n, ok := g.nullOf[x]; ok {
		null = g.eq(x, n)
	}
	switch t {
	case ir.String:
		return value{k: kStr, sym: &sym{sv: x}, null: null}
	case ir.Bool:
		return value{k: kBool, sym: &sym{t: g.eq(x, 1), f: g.eq(x, 0)}, null: null}
	}
	return value{k: kInt, sym: &sym{lin: varLin(x)}, null: null}
}

// source evaluates one source of a query.
func (g *grounder) source(s *ir.Source, outer *tuple) *rel {
	if s.Kind == ir.FromQuery {
		return g.eval(s.Query, nil)
	}
	return g.baseRel(s)
}

// eval evaluates a query to a relation. Uncorrelated queries are evaluated
// once per solve.
func (g *grounder) eval(q *ir.Query, outer *tuple) *rel {
	if !q.Correlated {
		if r, ok := g.rels[q]; ok {
			return r
		}
		outer = nil
	}
	// A correlated query is evaluated once per combination of the rows of
	// the enclosing query it reads: "pod in (select ... where g.key =
	// a.key)" tested for every pod reads one row, a.
	key, keyed := g.outerKey(q, outer)
	if keyed {
		if r, ok := g.corr[key]; ok {
			return r
		}
	}
	r := g.project(q, outer)
	if !q.Correlated {
		g.rels[q] = r
	}
	if keyed {
		g.corr[key] = r
	}
	return r
}

// corrKey identifies a correlated query's result: the query, and the rows
// of the enclosing query it reads.
type corrKey struct {
	q    *ir.Query
	rows [maxKeySources]*row
}

// corrDep is a source of an enclosing query that a correlated query reads:
// up 1 is the query around it, 2 the one around that, and so on.
type corrDep struct{ up, src int }

// outerKey returns the key of a correlated query's result for the
// enclosing tuple, or false when it is not correlated or reads more than
// maxKeySources sources. The sources may belong to any enclosing query:
// "(select count(*) from pod q where q.node in (select ... where l.zone =
// s.zone))" reads only s, two levels out, and is evaluated once per s, not
// once per (s, q).
func (g *grounder) outerKey(q *ir.Query, outer *tuple) (corrKey, bool) {
	if !q.Correlated || outer == nil {
		return corrKey{}, false
	}
	deps, ok := g.corrDeps[q]
	if !ok {
		seen := map[corrDep]bool{}
		refsOf(&ir.Exists{Sub: q}, func(level, src int) {
			seen[corrDep{up: level + 1, src: src}] = true
		})
		for d := range seen {
			deps = append(deps, d)
		}
		sort.Slice(deps, func(i, j int) bool {
			if deps[i].up != deps[j].up {
				return deps[i].up < deps[j].up
			}
			return deps[i].src < deps[j].src
		})
		if len(deps) > maxKeySources || len(deps) == 0 {
			deps = nil
		}
		g.corrDeps[q] = deps
	}
	if deps == nil {
		return corrKey{}, false
	}
	k := corrKey{q: q}
	for i, d := range deps {
		t := outer
		for up := d.up; up > 1 && t != nil; up-- {
			t = t.outer
		}
		if t == nil || d.src >= len(t.rows) || t.rows[d.src] == nil {
			return corrKey{}, false
		}
		k.rows[i] = t.rows[d.src]
	}
	return k, true
}

// maxSource returns the highest source index of q that e reads directly
// (-1 when it reads none, only constants and enclosing queries).
func maxSource(e ir.Expr) int {
	m := -1
	ir.Inspect(e, func(x ir.Expr) bool {
		if c, ok := x.(*ir.ColRef); ok && c.Up == 0 && c.Source > m {
			m = c.Source
		}
		return true
	})
	// Subqueries refer to this query with Up >= 1; count those too.
	depth := 0
	var walkQ func(q *ir.Query)
	walkQ = func(q *ir.Query) {
		depth++
		ir.InspectQuery(q, func(x ir.Expr) bool {
			switch x := x.(type) {
			case *ir.ColRef:
				if x.Up == depth && x.Source > m {
					m = x.Source
				}
			}
			return true
		})
		depth--
	}
	ir.Inspect(e, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.In:
			if x.Sub != nil {
				walkQ(x.Sub)
			}
		case *ir.Exists:
			walkQ(x.Sub)
		case *ir.Scalar:
			walkQ(x.Sub)
		}
		return true
	})
	return m
}

// join enumerates the tuples of q's from clause that its filters may keep,
// each with the condition under which it exists. Constant equality filters
// become hash lookups; an equality between a decision column and an input
// column is enumerated over the variable's domain.
func (g *grounder) join(q *ir.Query, outer *tuple) []*tuple {
	return g.joinPruned(q, outer, nil)
}

// skipRow reports that row ri of a source need not be paired with anything.
type skipRow func(r *rel, ri int) bool

// joinPruned is join, skipping the rows of source i for which skip[i]
// holds (skip and its entries may be nil): a hard view whose check holds
// for a row whatever it is paired with (the node is ready) need not pair
// that row at all (the pairs would post nothing).
func (g *grounder) joinPruned(q *ir.Query, outer *tuple, skip []skipRow) []*tuple {
	n := len(q.From)
	byLevel := make([][]ir.Expr, n)
	start := &tuple{rows: make([]*row, n), outer: outer, guard: fTrue}
	for _, f := range q.Filters {
		lvl := maxSource(f)
		if lvl < 0 {
			t := truthT(g.expr(f, scope{t: start}))
			start.guard = and(start.guard, t)
			continue
		}
		byLevel[lvl] = append(byLevel[lvl], f)
	}
	if isFalse(start.guard) {
		return nil
	}
	// An inner join with an empty source is empty: find out before pairing
	// the others (N1's spare counts are often empty; pods × nodes are not).
	for _, s := range q.From {
		if len(g.source(s, outer).rows) == 0 {
			return nil
		}
	}
	tuples := []*tuple{start}
	for i, s := range q.From {
		r := g.source(s, outer)
		lookup := g.planLookup(q, i, r, byLevel[i])
		if i < n-1 {
			// A filter over decision columns rarely prunes (its truth is a
			// condition, not false) and costs a form per tuple: test it
			// after the constant filters of the later sources, on the
			// tuples that pass them. A lookup's filter stays: it finds the
			// rows.
			keep := byLevel[i][:0:0]
			for _, f := range byLevel[i] {
				if f != lookup.used && f.Var() {
					byLevel[n-1] = append(byLevel[n-1], f)
					continue
				}
				keep = append(keep, f)
			}
			byLevel[i] = keep
		}
		var skipI skipRow
		if i < len(skip) {
			skipI = skip[i]
		}
		eqs := make([]*colEq, len(byLevel[i]))
		for k, f := range byLevel[i] {
			eqs[k] = colEqOf(f)
		}
		next := make([]*tuple, 0, len(tuples))
		// A tuple a stored-value filter rejects before any expression
		// sees it is used again for the next candidate (a third of a
		// placement batch's join tuples).
		var spare *tuple
		for ti, t := range tuples {
			cands := lookup.candidates(g, t, r, skipI)
			if ti == 0 && len(cands) > 1 {
				// Rows of a decision join pair with many candidates each
				// (a pod with every node): size for that at once.
				// Capped: filters may reject most of them.
				next = slices.Grow(next, min(len(tuples)*len(cands), 1<<16))
			}
			for _, c := range cands {
				if skipI != nil && skipI(r, int(c.row)) {
					continue
				}
				rw := &r.rows[c.row]
				guard := and2(and2(t.guard, rw.guard), c.cond(g.m))
				if isFalse(guard) {
					continue
				}
				nt := spare
				if spare = nil; nt == nil {
					nt = g.newTuple(n)
				}
				nt.outer = outer
				copy(nt.rows, t.rows)
				nt.rows[i] = rw
				seen := false // an expression was evaluated on nt
				for k, f := range byLevel[i] {
					if f == lookup.used {
						continue
					}
					if eqs[k] != nil {
						if holds, decided := eqs[k].test(nt); decided {
							if !holds {
								if !seen {
									spare = nt // nothing refers to it
								}
								guard = fFalse
								break
							}
							continue
						}
					}
					seen = true
					ft := truthT(g.expr(f, scope{t: nt}))
					if guard = and2(guard, ft); isFalse(guard) {
						break
					}
				}
				if isFalse(guard) {
					continue
				}
				nt.guard = guard
				next = append(next, nt)
			}
		}
		tuples = next
		if len(tuples) == 0 {
			break
		}
	}
	return tuples
}

// colEq is a join filter "a = b" between two columns, or a column and a
// literal. When both sides hold stored values it is decided by comparing
// them, without building symbolic values: joins test such filters on
// every candidate row (a node's labels against a term's topology key).
type colEq struct {
	l, r *ir.ColRef
	c    any // the literal, when r is nil
}

func colEqOf(f ir.Expr) *colEq {
	b, ok := f.(*ir.Binary)
	if !ok || b.Op != "=" {
		return nil
	}
	l, lok := b.L.(*ir.ColRef)
	r, rok := b.R.(*ir.ColRef)
	switch {
	case lok && rok:
		return &colEq{l: l, r: r}
	case lok:
		if c, ok := b.R.(*ir.Const); ok {
			return &colEq{l: l, c: c.Value}
		}
	case rok:
		if c, ok := b.L.(*ir.Const); ok {
			return &colEq{l: r, c: c.Value}
		}
	}
	return nil
}

// test decides the filter on t; decided is false when a side is a
// decision (then the filter is evaluated symbolically).
func (e *colEq) test(t *tuple) (holds, decided bool) {
	l, ok := storedValue(t, e.l)
	if !ok {
		return false, false
	}
	r := e.c
	if e.r != nil {
		if r, ok = storedValue(t, e.r); !ok {
			return false, false
		}
	}
	if l == nil || r == nil {
		return false, true // NULL = x is unknown: the row is filtered out
	}
	return l == r, true
}

// storedValue is the stored value of a column of t's rows (or of an
// enclosing tuple's), false when the cell is a decision or not bound.
func storedValue(t *tuple, c *ir.ColRef) (any, bool) {
	for i := 0; i < c.Up && t != nil; i++ {
		t = t.outer
	}
	if t == nil || c.Source >= len(t.rows) || t.rows[c.Source] == nil {
		return nil, false
	}
	v := t.rows[c.Source].vals[c.Col]
	if v.k != kConst {
		return nil, false
	}
	return v.c, true
}

// newTuple allocates a tuple of n rows from a chunk: joins make many.
func (g *grounder) newTuple(n int) *tuple {
	if len(g.tupleBuf) == 0 {
		g.tupleBuf = make([]tuple, 1024)
	}
	t := &g.tupleBuf[0]
	g.tupleBuf = g.tupleBuf[1:]
	if len(g.rowBuf) < n {
		g.rowBuf = make([]*row, max(4096, n))
	}
	t.rows = g.rowBuf[:n:n]
	g.rowBuf = g.rowBuf[n:]
	return t
}

// candidate is a row of the next source and the extra condition under
// which it joins: guard, or when guard is nil "x = v" (the index of a
// decision column lists rows × values; the form is made when used).
//
// An index of a decision column holds one per (row, value) pair: 100
// pods × 250 nodes per placement batch. So it is kept small: x is the
// variable's index in the model (32 bytes a candidate, was 48).
type candidate struct {
	row   int32
	x     int32
	v     int64
	guard form
}

// cond is the condition under which the candidate joins.
func (c *candidate) cond(m *cp.Model) form {
	if c.guard != nil {
		return c.guard
	}
	return fEq{x: m.Var(int(c.x)), v: c.v}
}

// lookupPlan says how to find the rows of source i that join a tuple.
type lookupPlan struct {
	used  ir.Expr // the filter the lookup enforces exactly (skipped later)
	col   int     // indexed column of source i
	probe ir.Expr // the other side of the equality
	index map[any][]candidate
	// varIndex indexes a decision column by the values its variables may
	// take (for a constant probe).
	varIndex map[int64][]candidate
	all      []candidate // every row, when there is no index
	// byCode caches index lookups by string code for the enumeration of
	// a string variable's domain (codes are dense).
	byCode [][]candidate
	coded  []bool
}

// candidates returns the rows of r that may join t; with skip, the
// enumeration of a decision variable's domain leaves out the rows skip
// holds for before making their conditions.
func (p *lookupPlan) candidates(g *grounder, t *tuple, r *rel, skip skipRow) []candidate {
	if p.index == nil && p.varIndex == nil {
		if p.all == nil {
			p.all = make([]candidate, len(r.rows))
			for i := range r.rows {
				p.all[i] = candidate{row: int32(i), guard: fTrue}
			}
		}
		return p.all
	}
	v := g.expr(p.probe, scope{t: t})
	if p.varIndex != nil {
		// A constant probe against a decision column: the rows whose
		// variable may take the value, each under "variable = value".
		if v.k != kConst {
			return p.scan(g, t, r, v)
		}
		switch c := v.c.(type) {
		case int64:
			return p.varIndex[c]
		case string:
			if code := g.dict.lookup(c); code > 0 {
				return p.varIndex[code]
			}
		case bool:
			if c {
				return p.varIndex[1]
			}
			return p.varIndex[0]
		}
		return nil
	}
	if v.k == kConst {
		if v.c == nil {
			return nil
		}
		return p.index[v.c]
	}
	// A decision variable: each value of its domain selects the rows with
	// that key, under "variable = value".
	var x cp.IntVar
	switch v.k {
	case kStr:
		x = v.sv
	case kInt:
		var c, k int64
		var ok bool
		if x, c, k, ok = v.lin.single(); !ok || c != 1 || k != 0 {
			return p.scan(g, t, r, v)
		}
	default:
		return p.scan(g, t, r, v)
	}
	dom := g.m.VarDomain(x.Index())
	if dom.Size() > int64(len(r.rows))*4 {
		return p.scan(g, t, r, v)
	}
	out := make([]candidate, 0, dom.Size())
	for _, d := range dom.Values() {
		var rows []candidate
		if v.k == kStr {
			if d == 0 {
				continue // NULL matches nothing
			}
			rows = p.rowsForCode(g, d)
		} else {
			rows = p.index[d]
		}
		if len(rows) == 0 {
			continue
		}
		var l form
		for _, c := range rows {
			if skip != nil && skip(r, int(c.row)) {
				continue
			}
			if l == nil {
				l = g.eq(x, d)
			}
			out = append(out, candidate{row: c.row, guard: l})
		}
	}
	return out
}

// rowsForCode returns the indexed rows whose key is the string with code d.
func (p *lookupPlan) rowsForCode(g *grounder, d int64) []candidate {
	for int64(len(p.byCode)) <= d {
		p.byCode = append(p.byCode, nil)
		p.coded = append(p.coded, false)
	}
	if !p.coded[d] {
		p.byCode[d], p.coded[d] = p.index[g.dict.str[d]], true
	}
	return p.byCode[d]
}

// scan is the fallback: every row, with the equality as the condition.
func (p *lookupPlan) scan(g *grounder, t *tuple, r *rel, v value) []candidate {
	out := make([]candidate, 0, len(r.rows))
	for i := range r.rows {
		eq := g.compare("=", v, r.rows[i].vals[p.col])
		tf := truthT(eq)
		if !isFalse(tf) {
			out = append(out, candidate{row: int32(i), guard: tf})
		}
	}
	return out
}

// planLookup picks an equality filter "src_i.col = expr over earlier
// sources" whose column is constant, to join by hash lookup.
func (g *grounder) planLookup(q *ir.Query, i int, r *rel, filters []ir.Expr) *lookupPlan {
	for _, f := range filters {
		b, ok := f.(*ir.Binary)
		if !ok || b.Op != "=" {
			continue
		}
		for _, side := range [][2]ir.Expr{{b.L, b.R}, {b.R, b.L}} {
			c, ok := side[0].(*ir.ColRef)
			if !ok || c.Up != 0 || c.Source != i {
				continue
			}
			if maxSource(side[1]) >= i {
				continue
			}
			if _, isSub := side[1].(*ir.Scalar); isSub {
				continue
			}
			if r.constCols[c.Col] {
				return &lookupPlan{used: f, col: c.Col, probe: side[1], index: g.indexOf(r, c.Col)}
			}
			if !side[1].Var() {
				if vi := g.varIndexOf(r, c.Col); vi != nil {
					return &lookupPlan{used: f, col: c.Col, probe: side[1], varIndex: vi}
				}
			}
		}
	}
	return &lookupPlan{}
}

// varIndexOf indexes a column of decision variables by the values they
// may take: value → the rows whose variable may equal it, each with the
// form "variable = value". Nil when a cell is not a plain variable.
func (g *grounder) varIndexOf(r *rel, col int) map[int64][]candidate {
	k := indexKey{r, col}
	if ix, ok := g.varIndex[k]; ok {
		return ix
	}
	// Two passes over rows × values: count each value's candidates, then
	// fill one slab cut into exact lists (appending grew every list from
	// nothing: ~8 copies per list and twice the memory for the collector
	// to scan). Values are counted in a slice while they are small and
	// dense (string codes, node numbers), and in a map otherwise.
	type entry struct {
		x        cp.IntVar
		null     int64
		nullable bool
		fixed    bool
		dom      cp.Domain
	}
	entries := make([]entry, len(r.rows))
	var dense []int32
	sparse := map[int64]int32{}
	limit := int64(max(len(g.dict.str), 4096))
	total := 0
	for i, rw := range r.rows {
		v := rw.vals[col]
		var x cp.IntVar
		switch v.k {
		case kStr:
			x = v.sv
		case kInt:
			var c, off int64
			var ok bool
			if x, c, off, ok = v.lin.single(); !ok || c != 1 || off != 0 {
				g.varIndex[k] = nil
				return nil
			}
		default:
			g.varIndex[k] = nil
			return nil
		}
		n, nullable := g.nullOf[x]
		dom := g.m.VarDomain(x.Index())
		// Dense only up to the string codes in use (or a few thousand
		// values): an integer column over a wide range stays in the map.
		if dense == nil && dom.Min() >= 0 && dom.Max() < limit {
			dense = make([]int32, min(limit, max(dom.Max()+1, int64(len(g.dict.str)))))
		}
		entries[i] = entry{x: x, null: n, nullable: nullable, fixed: dom.Size() == 1, dom: dom}
		eachValue(dom, func(d int64) {
			if nullable && d == n {
				return // NULL matches nothing
			}
			total++
			if d >= 0 && d < int64(len(dense)) {
				dense[d]++
			} else {
				sparse[d]++
			}
		})
	}
	slab := make([]candidate, total)
	denseLists := make([][]candidate, len(dense))
	sparseLists := make(map[int64][]candidate, len(sparse))
	at := 0
	for d, n := range dense {
		denseLists[d] = slab[at : at : at+int(n)]
		at += int(n)
	}
	for d, n := range sparse {
		sparseLists[d] = slab[at : at : at+int(n)]
		at += int(n)
	}
	for i := range entries {
		e := &entries[i]
		eachValue(e.dom, func(d int64) {
			if e.nullable && d == e.null {
				return
			}
			c := candidate{row: int32(i), x: int32(e.x.Index()), v: d}
			if e.fixed {
				c = candidate{row: int32(i), guard: fTrue}
			}
			if d >= 0 && d < int64(len(denseLists)) {
				denseLists[d] = append(denseLists[d], c)
			} else {
				sparseLists[d] = append(sparseLists[d], c)
			}
		})
	}
	ix := sparseLists
	for d, cs := range denseLists {
		if len(cs) > 0 {
			ix[int64(d)] = cs
		}
	}
	g.varIndex[k] = ix
	return ix
}

// eachValue calls f with each value of dom in increasing order.
func eachValue(dom cp.Domain, f func(int64)) {
	for i := range dom.NumIntervals() {
		lo, hi := dom.Interval(i)
		for d := lo; ; d++ {
			f(d)
			if d == hi {
				break
			}
		}
	}
}

func (g *grounder) indexOf(r *rel, col int) map[any][]candidate {
	k := indexKey{r, col}
	if ix, ok := g.index[k]; ok {
		return ix
	}
	ix := map[any][]candidate{}
	for i, rw := range r.rows {
		if c := rw.vals[col].c; c != nil {
			ix[c] = append(ix[c], candidate{row: int32(i), guard: fTrue})
		}
	}
	g.index[k] = ix
	return ix
}

// project computes q's output rows.
func (g *grounder) project(q *ir.Query, outer *tuple) *rel {
	out := &rel{constCols: make([]bool, len(q.Select))}
	// The rows' values are cut from one slab sized for every input tuple
	// or group (a row each): one allocation, not one per row.
	var slab []value
	emit := func(sc scope, guard form) {
		if len(slab) < len(q.Select) {
			// HAVING may drop most groups: the slab grows in chunks.
			slab = make([]value, 64*len(q.Select))
		}
		vals := slab[:len(q.Select):len(q.Select)]
		slab = slab[len(q.Select):]
		for i, o := range q.Select {
			vals[i] = g.expr(o.Expr, sc)
		}
		out.rows = append(out.rows, row{vals: vals, guard: guard})
	}
	// Explain mode: where each row comes from (recordLineage).
	var lins []*rowSource
	if !q.Aggregate {
		tuples := g.join(q, outer)
		out.rows = make([]row, 0, len(tuples))
		slab = make([]value, len(tuples)*len(q.Select))
		for _, t := range tuples {
			emit(scope{t: t}, t.guard)
			if g.opts.Explain {
				lins = append(lins, &rowSource{t: t})
			}
		}
	} else {
		groups := g.groupsOf(q, outer)
		if len(q.Having) == 0 {
			out.rows = make([]row, 0, len(groups))
			slab = make([]value, len(groups)*len(q.Select))
		}
		for _, grp := range groups {
			guard := g.groupGuard(grp)
			for _, h := range q.Having {
				ht := truthT(g.expr(h, scope{grp: grp}))
				guard = and(guard, ht)
			}
			if isFalse(guard) {
				continue
			}
			emit(scope{grp: grp}, guard)
			if g.opts.Explain {
				lins = append(lins, &rowSource{grp: grp})
			}
			// A value is read only where its row exists: a sum over a
			// bin group, NULL when the bin is empty, is never NULL there.
			for i, v := range out.rows[len(out.rows)-1].vals {
				out.rows[len(out.rows)-1].vals[i] = notNullUnder(v, guard)
			}
		}
	}
	if q.Distinct {
		out.rows, lins = g.distinct(out.rows, lins)
	}
	if g.opts.Explain {
		g.recordLineage(out, lins)
	}
	for i := range out.constCols {
		out.constCols[i] = true
		for _, rw := range out.rows {
			if rw.vals[i].k != kConst {
				out.constCols[i] = false
				break
			}
		}
	}
	return out
}

// distinct merges rows with equal constant values; the merged row exists
// when any of them does. In explain mode lins are where the rows come
// from, merged alike.
func (g *grounder) distinct(rows []row, lins []*rowSource) ([]row, []*rowSource) {
	seen := map[string]int{}
	var out []row
	var outLins []*rowSource
	for ri, r := range rows {
		var l *rowSource
		if lins != nil {
			l = lins[ri]
		}
		key, ok := constKey(r.vals)
		if !ok {
			out = append(out, r)
			outLins = append(outLins, l)
			continue
		}
		if i, dup := seen[key]; dup {
			out[i].guard = or(out[i].guard, r.guard)
			if lins != nil {
				outLins[i] = mergeSources(outLins[i], l)
			}
			continue
		}
		seen[key] = len(out)
		out = append(out, r)
		outLins = append(outLins, l)
	}
	if lins == nil {
		outLins = nil
	}
	return out, outLins
}

func constKey(vals []value) (string, bool) {
	// Built on the stack (a group's key of a node's name and a few
	// numbers fits), so that only the string is allocated.
	var buf [128]byte
	b := buf[:0]
	for _, v := range vals {
		if v.k != kConst {
			return "", false
		}
		switch c := v.c.(type) {
		case nil:
			b = append(b, 'n')
		case int64:
			b = append(b, 'i')
			b = strconv.AppendInt(b, c, 10)
		case string:
			b = append(b, 's')
			b = strconv.AppendInt(b, int64(len(c)), 10)
			b = append(b, ':')
			b = append(b, c...)
		case bool:
			if c {
				b = append(b, 'T')
			} else {
				b = append(b, 'F')
			}
		}
		b = append(b, 0)
	}
	return string(b), true
}

// groupsOf returns the groups of an aggregate query.
func (g *grounder) groupsOf(q *ir.Query, outer *tuple) []*group {
	if grps := g.decisionSums(q, outer); grps != nil {
		return grps
	}
	if grps, ok := g.binGroups(q, outer); ok {
		return grps
	}
	return g.groups(q, g.join(q, outer), outer)
}

// groups partitions tuples by q's group by expressions. A key over a
// decision variable puts the tuple in one group per value of the variable,
// under "variable = value".
func (g *grounder) groups(q *ir.Query, tuples []*tuple, outer *tuple) []*group {
	if len(q.GroupBy) == 0 {
		grp := &group{q: q, guard: fTrue, outer: outer}
		for _, t := range tuples {
			grp.members = append(grp.members, member{t: t, guard: t.guard})
		}
		grp.bin = g.binOf(grp.members)
		return []*group{grp}
	}
	var order []*group
	// Groups by their constant key: by the value of a single key, or by
	// the string of several.
	byConst := map[any]*group{}
	byKey := map[string]*group{}
	find := func(key []value) *group {
		var grp *group
		var k string
		if len(key) == 1 {
			grp = byConst[key[0].c]
		} else {
			k, _ = constKey(key)
			grp = byKey[k]
		}
		if grp == nil {
			grp = &group{q: q, key: append([]value(nil), key...), outer: outer}
			if len(key) == 1 {
				byConst[key[0].c] = grp
			} else {
				byKey[k] = grp
			}
			order = append(order, grp)
		}
		return grp
	}
	// Keys over the columns of a few sources (the node's, the pod's
	// group's) are classified once per row of each source: a tuple's group
	// is then found by its rows' classes, without evaluating its keys.
	kp := newKeyPlan(q)
	var byClass map[[maxKeySources]int32]*group
	if kp != nil {
		byClass = map[[maxKeySources]int32]*group{}
	}
	keyBuf := make([]value, len(q.GroupBy))
	type partial struct {
		key   []value
		guard form
	}
	for _, t := range tuples {
		var cls [maxKeySources]int32
		classed := false
		if kp != nil {
			if cls, classed = kp.classes(g, t); classed {
				if grp := byClass[cls]; grp != nil {
					grp.members = append(grp.members, member{t: t, guard: t.guard})
					continue
				}
			}
		}
		// Every key constant in this tuple: no enumeration.
		allConst := true
		for i, e := range q.GroupBy {
			keyBuf[i] = g.expr(e, scope{t: t})
			if keyBuf[i].k != kConst {
				allConst = false
				break
			}
		}
		if allConst {
			grp := find(keyBuf)
			grp.members = append(grp.members, member{t: t, guard: t.guard})
			if classed {
				byClass[cls] = grp
			}
			continue
		}
		parts := []partial{{guard: t.guard}}
		for _, e := range q.GroupBy {
			v := g.expr(e, scope{t: t})
			var next []partial
			for _, p := range parts {
				for _, alt := range g.alternatives(v) {
					guard := and(p.guard, alt.guard)
					if isFalse(guard) {
						continue
					}
					key := append(append([]value(nil), p.key...), alt.v)
					next = append(next, partial{key: key, guard: guard})
				}
			}
			parts = next
		}
		for _, p := range parts {
			grp := find(p.key)
			grp.members = append(grp.members, member{t: t, guard: p.guard})
		}
	}
	for _, grp := range order {
		if grp.bin = g.binOf(grp.members); grp.bin != nil {
			continue // guard made on demand: "count ≥ 1"
		}
		gs := make([]form, len(grp.members))
		for i, m := range grp.members {
			gs[i] = m.guard
		}
		grp.guard = or(gs...)
	}
	return order
}

// maxKeySources is the most sources whose rows a keyPlan classifies.
const maxKeySources = 3

// keyPlan classifies the rows of the sources that group keys read: two
// rows of a source are in one class when the keys over that source have
// the same constant values on them. Tuples whose rows are in the same
// classes belong to the same group.
type keyPlan struct {
	srcs  []int       // the sources the keys read
	exprs [][]ir.Expr // per source, the keys that read it
	ids   []map[*row]int32
	names []map[string]int32
	buf   []value
}

// newKeyPlan plans the classification of q's group keys, or returns nil
// when a key reads several sources or an enclosing query, or the keys
// read more than maxKeySources sources.
func newKeyPlan(q *ir.Query) *keyPlan {
	kp := &keyPlan{}
	at := map[int]int{}
	for _, e := range q.GroupBy {
		deps := sourcesRead(e)
		switch {
		case deps == nil || len(deps) > 1: // an enclosing query, or several sources
			return nil
		case len(deps) == 0: // a constant: the same in every tuple
			continue
		}
		i, ok := at[deps[0]]
		if !ok {
			i = len(kp.srcs)
			at[deps[0]] = i
			kp.srcs = append(kp.srcs, deps[0])
			kp.exprs = append(kp.exprs, nil)
		}
		kp.exprs[i] = append(kp.exprs[i], e)
	}
	if len(kp.srcs) == 0 || len(kp.srcs) > maxKeySources {
		return nil
	}
	for range kp.srcs {
		kp.ids = append(kp.ids, map[*row]int32{})
		kp.names = append(kp.names, map[string]int32{})
	}
	return kp
}

// classes returns the classes of t's rows; false when a key is not
// constant on one of them (a decision column: enumerated instead).
func (kp *keyPlan) classes(g *grounder, t *tuple) (cls [maxKeySources]int32, ok bool) {
	for i, src := range kp.srcs {
		rw := t.rows[src]
		id, seen := kp.ids[i][rw]
		if !seen {
			id = kp.classify(g, i, t)
			kp.ids[i][rw] = id
		}
		if id < 0 {
			return cls, false
		}
		cls[i] = id
	}
	return cls, true
}

// classify evaluates the keys over source i on t's row of it: the class
// of equal constant values, or -1 when one is not constant.
func (kp *keyPlan) classify(g *grounder, i int, t *tuple) int32 {
	kp.buf = kp.buf[:0]
	for _, e := range kp.exprs[i] {
		v := g.expr(e, scope{t: t})
		if v.k != kConst {
			return -1
		}
		kp.buf = append(kp.buf, v)
	}
	k, _ := constKey(kp.buf)
	id, ok := kp.names[i][k]
	if !ok {
		id = int32(len(kp.names[i]))
		kp.names[i][k] = id
	}
	return id
}

type alternative struct {
	v     value
	guard form
}

// alternatives enumerates the constant values a group key may take.
func (g *grounder) alternatives(v value) []alternative {
	switch v.k {
	case kConst:
		return []alternative{{v, fTrue}}
	case kBool:
		t, f := truth(v)
		return []alternative{{constVal(true), t}, {constVal(false), f}, {constVal(nil), v.null}}
	case kStr:
		var out []alternative
		for _, d := range g.m.VarDomain(v.sv.Index()).Values() {
			var c any
			if d != 0 {
				c = g.dict.str[d]
			}
			out = append(out, alternative{constVal(c), g.eq(v.sv, d)})
		}
		return out
	case kInt:
		x, c, k, ok := v.lin.single()
		if ok && c == 1 && k == 0 {
			var out []alternative
			n, nullable := g.nullOf[x]
			for _, d := range g.m.VarDomain(x.Index()).Values() {
				var cv any = d
				if nullable && d == n {
					cv = nil
				}
				out = append(out, alternative{constVal(cv), g.eq(x, d)})
			}
			return out
		}
	}
	g.fail("grouping by a computed expression over decision columns is not supported; group by the column itself")
	return nil
}
