package cp

// Bounds reasoning for lo <= Σ c_i x_i <= hi, optionally enforced. All
// arithmetic stays within ±4*MaxMagnitude thanks to the build-time checks.

type linearProp struct {
	vars   []int32
	coeffs []int64
	lo, hi int64
	enf    []int32
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

func (p *linearProp) sums(s *solver) (mn, mx int64) {
	for i, v := range p.vars {
		c := p.coeffs[i]
		if c > 0 {
			mn += c * s.lo[v]
			mx += c * s.hi[v]
		} else {
			mn += c * s.hi[v]
			mx += c * s.lo[v]
		}
	}
	return
}

func (p *linearProp) propagate(s *solver) bool {
	st, _ := s.enfState(p.enf)
	if st == -1 {
		return true
	}
	mn, mx := p.sums(s)
	if st == 0 {
		if mn > p.hi || mx < p.lo {
			return s.enfViolated(p.enf)
		}
		return true
	}
	for iter := 0; ; iter++ {
		if mn > p.hi || mx < p.lo {
			return false
		}
		if mn >= p.lo && mx <= p.hi {
			return true // entailed
		}
		changed := false
		for i, v := range p.vars {
			c := p.coeffs[i]
			var tmin, tmax int64
			if c > 0 {
				tmin, tmax = c*s.lo[v], c*s.hi[v]
			} else {
				tmin, tmax = c*s.hi[v], c*s.lo[v]
			}
			newTmax := tmin + (p.hi - mn) // the term can use all the slack
			newTmin := tmax - (mx - p.lo)
			if newTmax < tmax {
				var ok bool
				if c > 0 {
					ok = s.setMax(v, floorDiv(newTmax, c))
				} else {
					ok = s.setMin(v, ceilDiv(newTmax, c))
				}
				if !ok {
					return false
				}
			}
			if newTmin > tmin {
				var ok bool
				if c > 0 {
					ok = s.setMin(v, ceilDiv(newTmin, c))
				} else {
					ok = s.setMax(v, floorDiv(newTmin, c))
				}
				if !ok {
					return false
				}
			}
			var t2min, t2max int64
			if c > 0 {
				t2min, t2max = c*s.lo[v], c*s.hi[v]
			} else {
				t2min, t2max = c*s.hi[v], c*s.lo[v]
			}
			if t2min != tmin || t2max != tmax {
				changed = true
				mn += t2min - tmin
				mx += t2max - tmax
			}
		}
		if !changed {
			return true
		}
		if iter > 20 {
			s.enqueue(s.cur) // finish later, let other propagators run
			return true
		}
	}
}

// notEqualProp enforces Σ c_i x_i != k once all but one variable is fixed.
type notEqualProp struct {
	vars   []int32
	coeffs []int64
	k      int64
	enf    []int32
}

func (p *notEqualProp) propagate(s *solver) bool {
	st, _ := s.enfState(p.enf)
	if st == -1 {
		return true
	}
	var sum int64
	free := -1
	for i, v := range p.vars {
		if s.fixed(v) {
			sum += p.coeffs[i] * s.lo[v]
		} else if free >= 0 {
			return true // two unfixed variables: nothing to deduce
		} else {
			free = i
		}
	}
	if free < 0 {
		if sum == p.k {
			return s.enfViolated(p.enf)
		}
		return true
	}
	if st != 1 {
		return true
	}
	rest := p.k - sum
	c := p.coeffs[free]
	if rest%c == 0 {
		return s.remove(p.vars[free], rest/c)
	}
	return true
}
