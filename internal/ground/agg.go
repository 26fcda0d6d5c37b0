package ground

import (
	"github.com/weavesql/weave/cp"
	"github.com/weavesql/weave/internal/ir"
)

// aggregate evaluates count, sum, min or max over a group. A member that
// exists only under a condition contributes "condition × value": a sum over
// rows filtered by a decision becomes a sum of predicates, with no
// auxiliary variable per row when the values are constants.
func (g *grounder) aggregate(e *ir.Agg, grp *group) value {
	if v, ok := grp.pre[e]; ok {
		return v
	}
	if v, ok := g.binAggregate(e, grp); ok {
		return v
	}
	if e.Func == "min" || e.Func == "max" {
		if p, ok := pickOf(e.Arg); ok && p.isMin == (e.Func == "min") {
			if v, ok := g.pickAggregate(p, grp); ok {
				return v
			}
		}
	}
	type item struct {
		v       value
		present form // member exists and its value is not NULL
	}
	// Sized up front: S1 sums over 50,000 (pod, node) members per batch,
	// and growing the slice was 40% of the aggregate.
	members := g.membersOf(grp)
	items := make([]item, 0, len(members))
	for _, m := range members {
		if e.Arg == nil {
			items = append(items, item{constVal(int64(1)), m.guard})
			continue
		}
		v := g.expr(e.Arg, scope{t: m.t})
		if v.isNullConst() {
			continue
		}
		present := m.guard
		if !isFalse(v.null) { // a stored value is never NULL
			present = and(m.guard, neg(v.null))
		}
		items = append(items, item{v, present})
	}
	switch e.Func {
	case "count":
		if e.Distinct {
			vs, ps := items2(items, func(i item) (value, form) { return i.v, i.present })
			return g.countDistinct(vs, ps)
		}
		ls := make([]lin, len(items))
		ps := make([]form, len(items))
		for i, it := range items {
			ls[i], ps[i] = constLin(1), it.present
		}
		return intVal(sumLins(g.weightedSum(ls, ps)), fFalse)
	case "sum":
		ls := make([]lin, len(items))
		ps := make([]form, len(items))
		for i, it := range items {
			ls[i], _, _ = g.asLin(it.v)
			ps[i] = it.present
		}
		return zeroWhenNull(intVal(sumLins(g.weightedSum(ls, ps)), neg(or(ps...))))
	case "min", "max":
		vs := make([]lin, len(items))
		ps := make([]form, len(items))
		for i, it := range items {
			vs[i], _, _ = g.asLin(it.v)
			ps[i] = it.present
		}
		return g.minMax(e.Func == "min", vs, ps)
	}
	g.fail("aggregate %s cannot yield a value", e.Func)
	return value{}
}

// elementMin is the number of weighted "x = v" terms on one variable x
// from which a sum reads their weights from a table indexed by x (one
// element constraint) instead of adding a literal per term.
const elementMin = 4

// weightedSum returns the parts of Σ [ps[i]] × ls[i]. Terms "[x = v] × w"
// (a row joined on decision column x, with a constant weight) are grouped
// by x: from elementMin of them on one x, their sum is one variable t =
// table[x], table[v] the weights at v. S1 (a cost per bound pod of the
// group on the pod's node) had a literal per (pending pod, node holding
// the group): 50,000 per 100-pod batch once a group covered 500 nodes, and
// growing with the bound pods, where the model should follow the batch.
func (g *grounder) weightedSum(ls []lin, ps []form) []lin {
	type byVar struct {
		x      cp.IntVar
		vs, ws []int64
	}
	var groups []*byVar
	var at map[cp.IntVar]*byVar
	parts := make([]lin, 0, len(ls))
	for i, p := range ps {
		if a, ok := p.(fAnd); ok {
			// A join on a nullable decision column: "x = v and x is not
			// NULL" is "x = v".
			if fs, ok := equalitiesDecide(a); !ok {
				continue // never present
			} else if len(fs) == 1 {
				p = fs[0]
			}
		}
		if e, ok := p.(fEq); ok && !e.not && ls[i].isConst() && !g.opts.NaiveSums {
			if at == nil {
				at = map[cp.IntVar]*byVar{}
			}
			b := at[e.x]
			if b == nil {
				b = &byVar{x: e.x}
				at[e.x] = b
				groups = append(groups, b)
			}
			b.vs, b.ws = append(b.vs, e.v), append(b.ws, ls[i].k)
			continue
		}
		parts = append(parts, g.times(p, ls[i]))
	}
	for _, b := range groups {
		if t, ok := g.tableOf(b.x, b.vs, b.ws); ok {
			parts = append(parts, varLin(t))
			continue
		}
		for i, v := range b.vs {
			parts = append(parts, g.times(fEq{x: b.x, v: v}, constLin(b.ws[i])))
		}
	}
	return parts
}

