package cp

import "math/bits"

// The store holds the current domain of every variable during search and
// the trail that undoes changes on backtrack. Small ranges (span below
// bitsetSpan) keep a bitset so that value removal is O(1); other
// variables keep bounds plus an immutable interval list that is replaced
// (and the old one trailed) when a hole is punched, which is rare.

const bitsetSpan = 1 << 12

// valueBitsetSpan is the bitset limit for variables used as values
// (bin-packing items, all_different members, membership targets): their
// domains get holes punched one value at a time, which is O(1) on a
// bitset and O(intervals) with allocation otherwise.
const valueBitsetSpan = 1 << 20

const (
	tLo uint8 = iota
	tHi
	tWord
	tIvs
	tRev // reversible propagator state: revs[v][w] = old
)

type trailEnt struct {
	v    int32
	kind uint8
	w    int32 // word index (tWord) or ivTrail index (tIvs)
	old  int64
}

type store struct {
	lo, hi  []int64
	base    []int64
	bits    [][]uint64   // nil for interval variables
	ivs     [][]interval // interval variables: allowed values (further cut by lo/hi)
	trail   trail
	ivTrail [][]interval
	revs    [][]int64     // reversible arrays of propagator state
	slab    []uint64      // free words for new bitsets
	touch   func(v int32) // called after every domain change

	// Trail economy. Nothing is trailed at level 0 (it is never undone).
	// A bitset word or reversible value is saved at most once per epoch:
	// the epoch changes at every pushLevel and every undo, so an epoch is
	// a stretch of one level that no undo cuts, and the first saved value
	// is the one to restore. A mass removal (a bin filled up: its value
	// leaves thousands of items; a bound: hundreds of bins leave an item)
	// then costs one entry per word instead of one per value.
	levels int
	epoch  uint32
	wstamp [][]uint32 // per bitset variable and word: epoch of its last save
	rstamp [][]uint32 // per reversible array and value
	wslab  []uint32
	// last is the latest domain change (trailed or not), for propagators
	// that want to know what a notification was about.
	last trailEnt
	// Cached domain sizes (branching reads them for every variable at
	// every node); invalidated by every change and undo.
	sz   []int64
	szOK []bool
	// stampSink receives the stamps keepHolding loads ahead of use.
	stampSink uint32
}

// newRev allocates a reversible array of n values (restored on backtrack).
func (st *store) newRev(n int) int32 {
	st.revs = append(st.revs, make([]int64, n))
	st.rstamp = append(st.rstamp, make([]uint32, n))
	return int32(len(st.revs) - 1)
}

// setRev sets revs[id][i] = x, trailing the old value.
func (st *store) setRev(id int32, i int, x int64) {
	a := st.revs[id]
	if a[i] == x {
		return
	}
	if st.levels > 0 && st.rstamp[id][i] != st.epoch {
		st.rstamp[id][i] = st.epoch
		st.trail.push(trailEnt{v: id, kind: tRev, w: int32(i), old: a[i]})
	}
	a[i] = x
}

// newEpoch starts a new trail epoch (see store.epoch).
func (st *store) newEpoch() {
	st.epoch++
	if st.epoch == 0 { // wrapped: no stamp may match a future epoch
		for _, w := range st.wstamp {
			clear(w)
		}
		for _, w := range st.rstamp {
			clear(w)
		}
		st.epoch = 1
	}
}

// record notes a change of v and trails it unless at level 0.
func (st *store) record(e trailEnt) {
	st.last = e
	st.szOK[e.v] = false
	if st.levels > 0 {
		st.trail.push(e)
	}
}

// trail is the undo history, in chunks of fixed size: it grows without
// copying (append would copy it at every doubling and leave the old array
// as garbage, which on large models held the peak memory at about twice
// the history) and keeps its chunks for reuse after an undo.
type trail struct {
	chunks [][]trailEnt
	n      int
}

const trailChunk = 1 << 12

func (t *trail) len() int { return t.n }

func (t *trail) push(e trailEnt) {
	c := t.n / trailChunk
	if c == len(t.chunks) {
		t.chunks = append(t.chunks, make([]trailEnt, trailChunk))
	}
	t.chunks[c][t.n%trailChunk] = e
	t.n++
}

func (t *trail) at(i int) trailEnt { return t.chunks[i/trailChunk][i%trailChunk] }

