package ground

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weavesql/weave/cp"
	"github.com/weavesql/weave/internal/ir"
)

// An EXISTS whose only tie to a decision is one filter "inner.c = x", x a
// decision column of an enclosing row, is "x ∈ S" with S the values of c
// over the rows the other filters keep. S depends on the enclosing row only
// through the stored values those filters read, so it is computed once per
// combination of them, not once per enclosing row:
//
//	not exists (select 1 from term_domain_match m
//	            where m.label_key = t.label_key ... and m.node_name = pending_pod.node_name)
//
// is one set of nodes per term selector, shared by the batch's replicas,
// where the general evaluation joined every pod with the selector's nodes
// again (40,000 tuples for 100 pods and 400 nodes) to build the same
// disjunction of "x = node" per pod.

// When c is itself a decision column (a pending pod's node, joined with
// another pending pod's), S is a set of variables and the EXISTS is "x
// equals one of them": one var_membership per enclosing row instead of an
// equality literal per pair of rows:
//
//	exists (select 1 from batch_pod_label l join pending_pod q on ...
//	        where l.label_value = t.label_value and q.node_name = pending_pod.node_name)

// existsSetPlan is the analysis of one EXISTS subquery (nil: not of that
// shape).
type existsSetPlan struct {
	rest     *ir.Query    // the subquery without the decision filter
	inner    *ir.ColRef   // c, in rest's sources
	x        *ir.ColRef   // the enclosing rows' decision column (Up >= 1)
	keys     []*ir.ColRef // the enclosing rows' stored columns rest reads (Up >= 1)
	sets     map[string][]int64
	varInner bool // c is a decision column: S is varSets'
	varSets  map[string]*varSet
}

// varSet is S when c is a decision column: the rows' variables, and the
// codes of the rows where c holds a constant.
type varSet struct {
	vars   []cp.IntVar
	consts []int64
}

// existsSetPlanOf analyses q once.
func (g *grounder) existsSetPlanOf(q *ir.Query) *existsSetPlan {
	if p, ok := g.existsPlans[q]; ok {
		return p
	}
	p := analyseExistsSet(q)
	g.existsPlans[q] = p
	return p
}

func analyseExistsSet(q *ir.Query) *existsSetPlan {
	if !q.Correlated || q.Aggregate || len(q.GroupBy) > 0 || len(q.Having) > 0 || q.Check != nil {
		return nil
	}
	for _, s := range q.From {
		if s.Kind != ir.FromQuery {
			continue
		}
		if s.View != nil && s.View.Variable || s.View == nil && (s.Query == nil || s.Query.Correlated || s.Query.Var()) {
			return nil // rows that exist only under a decision
		}
	}
	p := &existsSetPlan{sets: map[string][]int64{}, varSets: map[string]*varSet{}}
	var rest []ir.Expr
	for _, f := range q.Filters {
		if inner, x, ok := decisionEquality(f); ok && p.x == nil {
			p.inner, p.x, p.varInner = inner, x, inner.IsVar
			continue
		}
		ok := true
		seen := map[[3]int]bool{}
		ir.Inspect(f, func(e ir.Expr) bool {
			switch e := e.(type) {
			case *ir.ColRef:
				k := [3]int{e.Up, e.Source, e.Col}
				switch {
				case e.IsVar:
					ok = false
				case e.Up >= 1 && !seen[k]:
					seen[k] = true
					p.keys = append(p.keys, e)
				}
			case *ir.Exists, *ir.Scalar, *ir.Agg:
				ok = false
			case *ir.In:
				if e.Sub != nil {
					ok = false
				}
			}
			return ok
		})
		if !ok {
			return nil
		}
		rest = append(rest, f)
	}
	if p.x == nil {
		return nil
	}
	r := *q
	r.Filters = rest
	r.Correlated = len(p.keys) > 0
	p.rest = &r
	return p
}

// decisionEquality recognises "inner.c = outer.x": c a column of the
// subquery (stored or decided), x a decision column of the enclosing row.
func decisionEquality(f ir.Expr) (inner, x *ir.ColRef, ok bool) {
	b, isBin := f.(*ir.Binary)
	if !isBin || b.Op != "=" {
		return nil, nil, false
	}
	l, lok := b.L.(*ir.ColRef)
	r, rok := b.R.(*ir.ColRef)
	if !lok || !rok {
		return nil, nil, false
	}
	if l.Up >= 1 {
		l, r = r, l
	}
	if l.Up != 0 || r.Up < 1 || !r.IsVar {
		return nil, nil, false
	}
	return l, r, true
}