// tableOf returns a variable t = Σ_i [x = vs[i]] × ws[i], posted as an
// element constraint over x's values, or false when that does not pay
// (few terms, or x's values too sparse for a table).
func (g *grounder) tableOf(x cp.IntVar, vs, ws []int64) (cp.IntVar, bool) {
	if len(vs) < elementMin && !g.opts.SmallSets {
		return cp.IntVar{}, false
	}
	d := g.m.VarDomain(x.Index())
	if d.IsEmpty() || d.Min() < 0 || d.Max() >= 4*d.Size()+64 {
		return cp.IntVar{}, false
	}
	table := make([]int64, d.Max()+1)
	for i, v := range vs {
		if v >= 0 && v < int64(len(table)) {
			table[v] += ws[i]
		}
	}
	var vals []int64
	for _, v := range d.Values() {
		vals = append(vals, table[v])
	}
	t := g.m.NewIntVarFromDomain(cp.DomainFromValues(vals...), "")
	g.note(g.m.AddElement(x, table, t))
	return t, true
}

func items2[T any](xs []T, f func(T) (value, form)) (vs []value, ps []form) {
	for _, x := range xs {
		v, p := f(x)
		vs = append(vs, v)
		ps = append(ps, p)
	}
	return vs, ps
}

// countDistinct counts the distinct constant values present.
func (g *grounder) countDistinct(vs []value, ps []form) value {
	byVal := map[any][]form{}
	var order []any
	for i, v := range vs {
		if v.k != kConst {
			g.fail("count(distinct ...) over decision columns is not supported")
		}
		if _, ok := byVal[v.c]; !ok {
			order = append(order, v.c)
		}
		byVal[v.c] = append(byVal[v.c], ps[i])
	}
	parts := make([]lin, 0, len(order))
	for _, c := range order {
		parts = append(parts, g.indicator(or(byVal[c]...)))
	}
	return intVal(sumLins(parts), fFalse)
}

// indicator is the 0/1 value of a condition.
func (g *grounder) indicator(f form) lin {
	if isTrue(f) {
		return constLin(1)
	}
	if isFalse(f) {
		return constLin(0)
	}
	return litLin(g.litOf(f))
}

// times is "[c] × e": a weighted literal when e is constant, else an
// auxiliary variable equal to e when c holds and 0 otherwise.
func (g *grounder) times(c form, e lin) lin {
	if isTrue(c) {
		return e
	}
	if isFalse(c) {
		return lin{}
	}
	if e.isConst() && !g.opts.NaiveSums {
		return g.indicator(c).scale(e.k)
	}
	if e.isConst() {
		// The naive form: an auxiliary z = (c ? k : 0) per row.
		lo, hi := min(e.k, 0), max(e.k, 0)
		z := g.m.NewIntVar(lo, hi, "")
		l := g.litOf(c)
		g.note(g.m.AddEquality(varLin(z).add(e, -1).expr(), 0).OnlyEnforceIf(l))
		g.note(g.m.AddEquality(varLin(z).expr(), 0).OnlyEnforceIf(l.Not()))
		return varLin(z)
	}
	return g.ite(c, e, lin{})
}

// minMax is min (or max) over the values present; NULL when none is.
func (g *grounder) minMax(isMin bool, vs []lin, ps []form) value {
	var kept []lin
	var pres []form
	allPresent, allConst := true, true
	for i := range vs {
		if isFalse(ps[i]) {
			continue
		}
		kept = append(kept, vs[i])
		pres = append(pres, ps[i])
		allPresent = allPresent && isTrue(ps[i])
		allConst = allConst && vs[i].isConst()
	}
	if len(kept) == 0 {
		return constVal(nil)
	}
	better := func(a, b int64) bool {
		if isMin {
			return a < b
		}
		return a > b
	}
	if allPresent && allConst {
		best := kept[0].k
		for _, v := range kept[1:] {
			if better(v.k, best) {
				best = v.k
			}
		}
		return constVal(best)
	}
	lo, hi := int64(maxInt), int64(minInt)
	for _, v := range kept {
		a, b := g.bounds(v)
		lo, hi = min(lo, a), max(hi, b)
	}
	// An absent value is replaced by the neutral bound (hi for min, lo for
	// max), so the solver's own min/max propagator sees every row:
	// min(present ? v : hi). A constant v needs no auxiliary variable:
	// hi - (hi - v)·[present].
	neutral := lo
	if isMin {
		neutral = hi
	}
	exprs := make([]cp.LinearExpr, len(kept))
	for i, v := range kept {
		var e lin
		switch {
		case v.isConst():
			e = constLin(neutral).add(g.indicator(pres[i]), v.k-neutral)
		case g.zeroWhenAbsent(v, pres[i]):
			// A bin's spare room (capacity - load): absent, the loads are
			// 0 and v is its constant part, so "present ? v : neutral" is
			// v + (neutral - v.k)·(1 - [present]), without a variable.
			e = v.add(constLin(neutral-v.k), 1).add(g.indicator(pres[i]), v.k-neutral)
		default:
			e = g.ite(pres[i], v, constLin(neutral))
		}
		exprs[i] = e.expr()
	}
	m := g.m.NewIntVar(lo, hi, "")
	if isMin {
		g.note(g.m.AddMinEquality(m, exprs))
	} else {
		g.note(g.m.AddMaxEquality(m, exprs))
	}
	if allPresent || g.somePresent(pres) {
		return intVal(varLin(m), fFalse)
	}
	return intVal(varLin(m), neg(or(pres...)))
}

