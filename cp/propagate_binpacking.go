package cp

import (
	"math/bits"
	"sort"
)

// binPackProp: loads[j] == Σ sizes[i]*[assign[i]==bins[j]] for one
// resource. Per bin it reasons on the required load (items fixed there)
// and the possible load (required + candidates): it prunes candidates
// that no longer fit and fixes items without which a bin cannot reach its
// minimum load (Shaw 2004 "load maintenance" and "commitment"), and uses
// the total size when every item must land in a listed bin.
//
// When every item is a bitset variable and the bin values are dense
// (placement models: items over node codes), the propagator is
// incremental (Weave's models have thousands of bins, and a placement
// removes thousands of values at once, so nothing may cost O(bins) per
// decision):
//
//   - the required load per bin lives in a reversible array, updated in
//     O(1) when an item becomes fixed;
//   - a wake-up only processes the items and bins that changed (collected
//     by notify); a bin is processed when its required load or its load
//     variable changed, or when it lost a candidate while it still needs
//     load (lo(load) > required);
//   - the possible load of a processed bin is computed on demand from the
//     items (O(items)), and bounds the load from above only once at most
//     two candidates remain (applied eagerly it would lower the bound of
//     every bin at every placement and wake everything that watches the
//     loads); when every item is fixed, every load is fixed.
//
// Otherwise every wake-up recomputes from scratch (propagateFull).
type binPackProp struct {
	items  []int32
	sizes  []int64
	bins   []int64
	loads  []int32
	binOf  map[int64]int // bin value -> j, when the bin values are spread out
	dense  []int32       // bin value - binLo -> j or -1, when they are not
	binLo  int64
	closed bool // every item's initial domain is within bins
	total  int64
	req    []int64
	pos    []int64
	buf    []int32
	cand   []int32 // filterBin scratch: items that may lose a bin

	// Incremental state (inc == true).
	inc      bool
	rReq     int32   // rev: required load per bin
	rKnown   int32   // rev: per item, the domain words already processed
	rFixed   int32   // rev: per item, 1+bin counted in req (-1: fixed outside the bins)
	rSlack   int32   // rev: per bin, hi(load)-req at the last removal scan
	rRoom    int32   // rev: per bin, pos-lo(load) at the last commitment scan
	rSum     int32   // rev: [Σ lo(load), Σ hi(load)] as accounted, [2] = unfixed items
	rLoadLo  int32   // rev: per bin, lo(load) as accounted in rSum
	rLoadHi  int32   // rev: per bin, hi(load) as accounted in rSum
	rNeedy   int32   // rev: per bin, 1 if lo(load) > req at its last filterBin; [len(bins)] counts them
	spanMax  int64   // largest initial load span
	off      []int   // item -> offset of its words in known
	bySize   []int32 // item indices by decreasing size
	sizeDesc []int64 // sizes in bySize order
	dirtyI   []int32
	inDirtyI []bool
	dirtyB   []int32
	inDirtyB []bool
	allBins  bool // every bin must be processed (all items fixed)
	fixedNow bool // filterBin fixed an item (its bin's required load is stale)
	st       *store
	words    [][]int32 // per item: word ranges [from, to] changed since its last sync
	full     []bool    // per item: rescan every word at the next sync
}

