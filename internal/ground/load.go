package ground

import (
	"slices"
	"sort"

	"github.com/weavesql/weave/cp"
)

// Loads. A group whose members each exist exactly when their own decision
// variable takes one common value — "group by node" over "join node on
// pod.node = node.name": pod p is in node n's group iff x_p = n — is a bin
// of a bin-packing problem. An aggregate of constant non-negative sizes
// over it is the bin's load:
//
//	sum(pod.cpu) over node n's group   →   L_n = Σ cpu_p·[x_p = n]
//
// Loads over the same items and sizes, for different bins, form one
// bin-packing constraint (per resource), which the solver propagates as a
// whole (Shaw 2004) without one literal per (pod, node) pair. The same
// load is shared by every view that computes it (capacity and load
// balancing read the same L_n), and presence of the group is "count ≥ 1".

// binGroup is what makes a group a bin: its value and its items, in
// member order.
type binGroup struct {
	v     int64
	items []cp.IntVar
	count cp.IntVar // number of members present, made on first use
	has   bool
	pres  form // count >= 1, made once: every view over the group asks for it
}

// binOf recognises a bin group: every member guard is "x = v" for the
// same v and distinct variables x.
func (g *grounder) binOf(members []member) *binGroup {
	if len(members) == 0 || g.opts.NoLoads {
		return nil
	}
	b := &binGroup{items: make([]cp.IntVar, len(members))}
	// Distinct variables, checked with a stamp per variable index rather
	// than a map per group.
	g.stamp++
	for i, m := range members {
		e, ok := m.guard.(fEq)
		if !ok || e.not || i > 0 && e.v != b.v {
			return nil
		}
		ix := e.x.Index()
		for len(g.marks) <= ix {
			g.marks = append(g.marks, 0)
		}
		if g.marks[ix] == g.stamp {
			return nil
		}
		g.marks[ix] = g.stamp
		b.v = e.v
		b.items[i] = e.x
	}
	return b
}

// loadSet is the loads over one set of items with one set of sizes, by bin.
type loadSet struct {
	items []cp.IntVar
	sizes []int64
	bins  map[int64]cp.IntVar
	order []int64
	// last is the item order of the latest caller: bins of one join list
	// their items in the same order, so equal slices find the set without
	// hashing (see loadFor).
	last      []cp.IntVar
	lastSizes []int64
	total     int64 // the sum of sizes, -1 until computed
	itemsID   int   // the same for load sets over the same items
}

// binKey identifies a bin: its items (a loadSet's itemsID) and value. All
// loads of one bin are 0 when no item takes the value.
type binKey struct {
	items int
	v     int64
}

// zeroWhenAbsent reports whether pres is "count ≥ 1" over a bin and every
// variable of e is a load of that bin: when the bin is empty, e is its
// constant part.
func (g *grounder) zeroWhenAbsent(e lin, pres form) bool {
	p, ok := pres.(fLin)
	if !ok || p.lo != 1 || p.hi != maxInt || len(e.terms) == 0 {
		return false
	}
	c, k, off, ok := p.e.single()
	if !ok || k != 1 || off != 0 {
		return false
	}
	key, ok := g.loadVars[c]
	if !ok {
		return false
	}
	for _, t := range e.terms {
		if kt, ok := g.loadVars[t.v]; !ok || kt != key {
			return false
		}
	}
	return true
}

// recentLoads is how many load sets loadFor compares before hashing: a
// view asks for a few (cpu, memory, count) per bin, bin after bin.
const recentLoads = 8

