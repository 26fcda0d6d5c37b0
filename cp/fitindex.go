package cp

import (
	"math"
	"math/bits"
	"slices"
)

// fitIndex answers worstFit and bestFit without scanning every bin: the
// value choice ran once per decision over all the bins of an item's
// domain, O(bins) per decision, which dominated the search on thousands
// of bins (5,000 items x 10,000 bins: 0.4 s of a 2 s first solution).
//
// It is a segment tree over the bin values (ascending) of a group of
// bin-packing constraints that share their bin values (the relevant
// resources of the items; see heuristics.relevant). Each node holds
// aggregates of the rooms (hi(load) - lo(load)) of the bins below it:
// per resource the largest and the smallest room, and over the rooms
// normalised by their scale, n_k = room_k/scale_k, the largest Σ_k w_k n_k
// for a few weight vectors w and the smallest Σ_k n_k. The nodes live in
// one reversible array, a node's aggregates side by side (one or two
// cache lines per node). A load change updates its leaf and the
// ancestors whose aggregates change, at the level of the change, so
// backtracking restores the tree with the domains and nothing else has to
// watch undo.
//
// A query is a best-first search from the root on an upper bound of the
// score of the bins below a node. At a leaf the bound is the score
// itself, computed with the scan's float expression; above, it is the
// least of the bounds the aggregates give (the per-resource ones alone
// are weak on two resources: the largest rooms of a subtree are in
// different bins), with a margin for rounding. It stops once no node
// left can beat the best bin found in the item's domain, so it answers
// the scan's best score, up to ties.
type fitIndex struct {
	props  []*binPackProp // the resources, in the items' reference order
	inv    []float64      // 1 / scale per resource
	vals   []int64        // leaf -> bin value, ascending
	leafOf [][]int32      // per resource: bin position -> leaf
	n      int            // leaves, a power of two
	shift  int            // log2(n)
	r      int            // resources
	// Node i's aggregates are rev[i*stride:(i+1)*stride]: the largest
	// room per resource, the smallest, then float64 bits (non-negative
	// floats order like their bits) of the largest Σ w_k n_k per weight
	// vector and of the smallest Σ n_k.
	weights [][]float64
	// Two resources: per node, for a few shifts d (deltas), the largest
	// min(n_1, n_2 + d) over its bins, plus dOff = max(0, -d) to keep it
	// non-negative (stored as float bits). Worst fit's score is
	// min(n_1, n_2 + δ) - c_1 with δ = c_1 - c_2, nondecreasing in δ
	// with slope at most 1, so each shift bounds it for every item; it
	// is exact at the shifts, where the weighted sums stay loose when
	// worst fit has evened out the bins (5,000 x 10,000: ~900 nodes per
	// query, ~650 even with 64 weights).
	deltas []float64
	dOff   []float64
	dq     []float64 // query scratch: per shift, what to add to the slot
	stride int
	rev    int32
	st     *store
	front  []fitNode // best-first frontier (a binary heap), reused
	norm   []float64 // query scratch: size_k/scale_k
	wc     []float64 // query scratch: Σ_k w_k norm_k per weight vector
}

type fitNode struct {
	ub   float64
	minX int64 // smallest bin value below the node
	node int32
}

// fitIndexMinBins is the number of bins from which an index pays for the
// updates it costs on every load change (a variable for tests).
var fitIndexMinBins = 128

// fitWeightSteps divides [0, 1] into the weights of the two-resource
// bounds (more weights: tighter bounds, bigger nodes).
const fitWeightSteps = 4

// fitDeltaBinsPerItem: the shifted max-min slots pay once per query
// (about one per item) and cost at every load update and per bin at
// setup; with fewer items than bins/fitDeltaBinsPerItem (a batch of 100
// pods onto 10,000 nodes) they are left out (they doubled the index's
// setup there).
const fitDeltaBinsPerItem = 8