func (st *store) addVar(d Domain, value bool) {
	lo, hi := d.Min(), d.Max()
	st.lo = append(st.lo, lo)
	st.hi = append(st.hi, hi)
	st.base = append(st.base, lo)
	st.sz = append(st.sz, 0)
	st.szOK = append(st.szOK, false)
	if st.epoch == 0 {
		st.epoch = 1
	}
	if hi-lo < bitsetSpan || (value && hi-lo < valueBitsetSpan) {
		k := int((hi-lo)/64 + 1)
		if len(st.slab) < k {
			st.slab = make([]uint64, max(k, 1<<14))
		}
		w := st.slab[:k:k] // bitsets are carved from slabs (fewer allocations)
		st.slab = st.slab[k:]
		for _, iv := range d.ivs {
			setBitRange(w, iv.lo-lo, iv.hi-lo)
		}
		st.bits = append(st.bits, w)
		st.ivs = append(st.ivs, nil)
		if len(st.wslab) < k {
			st.wslab = make([]uint32, max(k, 1<<14))
		}
		st.wstamp = append(st.wstamp, st.wslab[:k:k])
		st.wslab = st.wslab[k:]
	} else {
		st.bits = append(st.bits, nil)
		st.ivs = append(st.ivs, d.ivs)
		st.wstamp = append(st.wstamp, nil)
	}
}

func (st *store) fixed(v int32) bool { return st.lo[v] == st.hi[v] }

func (st *store) contains(v int32, x int64) bool {
	if x < st.lo[v] || x > st.hi[v] {
		return false
	}
	if b := st.bits[v]; b != nil {
		k := x - st.base[v]
		return b[k>>6]&(1<<(k&63)) != 0
	}
	return Domain{st.ivs[v]}.Contains(x)
}

// keepHolding keeps, in order, the variables of vs whose domain holds x;
// x must be within each one's bounds. The bitset tests are independent
// loads issued back to back: on large models each is a cache miss, and
// interleaved with the removals that follow them they were paid one
// after another (a bin filling up leaves thousands of items).
func (st *store) keepHolding(vs []int32, x int64) []int32 {
	n := 0
	for _, v := range vs {
		var in int
		if b := st.bits[v]; b != nil {
			k := x - st.base[v]
			in = int(b[k>>6] >> (k & 63) & 1)
		} else if (Domain{st.ivs[v]}).Contains(x) {
			in = 1
		}
		vs[n] = v
		n += in
	}
	if st.levels > 0 {
		// The removals that follow read each holder's trail stamp, in
		// another array: load those back to back as well (the sink keeps
		// the loads).
		var sink uint32
		for _, v := range vs[:n] {
			if w := st.wstamp[v]; w != nil {
				sink |= w[(x-st.base[v])>>6]
			}
		}
		st.stampSink = sink
	}
	return vs[:n]
}

// next returns the smallest value >= x in v's domain.
func (st *store) next(v int32, x int64) (int64, bool) {
	if x < st.lo[v] {
		x = st.lo[v]
	}
	if x > st.hi[v] {
		return 0, false
	}
	if b := st.bits[v]; b != nil {
		k := x - st.base[v]
		end := st.hi[v] - st.base[v]
		wi := k >> 6
		w := b[wi] &^ (1<<(k&63) - 1)
		for {
			if w != 0 {
				r := wi<<6 + int64(bits.TrailingZeros64(w))
				if r > end {
					return 0, false
				}
				return r + st.base[v], true
			}
			wi++
			if wi<<6 > end {
				return 0, false
			}
			w = b[wi]
		}
	}
	for _, iv := range st.ivs[v] {
		if iv.hi >= x {
			r := max(iv.lo, x)
			if r > st.hi[v] {
				return 0, false
			}
			return r, true
		}
	}
	return 0, false
}

// prev returns the largest value <= x in v's domain.
func (st *store) prev(v int32, x int64) (int64, bool) {
	if x > st.hi[v] {
		x = st.hi[v]
	}
	if x < st.lo[v] {
		return 0, false
	}
	if b := st.bits[v]; b != nil {
		k := x - st.base[v]
		start := st.lo[v] - st.base[v]
		wi := k >> 6
		w := b[wi]
		if s := k & 63; s < 63 {
			w &= 1<<(s+1) - 1
		}
		for {
			if w != 0 {
				r := wi<<6 + 63 - int64(bits.LeadingZeros64(w))
				if r < start {
					return 0, false
				}
				return r + st.base[v], true
			}
			wi--
			if wi < 0 || (wi<<6)+63 < start {
				return 0, false
			}
			w = b[wi]
		}
	}
	ivs := st.ivs[v]
	for i := len(ivs) - 1; i >= 0; i-- {
		if ivs[i].lo <= x {
			r := min(ivs[i].hi, x)
			if r < st.lo[v] {
				return 0, false
			}
			return r, true
		}
	}
	return 0, false
}