// initIncremental sets up the incremental state; it returns false if the
// model does not qualify (then the full recomputation is used).
func (p *binPackProp) initIncremental(s *solver) bool {
	if p.dense == nil {
		return false
	}
	n := 0
	p.off = make([]int, len(p.items))
	for i, v := range p.items {
		if s.bits[v] == nil {
			return false
		}
		p.off[i] = n
		n += len(s.bits[v])
	}
	p.inc = true
	p.rReq = s.newRev(len(p.bins))
	p.rKnown = s.newRev(n)
	p.rFixed = s.newRev(len(p.items))
	p.rSlack = s.newRev(len(p.bins))
	p.rRoom = s.newRev(len(p.bins))
	p.rSum = s.newRev(3)
	p.rLoadLo = s.newRev(len(p.bins))
	p.rLoadHi = s.newRev(len(p.bins))
	p.rNeedy = s.newRev(len(p.bins) + 1)
	for j, l := range p.loads {
		s.revs[p.rLoadLo][j], s.revs[p.rLoadHi][j] = s.lo[l], s.hi[l]
		s.revs[p.rSum][0] += s.lo[l]
		s.revs[p.rSum][1] += s.hi[l]
		p.spanMax = max(p.spanMax, s.hi[l]-s.lo[l])
	}
	s.revs[p.rSum][2] = int64(len(p.items))
	known := s.revs[p.rKnown]
	for i, v := range p.items {
		w := known[p.off[i] : p.off[i]+len(s.bits[v])]
		for wi, x := range s.bits[v] {
			w[wi] = int64(x)
		}
		maskBounds(w, s.lo[v]-s.base[v], s.hi[v]-s.base[v])
	}
	const big = int64(1) << 62
	for j := range p.bins {
		s.revs[p.rSlack][j] = big
		s.revs[p.rRoom][j] = big
	}
	p.bySize = make([]int32, len(p.items))
	for i := range p.bySize {
		p.bySize[i] = int32(i)
	}
	sort.SliceStable(p.bySize, func(a, b int) bool { return p.sizes[p.bySize[a]] > p.sizes[p.bySize[b]] })
	p.sizeDesc = make([]int64, len(p.items))
	for k, i := range p.bySize {
		p.sizeDesc[k] = p.sizes[i]
	}
	p.inDirtyI = make([]bool, len(p.items))
	p.inDirtyB = make([]bool, len(p.bins))
	p.st = &s.store
	p.words = make([][]int32, len(p.items))
	p.full = make([]bool, len(p.items))
	for i := range p.full {
		p.full[i] = true
	}
	// notify does nothing for an unfixed item while no bin needs load.
	needy := &s.revs[p.rNeedy][len(p.bins)]
	for i, v := range p.items {
		s.notify[v] = append(s.notify[v], notifyEnt{p, int32(i), needy})
		p.markItem(int32(i))
	}
	for j, l := range p.loads {
		s.notify[l] = append(s.notify[l], notifyEnt{p: p, pos: -1 - int32(j)})
		p.markBin(int32(j))
	}
	return true
}

// maskBounds clears the bits of w outside [a, b] (offsets from the base).
func maskBounds(w []int64, a, b int64) {
	for wi := range w {
		lo, hi := int64(wi)<<6, int64(wi)<<6+63
		if hi < a || lo > b {
			w[wi] = 0
			continue
		}
		x := uint64(w[wi])
		if a > lo {
			x &^= 1<<(a-lo) - 1
		}
		if b < hi {
			x &= 1<<(b-lo+1) - 1
		}
		w[wi] = int64(x)
	}
}

func (p *binPackProp) markItem(i int32) {
	if !p.inDirtyI[i] {
		p.inDirtyI[i] = true
		p.dirtyI = append(p.dirtyI, i)
	}
}

func (p *binPackProp) markBin(j int32) {
	if !p.inDirtyB[j] {
		p.inDirtyB[j] = true
		p.dirtyB = append(p.dirtyB, j)
	}
}

// notify is called on every domain change of item i (i >= 0) or of the
// load of bin -1-i.
func (p *binPackProp) notify(i int32) {
	if i >= 0 {
		if v := p.items[i]; p.st.revs[p.rNeedy][len(p.bins)] == 0 && p.st.lo[v] != p.st.hi[v] {
			// What syncItem would do with it: nothing (no bin needs load;
			// see there). A bin that starts to need load is filtered
			// from the current domains anyway. Bins lose items by the
			// million on large models, so this is worth the shortcut.
			return
		}
		p.noteWords(i)
		p.markItem(i)
	} else {
		p.markBin(-1 - i)
	}
}

func (p *binPackProp) propagate(s *solver) bool {
	if !p.inc {
		return p.propagateFull(s)
	}
	req := s.revs[p.rReq]
	for len(p.dirtyI) > 0 || len(p.dirtyB) > 0 || p.allBins {
		// 1. Account for item domain changes.
		for len(p.dirtyI) > 0 {
			i := p.dirtyI[len(p.dirtyI)-1]
			p.dirtyI = p.dirtyI[:len(p.dirtyI)-1]
			p.inDirtyI[i] = false
			p.syncItem(s, int(i), req)
		}
		if p.allBins {
			p.allBins = false
			for j := range p.bins {
				p.markBin(int32(j))
			}
		}
		// 2. Tighten the loads and filter the dirty bins.
		if !p.bulkSlack(s, req) {
			p.reset()
			return false
		}
		for len(p.dirtyB) > 0 {
			j := p.dirtyB[len(p.dirtyB)-1]
			p.dirtyB = p.dirtyB[:len(p.dirtyB)-1]
			p.inDirtyB[j] = false
			if s.ctl != nil && s.rootStop() {
				p.reset()
				return false
			}
			if !p.filterBin(s, int(j), req) {
				p.reset()
				return false
			}
			if p.fixedNow {
				// Account for the fixed items first (required loads).
				// Removals alone wait for the end of the pass: breaking
				// on them costs a rescan of every touched item per bin,
				// O(items x bins) when a bound lowers every capacity.
				p.fixedNow = false
				break
			}
		}
		if len(p.dirtyI) == 0 && len(p.dirtyB) == 0 && p.closed && len(p.loads) > 1 {
			if !p.totalRule(s) {
				p.reset()
				return false
			}
		}
	}
	return true
}