// newFitIndex builds the index of props (which must share their bin
// values) from the current loads, and subscribes it to their changes.
func (s *solver) newFitIndex(props []*binPackProp) *fitIndex {
	ix := &fitIndex{props: props, st: &s.store, r: len(props)}
	ix.vals = append([]int64(nil), props[0].bins...)
	slices.Sort(ix.vals)
	ix.n = 1
	for ix.n < len(ix.vals) {
		ix.n <<= 1
	}
	ix.shift = bits.Len(uint(ix.n)) - 1
	if ix.r == 2 {
		for q := 1; q < fitWeightSteps; q++ {
			w := float64(q) / fitWeightSteps
			ix.weights = append(ix.weights, []float64{w, 1 - w})
		}
	} else if ix.r > 2 {
		w := make([]float64, ix.r)
		for k := range w {
			w[k] = 1 / float64(ix.r)
		}
		ix.weights = append(ix.weights, w)
	}
	if ix.r == 2 && len(props[0].items)*fitDeltaBinsPerItem >= len(ix.vals) {
		ix.deltas = fitDeltas(props, s.h.scale)
		for _, d := range ix.deltas {
			ix.dOff = append(ix.dOff, max(0, -d))
		}
		ix.dq = make([]float64, len(ix.deltas))
	}
	ix.stride = 2*ix.r + len(ix.weights) + len(ix.deltas) + 1
	ix.rev = s.newRev(2 * ix.n * ix.stride)
	a := s.revs[ix.rev]
	leafOfVal := make(map[int64]int32, len(ix.vals))
	for t, x := range ix.vals {
		leafOfVal[x] = int32(t)
	}
	const empty = int64(1) << 62
	for t := range ix.n { // padding leaves fit nothing
		for k := range ix.r {
			a[(ix.n+t)*ix.stride+k], a[(ix.n+t)*ix.stride+ix.r+k] = -empty, empty
		}
	}
	for k, p := range props {
		ix.inv = append(ix.inv, 1/s.h.scale[p])
		lf := make([]int32, len(p.bins))
		for j, x := range p.bins {
			lf[j] = leafOfVal[x]
		}
		ix.leafOf = append(ix.leafOf, lf)
		for j, l := range p.loads {
			room := s.hi[l] - s.lo[l]
			i := (ix.n + int(lf[j])) * ix.stride
			a[i+k], a[i+ix.r+k] = room, room
			s.notify[l] = append(s.notify[l], notifyEnt{p: ix, pos: int32(k*len(p.bins) + j)})
		}
	}
	for t := range ix.n {
		ix.setLeafSums(ix.n+t, t < len(ix.vals), false)
	}
	for i := ix.n - 1; i >= 1; i-- {
		ix.pull(i, false)
	}
	ix.norm = make([]float64, ix.r)
	ix.wc = make([]float64, len(ix.weights))
	return ix
}

// setLeafSums recomputes the normalised aggregates of leaf i from its
// rooms (a padding leaf gets aggregates no query prefers).
func (ix *fitIndex) setLeafSums(i int, real, trail bool) {
	a := ix.st.revs[ix.rev]
	o := i * ix.stride
	for q, w := range ix.weights {
		h := 0.0
		if real {
			for k := range ix.r {
				h += w[k] * float64(a[o+k]) * ix.inv[k]
			}
		}
		ix.set(o+2*ix.r+q, fbits(h), trail)
	}
	if len(ix.deltas) > 0 {
		n1, n2 := float64(a[o])*ix.inv[0], float64(a[o+1])*ix.inv[1]
		for q, d := range ix.deltas {
			g := 0.0 // padding: no larger than any bin's
			if real {
				g = min(n1, n2+d) + ix.dOff[q]
			}
			ix.set(o+2*ix.r+len(ix.weights)+q, fbits(max(g, 0)), trail)
		}
	}
	sum := 1e300
	if real {
		sum = 0
		for k := range ix.r {
			sum += float64(a[o+k]) * ix.inv[k]
		}
	}
	ix.set(o+ix.stride-1, fbits(sum), trail)
}

// fitDeltas picks the shifts of a two-resource index: quantiles of the
// items' normalised size differences c_1 - c_2, where queries fall.
func fitDeltas(props []*binPackProp, scale map[*binPackProp]float64) []float64 {
	const n = 8
	at := make(map[int32]int, len(props[1].items))
	for i, v := range props[1].items {
		at[v] = i
	}
	var ds []float64
	for i, v := range props[0].items {
		if k, ok := at[v]; ok {
			ds = append(ds, float64(props[0].sizes[i])/scale[props[0]]-float64(props[1].sizes[k])/scale[props[1]])
		}
	}
	if len(ds) == 0 {
		return nil
	}
	slices.Sort(ds)
	var out []float64
	for q := range n {
		d := ds[(2*q+1)*len(ds)/(2*n)]
		if len(out) == 0 || d > out[len(out)-1] {
			out = append(out, d)
		}
	}
	return out
}