// size returns the number of values in v's domain.
func (st *store) size(v int32) int64 {
	lo, hi := st.lo[v], st.hi[v]
	if lo == hi {
		return 1
	}
	if st.szOK[v] {
		return st.sz[v]
	}
	n := st.countSize(v)
	st.sz[v], st.szOK[v] = n, true
	return n
}

func (st *store) countSize(v int32) int64 {
	lo, hi := st.lo[v], st.hi[v]
	if b := st.bits[v]; b != nil {
		a, z := lo-st.base[v], hi-st.base[v]
		var n int
		for wi := a >> 6; wi <= z>>6; wi++ {
			w := b[wi]
			if wi == a>>6 {
				w &^= 1<<(a&63) - 1
			}
			if wi == z>>6 && z&63 < 63 {
				w &= 1<<(z&63+1) - 1
			}
			n += bits.OnesCount64(w)
		}
		return int64(n)
	}
	var n int64
	for _, iv := range st.ivs[v] {
		l, h := max(iv.lo, lo), min(iv.hi, hi)
		if l <= h {
			n += h - l + 1
		}
	}
	return n
}

func (st *store) setMin(v int32, x int64) bool {
	if x <= st.lo[v] {
		return true
	}
	n, ok := st.next(v, x)
	if !ok {
		return false
	}
	st.record(trailEnt{v: v, kind: tLo, old: st.lo[v]})
	st.lo[v] = n
	st.touch(v)
	return true
}

func (st *store) setMax(v int32, x int64) bool {
	if x >= st.hi[v] {
		return true
	}
	n, ok := st.prev(v, x)
	if !ok {
		return false
	}
	st.record(trailEnt{v: v, kind: tHi, old: st.hi[v]})
	st.hi[v] = n
	st.touch(v)
	return true
}

func (st *store) fix(v int32, x int64) bool {
	if !st.contains(v, x) {
		return false
	}
	return st.setMin(v, x) && st.setMax(v, x)
}

// remove deletes x from v's domain.
func (st *store) remove(v int32, x int64) bool {
	switch {
	case x < st.lo[v] || x > st.hi[v]:
		return true
	case x == st.lo[v]:
		return st.setMin(v, x+1)
	case x == st.hi[v]:
		return st.setMax(v, x-1)
	}
	if b := st.bits[v]; b != nil {
		k := x - st.base[v]
		if b[k>>6]&(1<<(k&63)) == 0 {
			return true
		}
		wi := k >> 6
		e := trailEnt{v: v, kind: tWord, w: int32(wi), old: int64(b[wi])}
		st.last = e
		st.sz[v]-- // x is strictly inside [lo, hi]: exact if the cache is valid
		if st.levels > 0 && st.wstamp[v][wi] != st.epoch {
			st.wstamp[v][wi] = st.epoch
			st.trail.push(e)
		}
		b[wi] &^= 1 << (k & 63)
		st.touch(v)
		return true
	}
	d := Domain{st.ivs[v]}
	if !d.Contains(x) {
		return true
	}
	st.setIvs(v, d.Intersect(DomainFromValues(x).Complement()).ivs)
	return true
}

// removeBits deletes from bitset variable v the values of word wi whose
// bits are set in m (offsets from the base; bits outside [lo, hi] are
// ignored): one trail entry and one notification per word, where remove
// would cost one per value (a propagator clearing thousands of bins from
// an item at once). It reports false on a wipe-out.
func (st *store) removeBits(v int32, wi int, m uint64) bool {
	b := st.bits[v]
	a, z := st.lo[v]-st.base[v], st.hi[v]-st.base[v]
	m &= b[wi] & windowMask(int64(wi), a, z)
	if m == 0 {
		return true
	}
	// The bounds move with setMin and setMax (which find the next value
	// in the bitset); only values strictly inside are cleared here, so
	// the domain never has a bound outside the bitset.
	loGone := a>>6 == int64(wi) && m&(1<<(a&63)) != 0
	hiGone := z>>6 == int64(wi) && m&(1<<(z&63)) != 0
	if loGone {
		m &^= 1 << (a & 63)
	}
	if hiGone {
		m &^= 1 << (z & 63)
	}
	if m != 0 {
		e := trailEnt{v: v, kind: tWord, w: int32(wi), old: int64(b[wi])}
		st.last = e
		st.sz[v] -= int64(bits.OnesCount64(m)) // inside (lo, hi): exact if the cache is valid
		if st.levels > 0 && st.wstamp[v][wi] != st.epoch {
			st.wstamp[v][wi] = st.epoch
			st.trail.push(e)
		}
		b[wi] &^= m
		st.touch(v)
	}
	if loGone && !st.setMin(v, st.lo[v]+1) {
		return false
	}
	if hiGone && !st.setMax(v, st.hi[v]-1) {
		return false
	}
	return true
}

