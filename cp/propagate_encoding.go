package cp

// encodingProp channels the literals created by EqLit and LeLit for one
// integer variable x to x's domain. One propagator per x keeps the cost
// proportional to the literals of x, and lets the compiler create one
// literal per (pod, node) pair without one constraint object per pair.
type encodingProp struct {
	x   int32
	eqs []encLit
	les []encLit
}

type encLit struct {
	val int64
	b   int32 // the literal's 0/1 variable
}

func (p *encodingProp) propagate(s *solver) bool {
	x := p.x
	for _, e := range p.eqs {
		switch {
		case s.fixed(e.b) && s.lo[e.b] == 1:
			if !s.fix(x, e.val) {
				return false
			}
		case s.fixed(e.b):
			if !s.remove(x, e.val) {
				return false
			}
		case !s.contains(x, e.val):
			if !s.fix(e.b, 0) {
				return false
			}
		case s.fixed(x):
			if !s.fix(e.b, 1) {
				return false
			}
		}
	}
	for _, e := range p.les {
		switch {
		case s.fixed(e.b) && s.lo[e.b] == 1:
			if !s.setMax(x, e.val) {
				return false
			}
		case s.fixed(e.b):
			if !s.setMin(x, e.val+1) {
				return false
			}
		case s.hi[x] <= e.val:
			if !s.fix(e.b, 1) {
				return false
			}
		case s.lo[x] > e.val:
			if !s.fix(e.b, 0) {
				return false
			}
		}
	}
	return true
}