// reset drops pending work after a failure (the state is restored by
// backtracking to a fixpoint, where nothing is pending).
func (p *binPackProp) reset() {
	for _, i := range p.dirtyI {
		p.inDirtyI[i] = false
		p.words[i], p.full[i] = p.words[i][:0], false
	}
	for _, j := range p.dirtyB {
		p.inDirtyB[j] = false
	}
	p.dirtyI, p.dirtyB = p.dirtyI[:0], p.dirtyB[:0]
	p.allBins, p.fixedNow = false, false
}

// syncItem processes item i's domain change: a bin that lost it while
// still needing load is marked, and a fixed item is added to the required
// load of its bin.
func (p *binPackProp) syncItem(s *solver, i int, req []int64) {
	v := p.items[i]
	sz := p.sizes[i]
	ranges := p.words[i]
	full := p.full[i]
	p.words[i], p.full[i] = ranges[:0], false
	if s.revs[p.rFixed][i] != 0 {
		return // already accounted as fixed; only a wipe-out can follow
	}
	a, z := s.lo[v]-s.base[v], s.hi[v]-s.base[v]
	// A fixed item's known words are not updated (nor trailed): they are
	// not read again until backtracking unfixes it, which restores the
	// domain they describe.
	nowFixed := s.lo[v] == s.hi[v]
	// Item syncs only serve bins that need load (lo(load) > req): with
	// none, skip them (a placement removes its bin from thousands of
	// items; max-min packings never raise a load's minimum until the
	// end). The known words then stay a superset of the domain, so a
	// later sync reports these losses again: extra marks, never a missed
	// one. A bin whose need changed since its last filterBin is dirty
	// and is filtered from the current domains in this pass anyway.
	if s.revs[p.rNeedy][len(p.bins)] == 0 {
		ranges = ranges[:0]
		full = false
	}
	// Only the words notify saw change, unless it lost track.
	if full {
		ranges = append(ranges[:0], 0, int32(len(s.bits[v])-1))
	}
	for r := 0; r+1 < len(ranges); r += 2 {
		for wi := int(ranges[r]); wi <= int(ranges[r+1]); wi++ {
			p.syncWord(s, i, wi, a, z, nowFixed, req)
		}
	}
	if nowFixed {
		if j, ok := p.bin(s.lo[v]); ok {
			s.setRev(p.rFixed, i, int64(j)+1)
			if sz > 0 {
				s.setRev(p.rReq, j, req[j]+sz)
				p.markBin(int32(j))
			}
		} else {
			s.setRev(p.rFixed, i, -1)
		}
		left := s.revs[p.rSum][2] - 1
		s.setRev(p.rSum, 2, left)
		if left == 0 {
			p.allBins = true
		}
	}
}

// syncWord processes word wi of item i's domain (offsets a..z are the
// current bounds): it updates the known word and marks the bins that
// lost the item while still needing load.
func (p *binPackProp) syncWord(s *solver, i, wi int, a, z int64, nowFixed bool, req []int64) {
	v := p.items[i]
	off := p.off[i]
	old := uint64(s.revs[p.rKnown][off+wi])
	if old == 0 {
		return
	}
	cur := s.bits[v][wi]
	lo := int64(wi) << 6
	if lo+63 < a || lo > z {
		cur = 0
	} else {
		if a > lo {
			cur &^= 1<<(a-lo) - 1
		}
		if z < lo+63 {
			cur &= 1<<(z-lo+1) - 1
		}
	}
	gone := old &^ cur
	if gone == 0 {
		return
	}
	if !nowFixed {
		s.setRev(p.rKnown, off+wi, int64(old&cur))
	}
	if p.sizes[i] == 0 {
		return
	}
	for gone != 0 {
		k := s.base[v] + lo + int64(bits.TrailingZeros64(gone)) - p.binLo
		gone &= gone - 1
		if k >= 0 && k < int64(len(p.dense)) && p.dense[k] >= 0 {
			j := p.dense[k]
			if s.lo[p.loads[j]] > req[j] {
				p.markBin(j) // it needed this candidate
			}
		}
	}
}