func fbits(f float64) int64 { return int64(math.Float64bits(f)) }

func ffrom(b int64) float64 { return math.Float64frombits(uint64(b)) }

// set writes slot i of the tree, trailed or not; it reports a change.
func (ix *fitIndex) set(i int, x int64, trail bool) bool {
	a := ix.st.revs[ix.rev]
	if a[i] == x {
		return false
	}
	if trail {
		ix.st.setRev(ix.rev, i, x)
	} else {
		a[i] = x
	}
	return true
}

// pull recomputes internal node i from its children; it reports whether
// anything changed.
func (ix *fitIndex) pull(i int, trail bool) bool {
	a := ix.st.revs[ix.rev]
	o, l, r := i*ix.stride, 2*i*ix.stride, (2*i+1)*ix.stride
	changed := false
	for k := range ix.r {
		changed = ix.set(o+k, max(a[l+k], a[r+k]), trail) || changed
		changed = ix.set(o+ix.r+k, min(a[l+ix.r+k], a[r+ix.r+k]), trail) || changed
	}
	// Non-negative floats compare like their bits.
	for q := range len(ix.weights) + len(ix.deltas) {
		k := 2*ix.r + q
		changed = ix.set(o+k, max(a[l+k], a[r+k]), trail) || changed
	}
	k := ix.stride - 1
	changed = ix.set(o+k, min(a[l+k], a[r+k]), trail) || changed
	return changed
}

// notify updates the leaf of bin j of resource k (pos = k*bins + j) and
// its ancestors after a change of that bin's load.
func (ix *fitIndex) notify(pos int32) {
	if ix.idle() {
		return
	}
	nb := int32(len(ix.vals))
	k, j := int(pos/nb), pos%nb
	st := ix.st
	l := ix.props[k].loads[j]
	room := st.hi[l] - st.lo[l]
	i := ix.n + int(ix.leafOf[k][j])
	if !ix.set(i*ix.stride+k, room, true) {
		return
	}
	ix.set(i*ix.stride+ix.r+k, room, true)
	ix.setLeafSums(i, true, true)
	for i > 1 {
		i >>= 1
		if !ix.pull(i, true) {
			return
		}
	}
}

// idle reports whether every item served by the index is fixed: one of
// its resources (each lists every such item) has no unfixed item left, as
// its incremental propagator accounts them. No query can come before
// backtracking unfixes an item, which restores the loads to values the
// tree still describes, so load changes need not be applied: the last
// placement fixes every load, and updating the tree for each cost a
// quarter of a first solution on 10,000-node placement models.
func (ix *fitIndex) idle() bool {
	for _, p := range ix.props {
		if p.inc && ix.st.revs[p.rSum][2] == 0 {
			return true
		}
	}
	return false
}

// query returns a value of item v (sizes[k] on resource k) with the
// score worstFit or bestFit looks for: the scan's best score, up to ties
// within a rounding margin (which of the tied bins comes out depends on
// the tree, not on the value order). prune skips nodes where no bin has
// room for the item on some resource: callers set it only when every bin
// in v's domain has that room (see fitPrunable).
func (ix *fitIndex) query(s *solver, v int32, sizes []int64, bestFit, prune bool) (int64, bool) {
	cs := 0.0
	for k := range ix.norm {
		ix.norm[k] = float64(sizes[k]) * ix.inv[k]
		cs += ix.norm[k]
	}
	for q, w := range ix.weights {
		ix.wc[q] = 0
		for k, c := range ix.norm {
			ix.wc[q] += w[k] * c
		}
	}
	if len(ix.deltas) > 0 {
		delta := ix.norm[0] - ix.norm[1]
		for q, d := range ix.deltas {
			ix.dq[q] = max(0, delta-d) - ix.dOff[q] - ix.norm[0]
		}
	}
	q := fitQuery{ix: ix, s: s, v: v, sizes: sizes, bestFit: bestFit, prune: prune, cs: cs, best: -1e300}
	ix.front = ix.front[:0]
	q.consider(1)
	for len(ix.front) > 0 {
		e := ix.pop()
		if q.found && e.ub <= q.best+4*fitMargin(q.best, cs) {
			break // nothing left can beat the best leaf by more than a tie
		}
		q.consider(2 * e.node)
		q.consider(2*e.node + 1)
	}
	return q.x, q.found
}