// sizeOf returns the size an item contributes to sum(e.Arg): a constant
// non-negative integer, or false. When the argument reads one source (the
// pod's request), the size is computed once per row of it, not once per
// (pod, node) member of every bin.
func (g *grounder) sizeOf(e *ir.Agg) func(t *tuple) (int64, bool) {
	eval := func(t *tuple) (int64, bool) {
		v := g.expr(e.Arg, scope{t: t})
		c, isInt := v.c.(int64)
		return c, v.k == kConst && isInt && c >= 0
	}
	deps := sourcesRead(e.Arg)
	if len(deps) != 1 {
		return eval
	}
	src := deps[0]
	memo := g.sizes[e]
	if memo == nil {
		memo = map[*row]int64{}
		g.sizes[e] = memo
	}
	return func(t *tuple) (int64, bool) {
		rw := t.rows[src]
		if c, ok := memo[rw]; ok {
			return c, c >= 0
		}
		c, ok := eval(t)
		if !ok {
			c = -1
		}
		memo[rw] = c
		return c, ok
	}
}

// binAggregate computes count or sum over a bin group as the bin's load,
// when every member contributes a constant non-negative size.
func (g *grounder) binAggregate(e *ir.Agg, grp *group) (value, bool) {
	b := grp.bin
	if b == nil || g.opts.NoLoads || e.Distinct || e.Func != "count" && e.Func != "sum" {
		return value{}, false
	}
	var sizes []int64
	if e.Arg == nil || e.Func == "count" {
		// count(x) over a bin group: a NULL x would make the member not
		// count, which is not a constant size unless x is never NULL.
		if e.Arg != nil {
			for _, m := range g.membersOf(grp) {
				if v := g.expr(e.Arg, scope{t: m.t}); v.k != kConst || v.c == nil {
					return value{}, false
				}
			}
		}
		sizes = g.onesOf(memberCount(grp))
	} else {
		var ok bool
		if grp.lazy != nil {
			sizes, ok = g.lazySizes(e, grp)
		} else {
			sizes, ok = g.binSizes(e, grp.members)
		}
		if !ok {
			return value{}, false
		}
	}
	null := fFalse
	if e.Func == "sum" {
		null = neg(g.presence(b))
	}
	return intVal(varLin(g.loadFor(b.v, b.items, sizes)), null), true
}

// onesOf returns n sizes of 1, shared: sizes are never changed once made.
func (g *grounder) onesOf(n int) []int64 {
	for len(g.ones) < n {
		g.ones = append(g.ones, 1)
	}
	return g.ones[:n:n]
}

// memberSizes are the sizes of sum(e.Arg) over one bin group, by the rows
// of the source the argument reads.
type memberSizes struct {
	rows  []*row
	sizes []int64
}

// binSizes returns the size of every member of a bin group, or false when
// one is not a constant non-negative integer. The bins of one join list
// the same rows (every pod that may go to the node) in the same order:
// the previous group's sizes are reused when its rows are these.
func (g *grounder) binSizes(e *ir.Agg, members []member) ([]int64, bool) {
	deps := sourcesRead(e.Arg)
	var prev *memberSizes
	if len(deps) == 1 {
		prev = g.lastSizes[e]
		if prev != nil && len(prev.rows) == len(members) {
			same := true
			for i, m := range members {
				if m.t.rows[deps[0]] != prev.rows[i] {
					same = false
					break
				}
			}
			if same {
				return prev.sizes, true
			}
		}
	}
	size := g.sizeOf(e)
	sizes := make([]int64, len(members))
	for i, m := range members {
		c, ok := size(m.t)
		if !ok {
			return nil, false
		}
		sizes[i] = c
	}
	if len(deps) == 1 {
		rows := make([]*row, len(members))
		for i, m := range members {
			rows[i] = m.t.rows[deps[0]]
		}
		g.lastSizes[e] = &memberSizes{rows: rows, sizes: sizes}
	}
	return sizes, true
}
