package cp

import "time"

// solver is the search engine state for one Solve call: the store, the
// propagators and their subscriptions, the clause database, and the
// decision stack.

type propagator interface {
	// propagate narrows domains; false means a conflict.
	propagate(s *solver) bool
}

type propInfo struct {
	p        propagator
	vars     []int32 // subscribed variables
	prio     uint8   // 0 runs before 1 (cheap before expensive)
	selfWake bool    // re-run when its own changes touch its variables
	con      int     // model constraint index, -1 for internal
	weight   int64   // dom/wdeg failure count
}

type derivedLit struct {
	b, x int32
	val  int64
	eq   bool // b <=> x == val, else b <=> x <= val
}

// notifier is a propagator that wants to know which of its variables
// changed (incremental propagators); pos is its own index for the variable.
type notifier interface{ notify(pos int32) }

type notifyEnt struct {
	p   notifier
	pos int32
	// quiet, if set, suppresses the call while *quiet is 0 and the
	// variable is unfixed (a reversible count the notifier reads first
	// itself: skipping the call here saves an indirect call per removal).
	quiet *int64
}

type decision struct {
	v   int32
	op  uint8 // opEq: v == val, opLe: v <= val, opGe: v >= val
	val int64
}

const (
	opEq uint8 = iota
	opLe
	opGe
)

type solver struct {
	store
	m     *Model
	props []propInfo
	watch [][]int32 // var -> propagators
	// watchSlab is free room for watch lists (see appendWatch).
	watchSlab []int32
	notify    [][]notifyEnt
	inQ       []bool
	queues    [2][]int32
	cur       int32 // propagator running, -1 if none

	// Clauses use two watched literals; literal l is 2*var+neg as in Lit.
	clauses  [][]int32
	cwatch   [][]int32 // literal -> clauses watching it
	isBool   []bool
	litQ     []int32 // fixed Boolean variables awaiting clause propagation
	litQHead int

	failed     bool  // a domain wipe-out happened outside propagate
	failedProp int32 // propagator that failed last, -1 if none

	levelStart []int
	decisions  []decision

	// Objective, always minimised internally (Maximize negates).
	hasObj  bool
	objVar  int32
	objProp int32
	objUB   int64
	// weakRoot: the levels up to objBase (the assumptions) hold the
	// objective at most objUB+1, as good as the incumbent, and every
	// level above them objUB, better (pushLevel re-imposes it), except
	// while sideways is set (a bottleneck round, lns_maxmin.go, looks
	// for solutions as good as the incumbent). Root propagation under
	// "better" would exclude those: a max-min incumbent's bottleneck
	// bins could not keep their spare.
	weakRoot bool
	sideways bool
	objBase  int
	// subArgs are the objective's arguments a bottleneck round repacks,
	// which objProp keeps at subFloor or above while sideways is set.
	subArgs  []int32
	subFloor int64

	implied int             // implied constraints added by presolve
	folded  int             // unary constraints folded into domains
	stamp   []int32         // scratch for addProp
	cliques map[string]bool // implied cliques already posted
	// conflictPairs are the variable pairs the model requires to differ.
	conflictPairs map[[2]int32]bool
	// sym breaks the symmetry of interchangeable bins (binsym.go), or nil.
	sym     *binSym
	symDone bool // sym is set up (lazily, at the first refutation)
	// Encoding literals nothing uses: not propagated, derived from their
	// variable in every solution.
	derived   []derivedLit
	isDerived []bool
	dropped   []bool  // model constraints removed by presolve
	rootHi    []int64 // upper bounds after root propagation (capacities)
	varWeight []int64 // Σ weights of the propagators on a variable
	branchOn  []int32 // decision variables, user variables first
	tierEnd   []int   // ends of the branching tiers in branchOn
	// revs[rLive] is a bitset over the positions of branchOn: a clear bit
	// is a fixed variable, which choose clears as it meets them (trailed,
	// so backtracking sets it again) and then skips a word at a time.
	rLive int32
	// decisionVars is the first tier (the decision strategy or the
	// inferred decision variables), or every user variable; LNS fixes
	// and relaxes these.
	decisionVars []int32
	h            heuristics

	// Interruption of the phases before and around search (root
	// propagation, implied cliques, the bound probe), which may each take
	// seconds on large models: while ctl is set, propagate and the long
	// loops poll rootStop, which sets aborted once ctl's deadline or
	// context expires (the solve stops: ctl.stopped) or softDeadline
	// passes (only the current phase stops). An aborted propagate returns
	// false like a conflict, which callers must not read as one.
	ctl          *searchCtl
	softDeadline time.Time
	aborted      bool
	stopTick     uint32
}