// noteWords records which words of item i's domain the change being
// notified touched, read from the change the store just recorded
// (store.last, trailed or not); anything else makes the next sync scan
// every word.
func (p *binPackProp) noteWords(i int32) {
	if p.full[i] {
		return
	}
	st := p.st
	v := p.items[i]
	if len(p.words[i]) < 64 {
		e := st.last
		if e.v == v {
			base := st.base[v]
			switch e.kind {
			case tWord:
				p.words[i] = append(p.words[i], e.w, e.w)
				return
			case tLo:
				if e.old <= st.lo[v] {
					p.words[i] = append(p.words[i], int32((e.old-base)>>6), int32((st.lo[v]-base)>>6))
					return
				}
			case tHi:
				if e.old >= st.hi[v] {
					p.words[i] = append(p.words[i], int32((st.hi[v]-base)>>6), int32((e.old-base)>>6))
					return
				}
			}
		}
	}
	p.full[i] = true
}

// possible returns the possible load of bin j (items that may still go
// there, fixed ones included) and the number of unfixed such items of
// positive size.
func (p *binPackProp) possible(s *solver, j int) (pos int64, cand int) {
	bv := p.bins[j]
	for i, v := range p.items {
		sz := p.sizes[i]
		if sz == 0 || !s.contains(v, bv) {
			continue
		}
		pos += sz
		if s.lo[v] != s.hi[v] {
			cand++
		}
	}
	return pos, cand
}

// filterBin tightens the load of bin j, removes j from the items that no
// longer fit, and fixes into j the items without which it cannot reach its
// minimum load.
func (p *binPackProp) filterBin(s *solver, j int, req []int64) bool {
	l := p.loads[j]
	bv := p.bins[j]
	if !s.setMin(l, req[j]) {
		return false
	}
	if needy := b2i(s.lo[l] > req[j]); needy != s.revs[p.rNeedy][j] {
		n := len(p.bins)
		s.setRev(p.rNeedy, j, needy)
		s.setRev(p.rNeedy, n, s.revs[p.rNeedy][n]+2*needy-1)
	}
	if s.revs[p.rSum][2] == 0 {
		if !s.setMax(l, req[j]) { // every item is fixed
			return false
		}
	} else if s.lo[l] > req[j] {
		// The bin needs more load: look at the possible load.
		pos, cand := p.possible(s, j)
		if pos < s.lo[l] || (cand <= 2 && !s.setMax(l, pos)) {
			return false
		}
		room := pos - s.lo[l]
		if old := s.revs[p.rRoom][j]; room < old {
			s.setRev(p.rRoom, j, room)
			k := sort.Search(len(p.sizeDesc), func(k int) bool { return p.sizeDesc[k] <= old })
			for ; k < len(p.bySize) && p.sizeDesc[k] > room; k++ {
				i := p.bySize[k]
				v := p.items[i]
				if s.lo[v] != s.hi[v] && s.contains(v, bv) {
					if !s.fix(v, bv) {
						return false
					}
					p.fixedNow = true
				}
			}
		}
	}
	// With every item fixed there is nothing to remove (the last
	// placement fixes every load, whose slack drops to 0: scanning the
	// items of every bin then cost O(items x bins) for nothing). The
	// recorded slack stays above the real one, which only widens a later
	// scan.
	slack := s.hi[l] - req[j]
	if old := s.revs[p.rSlack][j]; slack < old && s.revs[p.rSum][2] > 0 {
		s.setRev(p.rSlack, j, slack)
		// Items with size in (slack, old] may still have j; larger ones
		// were removed when the slack was old.
		k := sort.Search(len(p.sizeDesc), func(k int) bool { return p.sizeDesc[k] <= old })
		cand := p.cand[:0]
		for ; k < len(p.bySize) && p.sizeDesc[k] > slack; k++ {
			v := p.items[p.bySize[k]]
			if s.lo[v] != s.hi[v] && bv >= s.lo[v] && bv <= s.hi[v] {
				cand = append(cand, v)
			}
		}
		cand = s.keepHolding(cand, bv)
		p.cand = cand
		for _, v := range cand {
			if !s.remove(v, bv) {
				return false
			}
		}
	}
	if p.closed {
		lo, hi := s.revs[p.rLoadLo], s.revs[p.rLoadHi]
		sum := s.revs[p.rSum]
		if dl, dh := s.lo[l]-lo[j], s.hi[l]-hi[j]; dl != 0 || dh != 0 {
			s.setRev(p.rSum, 0, sum[0]+dl)
			s.setRev(p.rSum, 1, sum[1]+dh)
			s.setRev(p.rLoadLo, j, s.lo[l])
			s.setRev(p.rLoadHi, j, s.hi[l])
		}
	}
	return true
}

