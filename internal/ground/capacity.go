package ground

import (
	"math"
	"sort"

	"github.com/weavesql/weave/cp"
)

// Per-node capacity written in SQL — "group by node having sum(pod.cpu) <=
// node.cpu" — grounds to one linear constraint per node over the literals
// [pod = node]:
//
//	Σ cpu_p·[x_p = n1] <= cap_n1,  Σ cpu_p·[x_p = n2] <= cap_n2,  ...
//
// Posted one by one, the solver sees each node alone. Gathered into one
// bin-packing constraint per resource (items x_p of size cpu_p, bins n1,
// n2, ... whose loads are bounded by the capacities), it reasons about all
// nodes at once (Shaw 2004): total size against total free space, items
// that fit nowhere, loads that must rise. The rows of one view are buffered
// while it is grounded and gathered when it is done.

// eqAtom is what an encoding literal stands for: x = v.
type eqAtom struct {
	x cp.IntVar
	v int64
}

// eqLit returns the literal [x = v], remembering what it stands for.
func (g *grounder) eqLit(x cp.IntVar, v int64) cp.Lit {
	l := g.m.EqLit(x, v)
	if !l.IsNegated() {
		if _, ok := g.eqOf[l.Var().Index()]; !ok && g.m.VarDomain(x.Index()).Contains(v) && g.m.VarDomain(x.Index()).Size() > 1 {
			g.eqOf[l.Var().Index()] = eqAtom{x, v}
		}
	}
	return l
}

// capacityRow is "Σ size_i·[x_i = bin] <= hi".
type capacityRow struct {
	bin   int64
	items map[cp.IntVar]int64
	hi    int64
}

// asCapacityRow recognises a constraint lo <= e <= hi as a capacity row.
func (g *grounder) asCapacityRow(e lin, lo, hi int64) (capacityRow, bool) {
	if hi == math.MaxInt64 || len(e.terms) < 2 {
		return capacityRow{}, false
	}
	r := capacityRow{items: map[cp.IntVar]int64{}, hi: hi - e.k}
	if lo != math.MinInt64 && lo-e.k > 0 {
		return capacityRow{}, false // a lower bound on the load is not a capacity
	}
	for i, t := range e.terms {
		a, ok := g.eqOf[t.v.Index()]
		if !ok || t.c <= 0 {
			return capacityRow{}, false
		}
		if i == 0 {
			r.bin = a.v
		} else if a.v != r.bin {
			return capacityRow{}, false
		}
		if _, dup := r.items[a.x]; dup {
			return capacityRow{}, false
		}
		r.items[a.x] = t.c
	}
	return r, true
}

// binGroup is a set of capacity rows that agree on every item's size and
// have distinct bins: one resource.
type binGroup struct {
	sizes map[cp.IntVar]int64
	rows  []capacityRow
	bins  map[int64]bool
}

// flushCapacity posts the buffered capacity rows of the view just grounded,
// gathered into bin-packing constraints.
func (g *grounder) flushCapacity() {
	rows := g.capRows
	g.capRows = nil
	if len(rows) == 0 {
		return
	}
	var groups []*binGroup
	for _, r := range rows {
		var into *binGroup
		for _, grp := range groups {
			if grp.bins[r.bin] {
				continue
			}
			fits := true
			for x, s := range r.items {
				if s2, ok := grp.sizes[x]; ok && s2 != s {
					fits = false
					break
				}
			}
			if fits {
				into = grp
				break
			}
		}
		if into == nil {
			into = &binGroup{sizes: map[cp.IntVar]int64{}, bins: map[int64]bool{}}
			groups = append(groups, into)
		}
		into.rows = append(into.rows, r)
		into.bins[r.bin] = true
		for x, s := range r.items {
			into.sizes[x] = s
		}
	}
	for _, grp := range groups {
		if len(grp.rows) < 2 {
			for _, r := range grp.rows {
				g.postCapacityRow(r)
			}
			continue
		}
		g.postBinPacking(grp)
	}
}

func (g *grounder) postCapacityRow(r capacityRow) {
	var e cp.LinearExpr
	for _, x := range sortedVars(r.items) {
		e.AddLit(g.eqLit(x, r.bin), r.items[x])
	}
	g.note(g.m.AddLessOrEqual(e, r.hi))
}

func (g *grounder) postBinPacking(grp *binGroup) {
	items := sortedVars(grp.sizes)
	sizes := make([]int64, len(items))
	var total int64
	for i, x := range items {
		sizes[i] = grp.sizes[x]
		total += sizes[i]
	}
	sort.Slice(grp.rows, func(i, j int) bool { return grp.rows[i].bin < grp.rows[j].bin })
	bins := make([]int64, len(grp.rows))
	loads := make([]cp.IntVar, len(grp.rows))
	for j, r := range grp.rows {
		bins[j] = r.bin
		// Items absent from a row cannot go to that bin: the grounder
		// dropped their literal because the value is outside their domain.
		loads[j] = g.m.NewIntVar(0, max(0, min(r.hi, total)), "")
	}
	g.note(g.m.AddBinPacking(items, sizes, bins, loads))
	// An item whose domain includes a bin but whose row did not list it
	// would escape the capacity: keep such items out of that bin.
	for _, r := range grp.rows {
		for _, x := range items {
			if _, ok := r.items[x]; !ok && g.m.VarDomain(x.Index()).Contains(r.bin) {
				g.note(g.m.AddNotEqual(varLin(x).expr(), r.bin))
			}
		}
	}
}

func sortedVars(m map[cp.IntVar]int64) []cp.IntVar {
	out := make([]cp.IntVar, 0, len(m))
	for x := range m {
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index() < out[j].Index() })
	return out
}