// loadFor returns the variable L = Σ sizes_i·[items_i = v], shared by
// every caller asking for the same items, sizes and bin.
func (g *grounder) loadFor(v int64, items []cp.IntVar, sizes []int64) cp.IntVar {
	for _, ls := range g.recent {
		if slices.Equal(ls.last, items) && slices.Equal(ls.lastSizes, sizes) {
			return g.loadIn(ls, v)
		}
	}
	// Find the load set by a hash of (item, size) pairs, order-free, then
	// compare exactly: no string key per bin.
	var h uint64
	for i, x := range items {
		z := uint64(x.Index())*0x9E3779B97F4A7C15 ^ uint64(sizes[i])*0xC2B2AE3D27D4EB4F
		z ^= z >> 29
		h += z * 0xBF58476D1CE4E5B9
	}
	var ls *loadSet
	for _, cand := range g.loads[h] {
		if sameItems(cand, items, sizes) {
			ls = cand
			break
		}
	}
	if ls == nil {
		idx := make([]int, len(items))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return items[idx[a]].Index() < items[idx[b]].Index() })
		sorted := make([]cp.IntVar, len(items))
		sz := make([]int64, len(items))
		for k, i := range idx {
			sorted[k], sz[k] = items[i], sizes[i]
		}
		ls = &loadSet{items: sorted, sizes: sz, bins: map[int64]cp.IntVar{}, total: -1, itemsID: -1}
		for _, o := range g.loadOrder {
			if slices.Equal(o.items, sorted) {
				ls.itemsID = o.itemsID
				break
			}
		}
		if ls.itemsID < 0 {
			ls.itemsID = g.itemSets
			g.itemSets++
		}
		g.loads[h] = append(g.loads[h], ls)
		g.loadOrder = append(g.loadOrder, ls)
	}
	// The caller's slices are kept, not copied: members' items and sizes
	// are built per group and never changed afterwards.
	ls.last, ls.lastSizes = items, sizes
	if len(g.recent) < recentLoads {
		g.recent = append(g.recent, ls)
	} else {
		copy(g.recent, g.recent[1:])
		g.recent[recentLoads-1] = ls
	}
	return g.loadIn(ls, v)
}

// loadIn returns the load of bin v in ls, made on first use.
func (g *grounder) loadIn(ls *loadSet, v int64) cp.IntVar {
	if l, ok := ls.bins[v]; ok {
		return l
	}
	if ls.total < 0 {
		ls.total = 0
		for _, s := range ls.sizes {
			ls.total += s
		}
	}
	l := g.m.NewIntVar(0, ls.total, "")
	ls.bins[v] = l
	ls.order = append(ls.order, v)
	g.loadVars[l] = binKey{ls.itemsID, v}
	return l
}

// sameItems reports whether a load set is over exactly these items and
// sizes (in any order).
func sameItems(ls *loadSet, items []cp.IntVar, sizes []int64) bool {
	if len(ls.items) != len(items) {
		return false
	}
	for i, x := range items {
		j := sort.Search(len(ls.items), func(k int) bool { return ls.items[k].Index() >= x.Index() })
		if j == len(ls.items) || ls.items[j] != x || ls.sizes[j] != sizes[i] {
			return false
		}
	}
	return true
}

// presence is the form "some member of the bin group is present".
func (g *grounder) presence(b *binGroup) form {
	if !b.has {
		b.count, b.has = g.loadFor(b.v, b.items, g.onesOf(len(b.items))), true
		b.pres = fLin{e: varLin(b.count), lo: 1, hi: maxInt}
	}
	return b.pres
}

// flushLoads posts the loads: one bin-packing constraint per set of items
// and sizes with two bins or more, a linear definition otherwise.
func (g *grounder) flushLoads() {
	g.view = ""
	for _, ls := range g.loadOrder {
		if len(ls.order) >= 2 && !g.opts.NoBinPacking {
			loads := make([]cp.IntVar, len(ls.order))
			for j, v := range ls.order {
				loads[j] = ls.bins[v]
			}
			g.m.AddBinPacking(ls.items, ls.sizes, ls.order, loads).WithName("load")
			continue
		}
		for _, v := range ls.order {
			var e cp.LinearExpr
			for i, x := range ls.items {
				e.AddLit(g.m.EqLit(x, v), ls.sizes[i])
			}
			e.AddTerm(ls.bins[v], -1)
			g.m.AddEquality(e, 0).WithName("load")
		}
	}
}