// bulkSlack performs, item by item, the removals that filterBin would
// make bin by bin for the dirty bins whose slack (hi(load) - required)
// dropped, when those are many: at the root every bin's slack drops from
// unbounded to its capacity, and a bound on the objective lowers every
// capacity at once, which removed millions of (item, bin) pairs one value
// at a time (a cache miss, a trail entry and a notification each). Items
// go by increasing size while a bitset collects the bins whose slack is
// below the size, and whole words of the item's domain are cleared. The
// bins' recorded slack is then updated, so filterBin finds nothing left
// to remove.
func (p *binPackProp) bulkSlack(s *solver, req []int64) bool {
	if len(p.dirtyB) < bulkSlackMinBins || s.revs[p.rSum][2] == 0 {
		return true
	}
	// Cost of the per-bin scans (items with size in (slack, old]) against
	// that of a pass over every item's words.
	type binSlack struct {
		j     int32
		slack int64
	}
	var drop []binSlack
	scans := 0
	for _, j := range p.dirtyB {
		slack, old := s.hi[p.loads[j]]-req[j], s.revs[p.rSlack][j]
		if slack >= old || slack < 0 {
			continue // nothing to remove, or overfull (filterBin fails it)
		}
		a := sort.Search(len(p.sizeDesc), func(k int) bool { return p.sizeDesc[k] <= old })
		b := sort.Search(len(p.sizeDesc), func(k int) bool { return p.sizeDesc[k] <= slack })
		scans += b - a
		drop = append(drop, binSlack{j, slack})
	}
	if scans < len(s.revs[p.rKnown]) {
		return true
	}
	sort.Slice(drop, func(a, b int) bool { return drop[a].slack < drop[b].slack })
	tooSmall := make([]uint64, (len(p.dense)+63)/64)
	next := 0
	for k := len(p.bySize) - 1; k >= 0; k-- { // increasing size
		i := p.bySize[k]
		sz := p.sizes[i]
		for ; next < len(drop) && drop[next].slack < sz; next++ {
			x := p.bins[drop[next].j] - p.binLo
			tooSmall[x>>6] |= 1 << (x & 63)
		}
		v := p.items[i]
		if next == 0 || s.lo[v] == s.hi[v] {
			continue
		}
		if s.ctl != nil && s.rootStop() {
			return false
		}
		// Item bit t is bin offset t + d.
		d := s.base[v] - p.binLo
		a, z := s.lo[v]-s.base[v], s.hi[v]-s.base[v]
		for wi := a >> 6; wi <= z>>6; wi++ {
			m := bitWindow(tooSmall, wi<<6+d)
			if m&s.bits[v][wi] != 0 && !s.removeBits(v, int(wi), m) {
				return false
			}
		}
	}
	for _, b := range drop {
		s.setRev(p.rSlack, int(b.j), b.slack)
	}
	return true
}

// bulkSlackMinBins is the number of dirty bins from which bulkSlack
// compares the costs at all (a decision dirties one or two; a variable
// for tests).
var bulkSlackMinBins = 64

// bitWindow returns bits start..start+63 of the bitset bs (zero outside).
func bitWindow(bs []uint64, start int64) uint64 {
	n := int64(len(bs)) << 6
	if start <= -64 || start >= n {
		return 0
	}
	if start < 0 {
		return bs[0] << -start
	}
	q, r := start>>6, start&63
	w := bs[q] >> r
	if r != 0 && q+1 < int64(len(bs)) {
		w |= bs[q+1] << (64 - r)
	}
	return w
}