// rootStop reports whether the interruptible phase under way must stop
// (see solver.ctl); it reads the clock every 32 calls.
func (s *solver) rootStop() bool {
	if s.aborted {
		return true
	}
	c := s.ctl
	if c == nil {
		return false
	}
	s.stopTick++
	if s.stopTick&31 != 0 {
		return false
	}
	now := time.Now()
	if (!c.deadline.IsZero() && now.After(c.deadline)) || c.ctx.Err() != nil {
		c.stopped = true
		s.aborted = true
	} else if !s.softDeadline.IsZero() && now.After(s.softDeadline) {
		s.aborted = true
	}
	return s.aborted
}

func (s *solver) level() int { return len(s.levelStart) }

func (s *solver) onTouch(v int32) {
	for _, e := range s.notify[v] {
		if e.quiet != nil && *e.quiet == 0 && s.lo[v] != s.hi[v] {
			continue
		}
		e.p.notify(e.pos)
	}
	for _, p := range s.watch[v] {
		if !s.inQ[p] && (p != s.cur || s.props[p].selfWake) {
			s.inQ[p] = true
			pr := s.props[p].prio
			s.queues[pr] = append(s.queues[pr], p)
		}
	}
	if s.isBool[v] && s.lo[v] == s.hi[v] {
		s.litQ = append(s.litQ, v)
	}
}

func (s *solver) enqueue(p int32) {
	if !s.inQ[p] {
		s.inQ[p] = true
		pr := s.props[p].prio
		s.queues[pr] = append(s.queues[pr], p)
	}
}

// appendWatch appends id to a watch list, growing lists in slices carved
// from a shared slab: a list per variable allocated on its own was
// 60,000 allocations per solve on a 10,000-node placement model.
func (s *solver) appendWatch(w []int32, id int32) []int32 {
	if len(w) == cap(w) {
		k := max(2*len(w), 2)
		if len(s.watchSlab) < k {
			s.watchSlab = make([]int32, max(k, 1<<14))
		}
		nw := s.watchSlab[:len(w):k]
		s.watchSlab = s.watchSlab[k:]
		copy(nw, w)
		w = nw
	}
	return append(w, id)
}

func (s *solver) addProp(p propagator, vars []int32, prio uint8, selfWake bool, con int) int32 {
	id := int32(len(s.props))
	// Deduplicate with a stamp per variable (no map per propagator).
	for len(s.stamp) < len(s.lo) {
		s.stamp = append(s.stamp, -1)
	}
	vs := make([]int32, 0, len(vars))
	for _, v := range vars {
		if s.stamp[v] != id {
			s.stamp[v] = id
			vs = append(vs, v)
			s.watch[v] = s.appendWatch(s.watch[v], id)
		}
	}
	s.props = append(s.props, propInfo{p: p, vars: vs, prio: prio, selfWake: selfWake, con: con, weight: 1})
	s.inQ = append(s.inQ, false)
	s.enqueue(id)
	return id
}

// Literal helpers: l = 2*var + negated.

func (s *solver) litTrue(l int32) bool {
	v := l >> 1
	return s.lo[v] == s.hi[v] && s.lo[v] == int64(1-l&1)
}

func (s *solver) litFalse(l int32) bool {
	v := l >> 1
	return s.lo[v] == s.hi[v] && s.lo[v] == int64(l&1)
}

func (s *solver) setLit(l int32, val bool) bool {
	x := int64(1 - l&1)
	if !val {
		x = 1 - x
	}
	return s.fix(l>>1, x)
}

// enfState summarises enforcement literals: st is 1 if all are true, -1 if
// one is false, else 0; last is the only unfixed literal when all others
// are true, else -1.
func (s *solver) enfState(e []int32) (st int, last int32) {
	last = -1
	unfixed := 0
	for _, l := range e {
		switch {
		case s.litFalse(l):
			return -1, -1
		case !s.litTrue(l):
			unfixed++
			last = l
		}
	}
	if unfixed == 0 {
		return 1, -1
	}
	if unfixed > 1 {
		last = -1
	}
	return 0, last
}

// enfViolated is called when the constraint itself cannot hold: the
// enforcement conjunction must then be false.
func (s *solver) enfViolated(e []int32) bool {
	st, last := s.enfState(e)
	switch {
	case st == -1:
		return true
	case st == 1:
		return false
	case last >= 0:
		return s.setLit(last, false)
	}
	return true
}

