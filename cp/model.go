package cp

import (
	"errors"
	"fmt"
	"slices"
)

// ErrInvalidModel is wrapped by every model-building error returned by
// Model.Err and Solve.
var ErrInvalidModel = errors.New("cp: invalid model")

// MaxMagnitude bounds every variable value and every linear expression's
// worst-case magnitude, so that the engine's bound arithmetic (sums and
// differences of extremes) can never overflow int64.
const MaxMagnitude int64 = 1 << 61

// varOrigin records why a variable exists; the search branches on user
// variables first because the others are functionally determined by them.
type varOrigin uint8

const (
	originUser     varOrigin = iota // NewIntVar, NewBoolVar
	originConstant                  // NewConstant
	originEncoding                  // EqLit, LeLit
)

// Model is a constraint model under construction. Build it with the New*
// and Add* methods, then call Solve. A Model is not safe for concurrent
// mutation.
type Model struct {
	doms    []Domain
	names   []string
	origin  []varOrigin
	consts  map[int64]IntVar
	eqCache map[encKey]Lit
	leCache map[encKey]Lit
	eqOf    map[int32]encKey // EqLit's variables: what they encode

	cons        []ConstraintInfo
	valueSets   map[uint64][][]int64 // membership value lists, by hash (valueSet)
	obj         *Objective
	hints       []hint
	strategy    []int32
	assumptions []Lit
	err         error
}

type encKey struct {
	v   int32
	val int64
}

type hint struct {
	v   int32
	val int64
}

// NewModel returns an empty model.
func NewModel() *Model {
	return &Model{consts: map[int64]IntVar{}, eqCache: map[encKey]Lit{}, leCache: map[encKey]Lit{}}
}

// Grow reserves room for vars more variables and constraints more
// constraints, like slices.Grow: a caller that builds models of a known
// size over and over (one per scheduling batch) avoids copying the
// growing arrays, several megabytes per model of 10,000 constraints.
func (m *Model) Grow(vars, constraints int) {
	if vars > 0 {
		m.doms = slices.Grow(m.doms, vars)
		m.names = slices.Grow(m.names, vars)
		m.origin = slices.Grow(m.origin, vars)
	}
	if constraints > 0 {
		m.cons = slices.Grow(m.cons, constraints)
	}
}

// IntVar is a handle to an integer variable of one Model. The zero IntVar
// is invalid; using it records an error on the model.
type IntVar struct {
	m   *Model
	idx int32
}

// Name returns the variable's name as given at creation.
func (x IntVar) Name() string {
	if x.m == nil || int(x.idx) >= len(x.m.names) {
		return ""
	}
	return x.m.names[x.idx]
}

// Index returns the variable's dense index in its model (0..NumVars-1).
func (x IntVar) Index() int { return int(x.idx) }

// String gives the name, or "v<index>" for unnamed variables.
func (x IntVar) String() string {
	if n := x.Name(); n != "" {
		return n
	}
	return fmt.Sprintf("v%d", x.idx)
}

// Err returns the first error recorded while building the model, wrapping
// ErrInvalidModel, or nil.
func (m *Model) Err() error { return m.err }

func (m *Model) failf(format string, args ...any) {
	if m.err == nil {
		m.err = fmt.Errorf("%w: %s", ErrInvalidModel, fmt.Sprintf(format, args...))
	}
}

// okVar reports whether x belongs to m, recording an error otherwise.
// owns reports whether x is one of m's variables.
func (m *Model) owns(x IntVar) bool { return x.m == m && x.idx >= 0 && int(x.idx) < len(m.doms) }

func (m *Model) okVar(x IntVar, what string) bool {
	if !m.owns(x) {
		m.failf("%s: variable does not belong to this model", what)
		return false
	}
	return true
}

func (m *Model) okLit(l Lit, what string) bool {
	if l.m != m || l.idx < 0 || int(l.idx>>1) >= len(m.doms) {
		m.failf("%s: literal does not belong to this model", what)
		return false
	}
	return true
}

func (m *Model) newVar(d Domain, name string, o varOrigin) IntVar {
	m.doms = append(m.doms, d)
	m.names = append(m.names, name)
	m.origin = append(m.origin, o)
	return IntVar{m: m, idx: int32(len(m.doms) - 1)}
}

// NewIntVar creates an integer variable with domain [lo, hi].
func (m *Model) NewIntVar(lo, hi int64, name string) IntVar {
	return m.NewIntVarFromDomain(NewDomain(lo, hi), name)
}

// NewIntVarFromDomain creates an integer variable with domain d. An empty
// domain or values beyond ±MaxMagnitude record an error (the variable is
// still created, with a placeholder domain, so calls stay chainable).
func (m *Model) NewIntVarFromDomain(d Domain, name string) IntVar {
	if d.IsEmpty() {
		m.failf("variable %q: empty domain", name)
		d = NewDomain(0, 0)
	} else if d.Min() < -MaxMagnitude || d.Max() > MaxMagnitude {
		m.failf("variable %q: domain [%d, %d] exceeds ±MaxMagnitude (overflow)", name, d.Min(), d.Max())
		d = NewDomain(0, 0)
	}
	return m.newVar(d, name, originUser)
}

// NewConstant returns a variable fixed to v; cached per value.
func (m *Model) NewConstant(v int64) IntVar {
	if x, ok := m.consts[v]; ok {
		return x
	}
	if v < -MaxMagnitude || v > MaxMagnitude {
		m.failf("constant %d exceeds ±MaxMagnitude (overflow)", v)
		v = 0
		if x, ok := m.consts[0]; ok {
			return x
		}
	}
	x := m.newVar(NewDomain(v, v), fmt.Sprint(v), originConstant)
	m.consts[v] = x
	return x
}

// NewBoolVar creates a Boolean variable and returns its positive literal.
func (m *Model) NewBoolVar(name string) Lit {
	x := m.newVar(NewDomain(0, 1), name, originUser)
	return Lit{m: m, idx: x.idx << 1}
}

// AddHint suggests value v for x; the search tries hinted values first
// (solution-guided search), which warm-starts from a current configuration.
func (m *Model) AddHint(x IntVar, v int64) {
	if m.okVar(x, "AddHint") {
		m.hints = append(m.hints, hint{x.idx, v})
	}
}

// AddDecisionStrategy declares the decision variables of the model, in
// the spirit of CP-SAT's AddDecisionStrategy: the search branches on these
// variables first (first-fail among them, values from the hints, then the
// incumbent and the objective-guided choice), and only then on the
// remaining variables, which are typically fixed by propagation once the
// decisions are made. Large-neighbourhood search relaxes and fixes only
// these variables. Calls accumulate.
//
// Without a strategy the engine infers one: bin-packing items,
// all_different members and element indices come first, then the other
// user variables, then variables defined by others (loads, min/max and
// element targets, the objective).
func (m *Model) AddDecisionStrategy(vars []IntVar) {
	for _, x := range vars {
		if m.okVar(x, "AddDecisionStrategy") {
			m.strategy = append(m.strategy, x.idx)
		}
	}
}

// AddAssumptions adds literals assumed true for the next Solve. If the
// model is infeasible under them, Response.Core lists a subset of them
// that is infeasible on its own.
func (m *Model) AddAssumptions(lits ...Lit) {
	for _, l := range lits {
		if m.okLit(l, "AddAssumptions") {
			m.assumptions = append(m.assumptions, l)
		}
	}
}

// ClearAssumptions removes all assumptions, so that a model can be solved
// again under different ones.
func (m *Model) ClearAssumptions() { m.assumptions = nil }