// windowMask is the mask of the bits of word wi within offsets [a, b].
func windowMask(wi, a, b int64) uint64 {
	lo, hi := wi<<6, wi<<6+63
	if hi < a || lo > b {
		return 0
	}
	m := ^uint64(0)
	if a > lo {
		m &^= 1<<(a-lo) - 1
	}
	if b < hi {
		m &= 1<<(b-lo+1) - 1
	}
	return m
}

func (st *store) setIvs(v int32, ivs []interval) {
	e := trailEnt{v: v, kind: tIvs, w: -1}
	if st.levels > 0 {
		st.ivTrail = append(st.ivTrail, st.ivs[v])
		e.w = int32(len(st.ivTrail) - 1)
	}
	st.record(e)
	st.ivs[v] = ivs
	st.touch(v)
}

// intersect restricts v's domain to values in d.
func (st *store) intersect(v int32, d Domain) bool {
	if d.IsEmpty() {
		return false
	}
	if !st.setMin(v, d.Min()) || !st.setMax(v, d.Max()) {
		return false
	}
	if st.bits[v] != nil {
		for x, ok := st.lo[v], true; ok; x, ok = st.next(v, x+1) {
			if !d.Contains(x) && !st.remove(v, x) {
				return false
			}
			if x == st.hi[v] {
				break
			}
		}
		return st.lo[v] <= st.hi[v]
	}
	cur := Domain{st.ivs[v]}.Intersect(NewDomain(st.lo[v], st.hi[v]))
	nd := cur.Intersect(d)
	if nd.IsEmpty() {
		return false
	}
	if len(nd.ivs) != len(cur.ivs) || nd.Min() != cur.Min() || nd.Max() != cur.Max() || nd.Size() != cur.Size() {
		st.setIvs(v, nd.ivs)
		return st.setMin(v, nd.Min()) && st.setMax(v, nd.Max())
	}
	return true
}

// undo pops trail entries down to length n.
func (st *store) undo(n int) {
	st.newEpoch()
	for i := st.trail.len() - 1; i >= n; i-- {
		e := st.trail.at(i)
		switch e.kind {
		case tLo:
			st.lo[e.v] = e.old
			st.szOK[e.v] = false
		case tHi:
			st.hi[e.v] = e.old
			st.szOK[e.v] = false
		case tWord:
			st.bits[e.v][e.w] = uint64(e.old)
			st.szOK[e.v] = false
		case tIvs:
			st.szOK[e.v] = false
			st.ivs[e.v] = st.ivTrail[e.w]
			st.ivTrail = st.ivTrail[:e.w]
		case tRev:
			st.revs[e.v][e.w] = e.old
		}
	}
	st.trail.n = n
}

// domain returns v's current domain (for debugging and small domains).
func (st *store) domain(v int32) Domain {
	var vals []int64
	if st.bits[v] == nil {
		return Domain{st.ivs[v]}.Intersect(NewDomain(st.lo[v], st.hi[v]))
	}
	for x, ok := st.lo[v], true; ok; x, ok = st.next(v, x+1) {
		vals = append(vals, x)
		if x == st.hi[v] {
			break
		}
	}
	return DomainFromValues(vals...)
}

// setBitRange sets bits a..b (inclusive) of w, a word at a time.
func setBitRange(w []uint64, a, b int64) {
	for a <= b {
		wi, off := a>>6, a&63
		n := min(b-a+1, 64-off) // bits in this word
		var mask uint64
		if n == 64 {
			mask = ^uint64(0)
		} else {
			mask = (1<<n - 1) << off
		}
		w[wi] |= mask
		a += n
	}
}