// existsSet evaluates EXISTS (q) over the enclosing tuple outer by the
// plan, or reports false when it does not apply there (the decision
// column holds a constant on this row, or a row of the subquery exists
// only under a decision).
func (g *grounder) existsSet(p *existsSetPlan, outer *tuple, not bool) (value, bool) {
	probe := &tuple{outer: outer}
	xv := g.colRef(p.x, scope{t: probe})
	var x cp.IntVar
	switch {
	case xv.k == kStr:
		x = xv.sv
	case xv.k == kInt && xv.lin.k == 0 && len(xv.lin.terms) == 1 && xv.lin.terms[0].c == 1:
		x = xv.lin.terms[0].v
	default:
		return value{}, false
	}
	if p.varInner && not {
		return value{}, false // "x equals none of them": the general path
	}
	var key strings.Builder
	for _, k := range p.keys {
		v, ok := storedValue(probe, k)
		if !ok {
			return value{}, false
		}
		fmt.Fprintf(&key, "%T:%v\x00", v, v)
	}
	if p.varInner {
		vs, ok := p.varSets[key.String()]
		if !ok {
			if vs, ok = g.existsVars(p, outer); !ok {
				return value{}, false
			}
			p.varSets[key.String()] = vs
		}
		return g.inVars(xv, x, vs)
	}
	set, ok := p.sets[key.String()]
	if !ok {
		var computed bool
		if set, computed = g.existsValues(p, outer); !computed {
			return value{}, false
		}
		p.sets[key.String()] = set
	}
	if len(set) == 0 {
		return constVal(not), true
	}
	return twoValued(fIn{x: x, vals: set, not: not}), true
}

// existsValues computes S: the codes of c's non-NULL values over the rows
// of the subquery without its decision filter.
func (g *grounder) existsValues(p *existsSetPlan, outer *tuple) ([]int64, bool) {
	var set []int64
	for _, t := range g.join(p.rest, outer) {
		if !isTrue(t.guard) {
			return nil, false
		}
		v, ok := storedValue(t, p.inner)
		if !ok {
			return nil, false
		}
		if v == nil {
			continue // NULL = x is never true
		}
		if c, ok := g.code(v); ok {
			set = append(set, c)
		}
	}
	slices.Sort(set)
	return slices.Compact(set), true
}

// existsVars computes S when c is a decision column: per row of the
// subquery without its decision filter, c's variable or stored code.
func (g *grounder) existsVars(p *existsSetPlan, outer *tuple) (*varSet, bool) {
	vs := &varSet{}
	for _, t := range g.join(p.rest, outer) {
		if !isTrue(t.guard) {
			return nil, false
		}
		r := t.rows[p.inner.Source]
		if r == nil {
			return nil, false
		}
		v := r.vals[p.inner.Col]
		switch v.k {
		case kConst:
			if v.c == nil {
				continue // NULL = x is never true
			}
			if c, ok := g.code(v.c); ok {
				vs.consts = append(vs.consts, c)
			}
		case kStr:
			vs.vars = append(vs.vars, v.sv)
		case kInt:
			y, c, k, ok := v.lin.single()
			if !ok || c != 1 || k != 0 {
				return nil, false
			}
			vs.vars = append(vs.vars, y)
		default:
			return nil, false
		}
	}
	slices.Sort(vs.consts)
	vs.consts = slices.Compact(vs.consts)
	return vs, true
}

// inVars is "x is not NULL and x equals one of S": the NULL test keeps
// SQL's NULL = NULL from holding, and with it a variable of S at its NULL
// code cannot match. That needs S's NULL codes to be x's: string columns
// share code 0, an integer column's NULL code is below its domain, so S
// must be non-nullable or share x's code.
func (g *grounder) inVars(xv value, x cp.IntVar, vs *varSet) (value, bool) {
	xNull, xNullable := g.nullOf[x]
	var vars []cp.IntVar
	for _, y := range vs.vars {
		if y == x {
			return twoValued(neg(xv.null)), true // the row itself: x = x
		}
		if yNull, nullable := g.nullOf[y]; nullable && xv.k == kInt && (!xNullable || yNull != xNull) {
			return value{}, false
		}
		vars = append(vars, y)
	}
	slices.SortFunc(vars, func(a, b cp.IntVar) int { return a.Index() - b.Index() })
	vars = slices.Compact(vars)
	var parts []form
	if len(vs.consts) > 0 {
		parts = append(parts, fIn{x: x, vals: vs.consts})
	}
	if len(vars) > 0 {
		parts = append(parts, fInVars{x: x, vars: vars})
	}
	return twoValued(and(neg(xv.null), or(parts...))), true
}