// addClause adds a clause over literal indices; it handles tautologies,
// duplicates and root-level unit clauses.
func (s *solver) addClause(lits []int32) bool {
	seen := map[int32]bool{}
	var c []int32
	for _, l := range lits {
		if seen[l^1] || s.litTrue(l) {
			return true // tautology or already satisfied at the root
		}
		if !seen[l] && !s.litFalse(l) {
			seen[l] = true
			c = append(c, l)
		}
	}
	switch len(c) {
	case 0:
		return false
	case 1:
		return s.setLit(c[0], true)
	}
	id := int32(len(s.clauses))
	s.clauses = append(s.clauses, c)
	s.cwatch[c[0]] = append(s.cwatch[c[0]], id)
	s.cwatch[c[1]] = append(s.cwatch[c[1]], id)
	return true
}

// propagateClauses processes the clauses watching literals that just
// became false.
func (s *solver) propagateClauses() bool {
	for s.litQHead < len(s.litQ) {
		v := s.litQ[s.litQHead]
		s.litQHead++
		f := v<<1 | int32(s.lo[v]) // the literal of v that is now false
		ws := s.cwatch[f]
		j := 0
		for i := 0; i < len(ws); i++ {
			cid := ws[i]
			c := s.clauses[cid]
			if c[0] == f {
				c[0], c[1] = c[1], c[0]
			}
			if s.litTrue(c[0]) {
				ws[j] = cid
				j++
				continue
			}
			moved := false
			for k := 2; k < len(c); k++ {
				if !s.litFalse(c[k]) {
					c[1], c[k] = c[k], c[1]
					s.cwatch[c[1]] = append(s.cwatch[c[1]], cid)
					moved = true
					break
				}
			}
			if moved {
				continue
			}
			ws[j] = cid
			j++
			if s.litFalse(c[0]) || !s.setLit(c[0], true) {
				copy(ws[j:], ws[i+1:])
				s.cwatch[f] = ws[:j+len(ws)-i-1]
				return false
			}
		}
		s.cwatch[f] = ws[:j]
	}
	return true
}

// propagate runs clauses and propagators to a fixpoint.
func (s *solver) propagate() bool {
	s.failedProp = -1
	if s.aborted && s.ctl != nil {
		s.clearQueues()
		return false
	}
	if s.failed {
		s.failed = false
		s.clearQueues()
		return false
	}
	for {
		if !s.propagateClauses() {
			s.clearQueues()
			return false
		}
		var p int32 = -1
		for pr := range s.queues {
			if q := s.queues[pr]; len(q) > 0 {
				p = q[0]
				s.queues[pr] = q[1:]
				break
			}
		}
		if p < 0 {
			if s.litQHead < len(s.litQ) {
				continue
			}
			s.litQ, s.litQHead = s.litQ[:0], 0
			return true
		}
		s.inQ[p] = false
		s.cur = p
		ok := s.props[p].p.propagate(s)
		s.cur = -1
		if !ok {
			s.failedProp = p
			if s.aborted {
				s.failedProp = -1
			}
			s.clearQueues()
			return false
		}
		if s.ctl != nil && s.rootStop() {
			s.clearQueues()
			return false
		}
	}
}

func (s *solver) clearQueues() {
	for pr := range s.queues {
		for _, p := range s.queues[pr] {
			s.inQ[p] = false
		}
		s.queues[pr] = s.queues[pr][:0]
	}
	s.litQ, s.litQHead = s.litQ[:0], 0
}

func (s *solver) pushLevel() {
	s.levelStart = append(s.levelStart, s.trail.len())
	s.levels = len(s.levelStart)
	s.newEpoch()
	if s.weakRoot && s.levels == s.objBase+1 {
		s.enqueue(s.objProp) // the strict bound, above the base
	}
}

// backtrackTo undoes every change made above level l.
func (s *solver) backtrackTo(l int) {
	if l >= s.level() {
		return
	}
	s.undo(s.levelStart[l])
	s.levelStart = s.levelStart[:l]
	s.levels = l
	if len(s.decisions) > l {
		s.decisions = s.decisions[:l]
	}
	s.clearQueues()
	s.failed = false
	if s.hasObj {
		// The objective bound is not trailed: re-impose it at the level we
		// return to, since it may have tightened below that level.
		s.enqueue(s.objProp)
	}
}

// apply performs a decision (or its refutation when neg is set).
func (s *solver) apply(d decision, neg bool) {
	var ok bool
	switch {
	case d.op == opEq && !neg:
		ok = s.fix(d.v, d.val)
	case d.op == opEq:
		ok = s.remove(d.v, d.val)
	case (d.op == opLe) != neg: // v <= val, or refuting v >= val
		if d.op == opLe {
			ok = s.setMax(d.v, d.val)
		} else {
			ok = s.setMax(d.v, d.val-1)
		}
	default: // v >= val, or refuting v <= val
		if d.op == opGe {
			ok = s.setMin(d.v, d.val)
		} else {
			ok = s.setMin(d.v, d.val+1)
		}
	}
	if !ok {
		s.failed = true
	}
}
