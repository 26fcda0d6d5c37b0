package cp

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// Interchangeable bins (dynamic value symmetry breaking for bin packing).
//
// Identical bins make the search repeat itself: when placing item x in
// an empty bin b fails, placing it in every other empty bin of the same
// capacity fails the same way, and the search tries them all (50 empty
// bins: 50 identical subtrees; an LNS round that frees five bins explores
// their 120 permutations). When the refutation x != b is applied, binSym
// also removes from x every bin b' that is interchangeable with b at that
// node, in the spirit of Van Hentenryck et al.'s symmetry breaking for
// interchangeable values:
//
//   - in the model: the items occur only in the group's bin-packing
//     constraints, in x - y != 0 between two items, in all_different
//     over items (no exempt values) and in membership tests that treat b
//     and b' alike; every constraint and objective term on b's load
//     variables is the same as on b”s, up to the load itself (bin
//     classes, computed once);
//   - at the node: every other item's domain holds b if and only if it
//     holds b', and the loads of b and b' have the same bounds.
//
// Swapping b and b' (values and loads) then maps the node's subproblem
// onto itself, so x = b' has a better solution if and only if x = b has
// one, which was just refuted.
type binSym struct {
	groups []*symGroup
	of     []*symGroup // item variable -> its group, or nil
}

type symGroup struct {
	items []int32
	bins  []int64
	loads [][]int32 // per resource, per bin
	class []int32   // per bin: bins with the same class are interchangeable in the model
	byVal map[int64]int
	lo    int64    // smallest bin value
	cand  []uint64 // scratch: candidate bins, bit o = value lo+o
}

// initBinSym finds the groups of bin-packing constraints whose bins may
// be interchangeable (at least two bins in a class). It runs at the
// first refutation, not in newSolver: a placement solve whose dives
// succeed never pays for it (0.3 ms on a 500-node placement model, 5 ms
// on 10,000 nodes, most of it the pass over the constraints).
func (s *solver) initBinSym() {
	s.symDone = true
	if binSymOff {
		return
	}
	okItem := s.symmetricItems()
	for _, g := range s.itemGroups() {
		clean := true
		for _, v := range g.items {
			clean = clean && okItem[v]
		}
		if !clean {
			continue
		}
		sg := s.newSymGroup(g)
		if sg == nil {
			continue
		}
		if s.sym == nil {
			s.sym = &binSym{of: make([]*symGroup, len(s.lo))}
		}
		s.sym.groups = append(s.sym.groups, sg)
		for _, v := range sg.items {
			s.sym.of[v] = sg
		}
	}
}

// symmetricItems marks the variables whose constraints could all be
// symmetric in their values: one pass over the model that rules out most
// groups of placement models (items also in encodings, tables, linear
// constraints) before newSymGroup looks at them closely.
func (s *solver) symmetricItems() []bool {
	m := s.m
	ok := make([]bool, len(m.doms))
	for v := range ok {
		ok[v] = m.origin[v] != originConstant
	}
	bad := func(x IntVar) { ok[x.idx] = false }
	for ci := range m.cons {
		c := &m.cons[ci]
		switch {
		case c.Kind == KindBinPacking:
			for _, x := range c.Loads {
				bad(x)
			}
			continue
		case c.Kind == KindNotEqual && len(c.Vars) == 2 && c.Lo == 0 && c.Coeffs[0] == -c.Coeffs[1]:
			continue
		case c.Kind == KindAllDifferent && len(c.Values) == 0:
			continue
		case (c.Kind == KindMembership || c.Kind == KindNonMembership) && len(c.Enforcement) == 0:
			continue
		}
		for _, x := range c.Vars {
			bad(x)
		}
		switch c.Kind {
		case KindElement, KindVarElement:
			bad(c.Index)
			bad(c.Target)
		case KindMinEquality, KindMaxEquality:
			bad(c.Target)
		}
		for _, e := range c.Exprs {
			for _, x := range e.Vars {
				bad(x)
			}
		}
		for _, l := range c.Lits {
			ok[l.idx>>1] = false
		}
		for _, l := range c.Enforcement {
			ok[l.idx>>1] = false
		}
	}
	if m.obj != nil {
		for _, x := range m.obj.Expr.Vars {
			bad(x)
		}
	}
	for _, a := range m.assumptions {
		ok[a.idx>>1] = false
	}
	return ok
}

