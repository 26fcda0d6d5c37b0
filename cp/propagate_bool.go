package cp

// amoProp enforces "at most one" (or "exactly one") over literals with a
// linear scan; it is cheaper than the quadratic clause encoding for long
// lists, which is what placement models produce (one literal per node).
type amoProp struct {
	lits  []int32
	exact bool
}

func (p *amoProp) propagate(s *solver) bool {
	trueAt, unfixed, lastFree := -1, 0, int32(-1)
	for i, l := range p.lits {
		switch {
		case s.litTrue(l):
			if trueAt >= 0 {
				return false
			}
			trueAt = i
		case !s.litFalse(l):
			unfixed++
			lastFree = l
		}
	}
	if trueAt >= 0 {
		if unfixed == 0 {
			return true
		}
		for i, l := range p.lits {
			if i != trueAt && !s.litFalse(l) && !s.setLit(l, false) {
				return false
			}
		}
		return true
	}
	if p.exact {
		switch unfixed {
		case 0:
			return false
		case 1:
			return s.setLit(lastFree, true)
		}
	}
	return true
}

// objProp keeps the (minimised) objective below the incumbent: the upper
// bound lives outside the trail so it survives backtracking.
type objProp struct{}

func (objProp) propagate(s *solver) bool {
	ub := s.objUB
	if s.weakRoot && (s.sideways || s.level() <= s.objBase) && ub < maxInt64 {
		ub++ // as good as the incumbent (see solver.weakRoot)
	}
	if !s.setMax(s.objVar, ub) {
		return false
	}
	if s.sideways {
		for _, a := range s.subArgs {
			if !s.setMin(a, s.subFloor) {
				return false
			}
		}
	}
	return true
}