// totalRule: when every item must be packed into a listed bin, the loads
// sum to the total size. The sums are maintained incrementally; the bins
// are only visited when the slack is below the largest load span (else no
// lower bound can rise; upper bounds from the total are left to the
// possible loads).
func (p *binPackProp) totalRule(s *solver) bool {
	sumMin, sumMax := s.revs[p.rSum][0], s.revs[p.rSum][1]
	if sumMin > p.total || sumMax < p.total {
		return false
	}
	if sumMax-p.total >= p.spanMax {
		return true
	}
	for _, l := range p.loads {
		lo := s.lo[l]
		if !s.setMin(l, p.total-(sumMax-s.hi[l])) {
			return false
		}
		sumMin += s.lo[l] - lo
	}
	return true
}

// candidates appends to buf the bin positions j with bins[j] in v's
// domain. Bitset domains with a dense bin index are scanned word by word.
func (p *binPackProp) candidates(s *solver, v int32, buf []int32) []int32 {
	buf = buf[:0]
	if b := s.bits[v]; b != nil && p.dense != nil {
		base, lo, hi := s.base[v], s.lo[v]-s.base[v], s.hi[v]-s.base[v]
		for wi := lo >> 6; wi <= hi>>6; wi++ {
			w := b[wi]
			if wi == lo>>6 {
				w &^= 1<<(lo&63) - 1
			}
			if wi == hi>>6 && hi&63 < 63 {
				w &= 1<<(hi&63+1) - 1
			}
			for w != 0 {
				k := base + wi<<6 + int64(bits.TrailingZeros64(w)) - p.binLo
				w &= w - 1
				if k >= 0 && k < int64(len(p.dense)) && p.dense[k] >= 0 {
					buf = append(buf, p.dense[k])
				}
			}
		}
		return buf
	}
	if s.size(v) <= int64(len(p.bins)) {
		for x, ok := s.lo[v], true; ok; x, ok = s.next(v, x+1) {
			if j, in := p.bin(x); in {
				buf = append(buf, int32(j))
			}
			if x >= s.hi[v] {
				break
			}
		}
		return buf
	}
	for j, b := range p.bins {
		if s.contains(v, b) {
			buf = append(buf, int32(j))
		}
	}
	return buf
}

// propagateFull recomputes everything (non-incremental fallback).
func (p *binPackProp) propagateFull(s *solver) bool {
	for j := range p.req {
		p.req[j], p.pos[j] = 0, 0
	}
	for i, v := range p.items {
		sz := p.sizes[i]
		if sz == 0 {
			continue
		}
		if s.ctl != nil && s.rootStop() {
			return false
		}
		if s.fixed(v) {
			if j, ok := p.bin(s.lo[v]); ok {
				p.req[j] += sz
				p.pos[j] += sz
			}
			continue
		}
		p.buf = p.candidates(s, v, p.buf)
		for _, j := range p.buf {
			p.pos[j] += sz
		}
	}
	for j, l := range p.loads {
		if !s.setMin(l, p.req[j]) || !s.setMax(l, p.pos[j]) {
			return false
		}
	}
	if p.closed && len(p.loads) > 1 {
		var sumMin, sumMax int64
		for _, l := range p.loads {
			sumMin += s.lo[l]
			sumMax += s.hi[l]
		}
		if sumMin > p.total || sumMax < p.total {
			return false
		}
		for _, l := range p.loads {
			lo, hi := s.lo[l], s.hi[l]
			if !s.setMin(l, p.total-(sumMax-hi)) || !s.setMax(l, p.total-(sumMin-lo)) {
				return false
			}
			sumMin += s.lo[l] - lo
			sumMax += s.hi[l] - hi
		}
	}
	for i, v := range p.items {
		sz := p.sizes[i]
		if sz == 0 || s.fixed(v) {
			continue
		}
		p.buf = p.candidates(s, v, p.buf)
		for _, j := range p.buf {
			l := p.loads[j]
			if p.req[j]+sz > s.hi[l] {
				if !s.remove(v, p.bins[j]) { // does not fit any more
					return false
				}
			} else if p.pos[j]-sz < s.lo[l] {
				if !s.fix(v, p.bins[j]) { // bin cannot reach its minimum without it
					return false
				}
				break
			}
		}
	}
	return true
}

// bin maps a value to its bin position.
func (p *binPackProp) bin(x int64) (int, bool) {
	if p.dense != nil {
		k := x - p.binLo
		if k < 0 || k >= int64(len(p.dense)) || p.dense[k] < 0 {
			return 0, false
		}
		return int(p.dense[k]), true
	}
	j, ok := p.binOf[x]
	return j, ok
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