// binSymOff disables binSym (tests, comparisons).
var binSymOff = false

// symMaxSpan bounds the span of a group's bin values (the size of the
// candidate bitset).
const symMaxSpan = 1 << 20

// binSymRemovals counts the values removed by symmetry (tests).
var binSymRemovals atomic.Int64

func (s *solver) newSymGroup(g *itemGroup) *symGroup {
	m := s.m
	isItem := make([]bool, len(m.doms))
	for _, v := range g.items {
		if isItem[v] {
			return nil // an item listed twice
		}
		isItem[v] = true
	}
	binPos := make(map[int64]int, len(g.bins))
	for j, b := range g.bins {
		if _, dup := binPos[b]; dup {
			return nil
		}
		binPos[b] = j
	}
	lo, hi := slices.Min(g.bins), slices.Max(g.bins)
	if hi-lo >= symMaxSpan {
		return nil
	}
	// The loads of the group's constraints.
	// Slices, not maps: this runs over every constraint of placement
	// models with 10,000 nodes.
	slot := make([]int32, len(m.doms)) // load variable -> 1 + bin position
	var loads [][]int32
	for _, p := range g.res {
		loads = append(loads, p.loads)
		for j, l := range p.loads {
			if slot[l] != 0 || isItem[l] {
				return nil
			}
			slot[l] = int32(j) + 1
		}
	}
	loadSlot := func(v int32) (int, bool) { return int(slot[v]) - 1, slot[v] != 0 }
	for _, a := range m.assumptions {
		if _, ok := loadSlot(a.idx >> 1); ok {
			return nil
		}
	}
	// Classes are refined in stages, cheapest first, and the group is
	// dropped as soon as no two bins share a class (placement models:
	// nodes of different capacities).
	cls := newBinClasses(len(g.bins))
	key := make([]string, len(g.bins))
	var buf []byte
	for j := range g.bins {
		buf = buf[:0]
		for _, ls := range loads {
			for _, iv := range m.doms[ls[j]].ivs {
				buf = binary.AppendVarint(binary.AppendVarint(buf, iv.lo), iv.hi)
			}
			buf = append(buf, ';')
		}
		key[j] = string(buf)
	}
	if !cls.refine(key) {
		return nil
	}
	// Everything else the model says about a bin: the group's own
	// constraints aside, a constraint on one load is described with the
	// load abstracted; items may only be in value-symmetric constraints
	// among themselves.
	sig := make([][]string, len(g.bins))
	unique := make([]bool, len(g.bins))
	if m.obj != nil {
		for k, x := range m.obj.Expr.Vars {
			if j, ok := loadSlot(x.idx); ok {
				sig[j] = append(sig[j], fmt.Sprintf("obj %d", m.obj.Expr.Coeffs[k]))
			}
		}
	}
	var member []int // membership constraints, for the last stage
	var touched []int32
	left := len(g.bins) // bins not unique yet
	for ci := range m.cons {
		if left < 2 {
			return nil // no two bins left to interchange
		}
		c := &m.cons[ci]
		touched = appendConVars(touched[:0], c)
		items, loadsIn := 0, 0
		for _, v := range touched {
			if isItem[v] {
				items++
			}
			if _, ok := loadSlot(v); ok {
				loadsIn++
			}
		}
		if c.Kind == KindBinPacking && ownConstraint(c, g) {
			continue
		}
		if items > 0 {
			switch {
			case items != len(touched) || loadsIn > 0:
				return nil // items mixed with other variables
			case c.Kind == KindNotEqual && len(c.Vars) == 2 && c.Lo == 0 && c.Coeffs[0] == -c.Coeffs[1]:
			case c.Kind == KindAllDifferent && len(c.Values) == 0:
			case (c.Kind == KindMembership || c.Kind == KindNonMembership) && len(c.Enforcement) == 0:
				member = append(member, ci)
			default:
				return nil
			}
			continue
		}
		if loadsIn == 0 {
			continue
		}
		switch c.Kind {
		case KindLinear, KindNotEqual:
			if loadsIn != 1 {
				left -= markLoads(touched, loadSlot, unique)
				continue
			}
			b := sigHead(buf[:0], c, -1, 0)
			at := -1
			for k, x := range c.Vars {
				j, ok := loadSlot(x.idx)
				if ok {
					at = j
				}
				b = sigTerm(b, loads, x.idx, j, ok, c.Coeffs[k])
			}
			sig[at] = append(sig[at], string(b))
			buf = b
		case KindMinEquality, KindMaxEquality:
			// Symmetric in its arguments: each argument that is one load
			// plus other variables is described without the load.
			if _, ok := loadSlot(c.Target.idx); ok {
				left -= markLoads(touched, loadSlot, unique)
				continue
			}
			for _, e := range c.Exprs {
				b := sigHead(buf[:0], c, ci, e.Offset)
				n, at := 0, -1
				for k, x := range e.Vars {
					j, ok := loadSlot(x.idx)
					if ok {
						n, at = n+1, j
					}
					b = sigTerm(b, loads, x.idx, j, ok, e.Coeffs[k])
				}
				buf = b
				switch {
				case n == 1:
					sig[at] = append(sig[at], string(b))
				case n > 1:
					left -= markLoads(exprVarIdx(e), loadSlot, unique)
				}
			}
		default:
			left -= markLoads(touched, loadSlot, unique)
		}
	}
	if left < 2 {
		return nil
	}
	for j := range g.bins {
		if unique[j] {
			key[j] = "u" + string(binary.AppendVarint(buf[:0], int64(j)))
			continue
		}
		slices.Sort(sig[j])
		key[j] = strings.Join(sig[j], "|")
	}
	if !cls.refine(key) {
		return nil
	}
	// Bins in and out of a membership set are told apart.
	for _, ci := range member {
		set := make(map[int64]bool, len(m.cons[ci].Values))
		for _, v := range m.cons[ci].Values {
			set[v] = true
		}
		for j, b := range g.bins {
			key[j] = ""
			if set[b] {
				key[j] = "in"
			}
		}
		if !cls.refine(key) {
			return nil
		}
	}
	return &symGroup{items: g.items, bins: g.bins, loads: loads, class: cls.id,
		byVal: binPos, lo: lo, cand: make([]uint64, (hi-lo)>>6+1)}
}