type fitQuery struct {
	ix             *fitIndex
	s              *solver
	v              int32
	sizes          []int64
	bestFit, prune bool
	cs             float64 // Σ_k norm_k
	found          bool
	best           float64
	x              int64
}

// consider evaluates a leaf (a bin in v's domain that beats the best so
// far becomes the best) or pushes an inner node onto the frontier.
func (q *fitQuery) consider(node int32) {
	ix := q.ix
	a := ix.st.revs[ix.rev][int(node)*ix.stride:][:ix.stride]
	if q.prune {
		for k, c := range q.sizes {
			if a[k] < c {
				return // no bin below has room for the item on resource k
			}
		}
	}
	leaf := int(node) >= ix.n
	ub := ix.bound(a, q.sizes, q.bestFit, leaf, q.cs)
	if leaf {
		t := int(node) - ix.n
		if t < len(ix.vals) && (!q.found || ub > q.best) && q.s.contains(q.v, ix.vals[t]) {
			q.found, q.best, q.x = true, ub, ix.vals[t]
		}
		return
	}
	if !q.found || ub > q.best {
		t := int(node) << (ix.shift + 1 - bits.Len32(uint32(node))) // leftmost leaf
		minX := int64(maxInt64)
		if t -= ix.n; t < len(ix.vals) {
			minX = ix.vals[t]
		}
		ix.push(fitNode{ub: ub, minX: minX, node: node})
	}
}

// bound computes the bound of a node from its aggregates a. At a leaf
// it is the scan's score: worst fit, the smallest remaining room over the
// resources (to maximise); best fit, minus the total remaining room.
// Above, the rooms of the node's largest (worst fit) or smallest (best
// fit) room per resource give a bound (rounding is monotone), and the
// normalised aggregates others: worst fit, min_k(n_k - c_k) <=
// Σ_k w_k (n_k - c_k) for weights summing to 1; best fit, -Σ(n_k - c_k)
// <= Σ c_k - min Σ n_k. Those add a margin for rounding, far above the
// float error and far below any difference of scores that matters.
func (ix *fitIndex) bound(a []int64, sizes []int64, bestFit, leaf bool, cs float64) float64 {
	r := ix.r
	if bestFit {
		sum := 0.0
		for k := range r {
			sum += float64(a[r+k]-sizes[k]) * ix.inv[k]
		}
		ub := -sum
		if !leaf {
			b := cs - ffrom(a[ix.stride-1])
			ub = min(ub, b+fitMargin(b, cs))
		}
		return ub
	}
	ub := 1e300
	for k := range r {
		ub = min(ub, float64(a[k]-sizes[k])*ix.inv[k])
	}
	if !leaf {
		for q, wc := range ix.wc {
			b := ffrom(a[2*r+q]) - wc
			ub = min(ub, b+fitMargin(b, wc))
		}
		o := 2*r + len(ix.wc)
		for q, dq := range ix.dq {
			g := ffrom(a[o+q])
			b := g + dq
			ub = min(ub, b+fitMargin(g, cs+ix.dOff[q]))
		}
	}
	return ub
}

// fitMargin is the rounding margin of a bound b derived from normalised
// values of magnitude up to about |b| + c.
func fitMargin(b, c float64) float64 { return 1e-9 * (1 + math.Abs(b) + c) }

// before orders the frontier: larger bound first, then smaller value.
func (a fitNode) before(b fitNode) bool {
	return a.ub > b.ub || (a.ub == b.ub && a.minX < b.minX)
}

func (ix *fitIndex) push(e fitNode) {
	h := append(ix.front, e)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].before(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	ix.front = h
}

func (ix *fitIndex) pop() fitNode {
	h := ix.front
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1].before(h[c]) {
			c++
		}
		if !h[c].before(h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	ix.front = h
	return top
}

// fitPrunable reports whether every bin in an unfixed item's domain has
// room for the item on every resource of ix: true at a fixpoint of
// incremental bin-packing propagators when no bin needs more load than
// its fixed items bring (then lo(load) is the required load and the
// propagator removed the bin from every item larger than its slack).
func (ix *fitIndex) fitPrunable(s *solver) bool {
	for _, p := range ix.props {
		if !p.inc || s.revs[p.rNeedy][len(p.bins)] != 0 {
			return false
		}
	}
	return true
}
