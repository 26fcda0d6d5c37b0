package cp

// minMaxProp: target == min(args) (or max), where each arg is an internal
// variable channelled to its linear expression; optionally enforced.
type minMaxProp struct {
	target int32
	args   []int32
	isMax  bool
	enf    []int32
}

func (p *minMaxProp) propagate(s *solver) bool {
	st, _ := s.enfState(p.enf)
	if st == -1 {
		return true
	}
	t := p.target
	// Bounds of the min (or max) of the arguments.
	lo, hi := s.lo[p.args[0]], s.hi[p.args[0]]
	for _, a := range p.args[1:] {
		if p.isMax {
			lo, hi = max(lo, s.lo[a]), max(hi, s.hi[a])
		} else {
			lo, hi = min(lo, s.lo[a]), min(hi, s.hi[a])
		}
	}
	if st == 0 {
		if s.hi[t] < lo || s.lo[t] > hi {
			return s.enfViolated(p.enf)
		}
		return true
	}
	if !s.setMin(t, lo) || !s.setMax(t, hi) {
		return false
	}
	// Every argument is >= the min (<= the max); some argument must reach
	// the target, and if only one can, it is bounded by the target.
	cand, n := int32(-1), 0
	for _, a := range p.args {
		if p.isMax {
			if !s.setMax(a, s.hi[t]) {
				return false
			}
			if s.hi[a] >= s.lo[t] {
				cand, n = a, n+1
			}
		} else {
			if !s.setMin(a, s.lo[t]) {
				return false
			}
			if s.lo[a] <= s.hi[t] {
				cand, n = a, n+1
			}
		}
	}
	switch {
	case n == 0:
		return false
	case n == 1 && p.isMax:
		return s.setMin(cand, s.lo[t])
	case n == 1:
		return s.setMax(cand, s.hi[t])
	}
	return true
}