// ownConstraint reports whether c is one of g's bin-packing constraints.
func ownConstraint(c *ConstraintInfo, g *itemGroup) bool {
	if len(c.Vars) != len(g.items) || len(c.Bins) != len(g.bins) {
		return false
	}
	for i, x := range c.Vars {
		if x.idx != g.items[i] {
			return false
		}
	}
	return slices.Equal(c.Bins, g.bins)
}

// binClasses partitions bins into classes refined stage by stage.
type binClasses struct {
	id []int32
}

func newBinClasses(n int) *binClasses { return &binClasses{id: make([]int32, n)} }

// refine splits the classes by key (bins stay together only if their
// keys are equal) and reports whether two bins still share a class.
func (c *binClasses) refine(key []string) bool {
	type k struct {
		id  int32
		key string
	}
	ids := make(map[k]int32, len(c.id))
	shared := false
	for j, old := range c.id {
		kk := k{old, key[j]}
		id, ok := ids[kk]
		if ok {
			shared = true
		} else {
			id = int32(len(ids))
			ids[kk] = id
		}
		c.id[j] = id
	}
	return shared
}

// exprVarIdx lists the variable indexes of e.
func exprVarIdx(e LinearExpr) []int32 {
	out := make([]int32, len(e.Vars))
	for k, x := range e.Vars {
		out[k] = x.idx
	}
	return out
}

// markLoads makes the bins of the loads among vs unique.
// It returns how many became unique.
func markLoads(vs []int32, loadSlot func(int32) (int, bool), unique []bool) int {
	n := 0
	for _, v := range vs {
		if j, ok := loadSlot(v); ok && !unique[j] {
			unique[j] = true
			n++
		}
	}
	return n
}

// sigHead starts the signature of constraint c (number ci for a min/max
// argument, whose position does not matter; -1 otherwise).
func sigHead(b []byte, c *ConstraintInfo, ci int, off int64) []byte {
	b = append(b, c.Kind...)
	b = binary.AppendVarint(b, int64(ci))
	b = binary.AppendVarint(b, c.Lo)
	b = binary.AppendVarint(b, c.Hi)
	b = binary.AppendVarint(b, off)
	if c.Kind == KindMinEquality || c.Kind == KindMaxEquality {
		b = append(b, " t"...)
		b = strconv.AppendInt(b, int64(c.Target.idx), 10)
	}
	for _, l := range c.Enforcement {
		b = append(b, " e"...)
		b = strconv.AppendInt(b, int64(l.idx), 10)
	}
	return b
}