// guardForBin simplifies "present → f" for a bin group: the conjunct of f
// that is presence itself is dropped (the group exists), and when the rest
// holds with every load at zero (no member present), f is required
// unconditionally — a capacity "L_n ≤ cap_n" becomes a bound on L_n.
func (g *grounder) guardForBin(b *binGroup, f form) (guard, rest form) {
	var keep []form
	conj := []form{f}
	if a, ok := f.(fAnd); ok {
		conj = a
	}
	for _, c := range conj {
		if l, ok := c.(fLin); ok && b.has && l.lo == 1 && l.hi == maxInt {
			if x, k, off, ok := l.e.single(); ok && k == 1 && off == 0 && x == b.count {
				continue
			}
		}
		keep = append(keep, c)
	}
	rest = and(keep...)
	pres := g.presence(b)
	if g.holdsWhenEmpty(rest, g.loadVars[b.count]) {
		return fTrue, rest
	}
	return pres, rest
}

// emptyBinGuard simplifies "guard → f" where guard is the presence of a
// bin group ("count ≥ 1", a row of a grouped view read by a hard view's
// where clause) and f holds when that bin is empty: f is required
// unconditionally, as the having form does (guardForBin) — a filter
// "cpu_spare >= 0" over a grouped view becomes a bound on the load.
func (g *grounder) emptyBinGuard(guard, f form) form {
	if key, ok := g.presenceOf(guard); ok && g.holdsWhenEmpty(f, key) {
		return fTrue
	}
	return guard
}

// presenceOf reports whether f is "count ≥ 1" over a bin's count load,
// and which bin.
func (g *grounder) presenceOf(f form) (binKey, bool) {
	p, ok := f.(fLin)
	if !ok || p.lo != 1 || p.hi != maxInt {
		return binKey{}, false
	}
	c, k, off, ok := p.e.single()
	if !ok || k != 1 || off != 0 {
		return binKey{}, false
	}
	key, ok := g.loadVars[c]
	return key, ok
}

// holdsWhenEmpty reports whether f is true when the bin key is empty:
// every variable f reads is a load of that bin (0 then) and f holds at 0.
func (g *grounder) holdsWhenEmpty(f form, key binKey) bool {
	switch f := f.(type) {
	case fConst:
		return bool(f)
	case fLin:
		for _, t := range f.e.terms {
			if k, ok := g.loadVars[t.v]; !ok || k != key {
				return false
			}
		}
		return f.e.k >= f.lo && f.e.k <= f.hi
	case fAnd:
		for _, h := range f {
			if !g.holdsWhenEmpty(h, key) {
				return false
			}
		}
		return true
	}
	return false
}

// notNullUnder drops the NULL condition of a value of a row that exists
// under guard when guard rules NULL out: the sums of a bin group are NULL
// only when the bin is empty, and its row exists only when it is not.
// Every reader of a row's values conjoins its guard (filters, checks,
// aggregates, scalar subqueries), so the value may be anything where the
// guard is false. Comparisons and case expressions over such a value
// then need no NULL branch (three-valued logic, a clause each).
func notNullUnder(v value, guard form) value {
	if v.k != kInt || !v.mayBeNull() {
		return v
	}
	if a, ok := guard.(fAnd); ok {
		for _, c := range a {
			if negates(c, v.null) {
				v.null = fFalse
				return v
			}
		}
	} else if negates(guard, v.null) {
		v.null = fFalse
	}
	return v
}

// somePresent reports whether at least one of the forms holds in every
// solution: each is the presence of a bin of one set of items, and every
// item must take one of these bins (a group by over a decision column
// that cannot be NULL, with a group per value): a min over the groups is
// then never NULL.
func (g *grounder) somePresent(pres []form) bool {
	if len(pres) == 0 {
		return false
	}
	bins := map[int64]bool{}
	items := -1
	for _, p := range pres {
		key, ok := g.presenceOf(p)
		if !ok || items >= 0 && key.items != items {
			return false
		}
		items = key.items
		bins[key.v] = true
	}
	for _, ls := range g.loadOrder {
		if ls.itemsID != items {
			continue
		}
		if len(ls.items) == 0 {
			return false
		}
		for _, x := range ls.items {
			d := g.m.VarDomain(x.Index())
			for _, v := range d.Values() {
				if !bins[v] {
					return false
				}
			}
		}
		return true
	}
	return false
}