// sigTerm appends a term k*v, v abstracted to its resource if it is a
// load of the group (of bin j).
func sigTerm(b []byte, loads [][]int32, v int32, j int, isLoad bool, k int64) []byte {
	if isLoad {
		b = append(b, " load"...)
		b = strconv.AppendInt(b, int64(resourceOf(loads, v, j)), 10)
	} else {
		b = append(b, " v"...)
		b = strconv.AppendInt(b, int64(v), 10)
	}
	b = append(b, '*')
	return strconv.AppendInt(b, k, 10)
}

// resourceOf is the resource whose load for bin j is l.
func resourceOf(loads [][]int32, l int32, j int) int {
	for r, ls := range loads {
		if ls[j] == l {
			return r
		}
	}
	return -1
}

// refuteSymmetric is called after the refutation x != b of a decision
// x = b: it removes from x the bins interchangeable with b at this node.
// It returns false on a wipe-out.
//
// The candidates (bins of b's class in x's domain whose loads have b's
// bounds) are a bitset over the bin values, which every other item then
// narrows a word at a time: to the values its domain holds if it holds
// b, to those it lacks otherwise. With 500 empty bins and 1,000 items a
// test per (item, bin) cost more than the search it saved.
func (s *solver) refuteSymmetric(d decision) bool {
	if !s.symDone {
		s.initBinSym()
	}
	if s.sym == nil || d.op != opEq || int(d.v) >= len(s.sym.of) {
		return true
	}
	g := s.sym.of[d.v]
	if g == nil {
		return true
	}
	j, ok := g.byVal[d.val]
	if !ok || g.class[j] < 0 {
		return true
	}
	x, b := d.v, d.val
	cand := g.cand
	clear(cand)
	left := false
	for k, bk := range g.bins {
		if k == j || g.class[k] != g.class[j] || !s.contains(x, bk) {
			continue
		}
		same := true
		for _, ls := range g.loads {
			if l, m := ls[j], ls[k]; s.lo[l] != s.lo[m] || s.hi[l] != s.hi[m] {
				same = false
				break
			}
		}
		if same {
			o := bk - g.lo
			cand[o>>6] |= 1 << (o & 63)
			left = true
		}
	}
	if !left {
		return true
	}
	for _, v := range g.items {
		if v == x {
			continue
		}
		has := s.contains(v, b)
		left = false
		for wi := range cand {
			if cand[wi] == 0 {
				continue
			}
			w := s.domWindow(v, g.lo+int64(wi)<<6, cand[wi])
			if has {
				cand[wi] &= w
			} else {
				cand[wi] &^= w
			}
			left = left || cand[wi] != 0
		}
		if !left {
			return true
		}
	}
	for wi, w := range cand {
		for ; w != 0; w &= w - 1 {
			binSymRemovals.Add(1)
			if !s.remove(x, g.lo+int64(wi)<<6+int64(bits.TrailingZeros64(w))) {
				return false
			}
		}
	}
	return true
}

// domWindow returns, among the bits of mask, those whose value
// (start + bit) is in v's domain.
func (s *solver) domWindow(v int32, start int64, mask uint64) uint64 {
	lo, hi := s.lo[v], s.hi[v]
	if start > hi || start+63 < lo {
		return 0
	}
	if bs := s.bits[v]; bs != nil {
		off := start - s.base[v] // bit t of the window is bit off+t of bs
		var w uint64
		switch q, r := off>>6, off&63; {
		case off >= 0:
			if q < int64(len(bs)) {
				w = bs[q] >> r
				if r != 0 && q+1 < int64(len(bs)) {
					w |= bs[q+1] << (64 - r)
				}
			}
		case off > -64:
			w = bs[0] << -off
		}
		// The bitset may keep stale bits outside [lo, hi].
		if a := lo - start; a > 0 {
			w &^= 1<<a - 1
		}
		if z := hi - start; z < 63 {
			w &= 1<<(z+1) - 1
		}
		return w & mask
	}
	var w uint64
	for m := mask; m != 0; m &= m - 1 {
		t := bits.TrailingZeros64(m)
		if s.contains(v, start+int64(t)) {
			w |= 1 << t
		}
	}
	return w
}
