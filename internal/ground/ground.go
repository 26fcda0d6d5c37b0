// Package ground evaluates a compiled program over a snapshot of the
// database and emits the constraint model: constant parts of every
// expression are computed here (with hash joins on equality predicates), and
// only what depends on decision variables reaches the solver.
package ground

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/weavesql/weave/cp"
	"github.com/weavesql/weave/internal/ir"
)

// ErrData marks a snapshot the program cannot be grounded on.
var ErrData = errors.New("bad data")

// Aggregate grounds a constraint aggregate: Post constrains the values of
// one group (each present when its literal holds) so the aggregate holds.
type Aggregate struct {
	Post func(m *cp.Model, values []cp.LinearExpr, present []cp.Lit) []cp.Constraint
}

// Options configure grounding.
type Options struct {
	Aggregates map[string]Aggregate
	// NoBinPacking defines each bin load (sum over the rows placed on one
	// node) by its own linear constraint instead of gathering the loads
	// into bin packing (to measure the encoding).
	NoBinPacking bool
	// NoLoads grounds count/sum over a bin group as a sum over one
	// literal per (row, bin) instead of a shared load variable.
	NoLoads bool
	// NaiveSums grounds a sum over rows that exist under a condition with
	// one auxiliary variable per row (value if present, else 0) — the
	// "sum with filter" form of the paper — instead of a sum of
	// predicates (value × [condition]).
	NaiveSums bool
	// PairwiseAllDifferent posts all_different as pairwise inequalities.
	PairwiseAllDifferent bool
	// Explain grounds every hard constraint under an assumption literal
	// (see Blame), so that an infeasible model yields a core.
	Explain bool
	// Vars and Constraints are the expected size of the model (the last
	// one of the same program, typically): room reserved up front.
	Vars, Constraints int
	// HintNulls hints a stored NULL of a nullable decision column too
	// (the variable's NULL code); by default only non-NULL stored values
	// are hints.
	HintNulls bool
	// SmallSets uses the forms meant for many terms or values (a weight
	// table, a reified membership) from one on, so that tests on tiny
	// instances reach them.
	SmallSets bool
}

// Grounded is the model built for one snapshot, with what is needed to
// read a solution back.
type Grounded struct {
	Model *cp.Model
	// Soft maps each soft view to the expression of its value.
	Soft  map[string]cp.LinearExpr
	Order []string // soft view names in schema order
	// PerView counts the constraints each view added.
	PerView map[string]int
	// Views describes what each hard or soft view added to the model
	// (bin loads shared by several views are counted under "load").
	Views  map[string]*ViewStats
	snap   *Snapshot
	prog   *ir.Program
	vars   map[*ir.Table][][]cp.IntVar // [row][column] (zero IntVar for input columns)
	dict   *dictionary
	nullOf map[cp.IntVar]int64 // NULL sentinel of nullable decision variables
	// Explain mode: what each assumption literal stands for, and the
	// grounder that evaluates the subqueries of those an explanation
	// names (Resolve).
	blames     []*Blame
	blameByLit map[int]*Blame
	explainer  *grounder
}

type grounder struct {
	*Grounded
	m        *cp.Model
	opts     Options
	view     string // view being grounded, for names and errors
	rels     map[*ir.Query]*rel
	base     map[string]*rel
	index    map[indexKey]map[any][]candidate
	varIndex map[indexKey]map[int64][]candidate
	tupleBuf []tuple
	rowBuf   []*row
	// loads are the bin loads, by items and sizes (see load.go).
	loads     map[uint64][]*loadSet
	marks     []int32 // per variable index: stamp of the last binOf that saw it
	stamp     int32
	loadOrder []*loadSet
	recent    []*loadSet           // the load sets loadFor returned last
	loadVars  map[cp.IntVar]binKey // every load, by the bin it is of
	itemSets  int                  // distinct item sets of loads so far
	// sizes memoises the item sizes of sum aggregates by source row (see
	// sizeOf); -1 marks a row whose value is not a size.
	sizes map[*ir.Agg]map[*row]int64
	// lastSizes are the member sizes of the latest bin group per sum
	// aggregate, ones a shared run of 1s (see binSizes, onesOf).
	lastSizes map[*ir.Agg]*memberSizes
	ones      []int64
	// binLists are the bins made of index lists, by the list's first
	// candidate (see binListOf).
	binLists map[*candidate]*binList
	rowSeqs  map[uint64][]*binList // by a hash of their rows (see binListOf)
	// corr holds the results of correlated queries by the enclosing rows
	// they read, corrDeps those sources per query (nil: not cached).
	corr     map[corrKey]*rel
	corrDeps map[*ir.Query][]corrDep
	// existsPlans analyses EXISTS subqueries tied to a decision by one
	// equality (see exists_set.go); nil entries do not apply.
	existsPlans map[*ir.Query]*existsSetPlan
	// constCodes are the constant codes of "in (subquery)" results (see
	// constSet).
	constCodes map[*rel]*constCodes
	// Explain mode: origin maps rows of base relations to the table rows
	// they are, sources rows of derived relations to what they come from;
	// viewOf names the view of a query, lineageIDs numbers the rows that
	// come from groups.
	origin     map[*row]RowRef
	sources    map[*row]*rowSource
	viewOf     map[*ir.Query]*ir.View
	lineageIDs int
	naming     bool // Resolve is at work: lineages with members
	blameByKey map[string]*Blame
	// nePairs buffers the pairwise inequalities of the hard view being
	// grounded (see cliques.go); inHard marks that a hard view is.
	nePairs []nePair
	inHard  bool
	// forbidden collects the values the view being grounded removes from
	// decision variables' domains.
	forbidden map[forbidKey][]int64
	// assume is the assumption literal of the hard row being posted, in
	// explain mode.
	assume *cp.Lit
}

// Ground builds the constraint model of p over snap.
func Ground(p *ir.Program, snap *Snapshot, opts Options) (gr *Grounded, err error) {
	g := &grounder{
		Grounded: &Grounded{
			Model: cp.NewModel(), Soft: map[string]cp.LinearExpr{}, PerView: map[string]int{}, Views: map[string]*ViewStats{},
			snap: snap, prog: p, vars: map[*ir.Table][][]cp.IntVar{}, dict: newDictionary(), nullOf: map[cp.IntVar]int64{},
			blameByLit: map[int]*Blame{},
		},
		origin:      map[*row]RowRef{},
		blameByKey:  map[string]*Blame{},
		loads:       map[uint64][]*loadSet{},
		loadVars:    map[cp.IntVar]binKey{},
		sizes:       map[*ir.Agg]map[*row]int64{},
		lastSizes:   map[*ir.Agg]*memberSizes{},
		binLists:    map[*candidate]*binList{},
		rowSeqs:     map[uint64][]*binList{},
		corr:        map[corrKey]*rel{},
		corrDeps:    map[*ir.Query][]corrDep{},
		existsPlans: map[*ir.Query]*existsSetPlan{},
		constCodes:  map[*rel]*constCodes{},
		opts:        opts,
		rels:        map[*ir.Query]*rel{},
		base:        map[string]*rel{},
		index:       map[indexKey]map[any][]candidate{},
		varIndex:    map[indexKey]map[int64][]candidate{},
	}
	g.m = g.Model
	g.m.Grow(opts.Vars, opts.Constraints)
	if opts.Explain {
		g.sources = map[*row]*rowSource{}
		g.viewOf = map[*ir.Query]*ir.View{}
		for _, v := range p.Views {
			if v.Query != nil {
				g.viewOf[v.Query] = v
			}
		}
		g.explainer = g
	}
	defer func() {
		if r := recover(); r != nil {
			if ge, ok := r.(groundError); ok {
				gr, err = nil, ge.err
				return
			}
			panic(r)
		}
	}()
	g.makeVariables()
	g.view = ""
	g.uniqueColumns()
	// The decision cells are what the search branches on; auxiliaries
	// (loads, min/max targets, reified conditions) follow by propagation.
	var decisions []cp.IntVar
	for _, c := range g.Cells() {
		decisions = append(decisions, c.Var)
	}
	if len(decisions) > 0 {
		g.m.AddDecisionStrategy(decisions)
	}
	var objective lin
	for _, v := range p.Views {
		if v.Kind != ir.Hard && v.Kind != ir.Soft {
			continue
		}
		g.view = v.Name
		vars0, cons0, t0 := g.m.NumVars(), g.m.NumConstraints(), time.Now()
		if v.ByDomain && !g.opts.Explain {
			g.count(v.Name, vars0, cons0) // the domain enforces it
			continue
		}
		if v.Kind == ir.Hard {
			g.inHard = true
			g.hard(v)
			g.inHard = false
			g.flushCliques()
			g.flushForbidden()
		} else {
			e := g.soft(v)
			g.flushForbidden()
			g.Soft[v.Name] = e.expr()
			g.Order = append(g.Order, v.Name)
			objective = objective.add(e, 1)
		}
		g.count(v.Name, vars0, cons0)
		g.Views[v.Name].Ground += time.Since(t0)
	}
	vars0, cons0 := g.m.NumVars(), g.m.NumConstraints()
	g.flushLoads()
	if g.m.NumConstraints() > cons0 {
		g.count("load", vars0, cons0)
	}
	if len(g.Order) > 0 {
		g.m.Maximize(objective.expr())
	}
	if err := g.m.Err(); err != nil {
		return nil, err
	}
	return g.Grounded, nil
}

// ViewStats is what one view contributed to the model.
type ViewStats struct {
	Variables   int
	Constraints int
	ByKind      map[string]int
	Ground      time.Duration
}

// count records the variables and constraints added since the marks.
func (g *grounder) count(name string, vars0, cons0 int) {
	vs := g.Views[name]
	if vs == nil {
		vs = &ViewStats{ByKind: map[string]int{}}
		g.Views[name] = vs
	}
	vs.Variables += g.m.NumVars() - vars0
	for i := cons0; i < g.m.NumConstraints(); i++ {
		k, _ := g.m.ConstraintKindAt(i)
		vs.ByKind[string(k)]++
		vs.Constraints++
	}
	g.PerView[name] = vs.Constraints
}

// groundError carries an error out of deep recursion.
type groundError struct{ err error }

// relation returns the fetched relation named name (nil if the snapshot
// does not hold it), waiting while it is being read. If it cannot be
// read, grounding stops with errFetchFailed: the snapshot's Wait says why.
func (g *grounder) relation(name string) *Relation {
	r, err := g.snap.relation(name)
	if err != nil {
		panic(groundError{err})
	}
	return r
}

func (g *grounder) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if g.view != "" {
		msg = g.view + ": " + msg
	}
	panic(groundError{fmt.Errorf("%w: %s", ErrData, msg)})
}

// note names a constraint after the view being grounded.
func (g *grounder) note(c cp.Constraint) {
	if g.view != "" {
		c.WithName(g.view)
	}
}

// dictionary gives every string a code; decision variables of string
// columns range over codes. Code 0 stands for NULL.
type dictionary struct {
	code map[string]int64
	str  []string
}

func newDictionary() *dictionary {
	return &dictionary{code: map[string]int64{}, str: []string{""}}
}

func (d *dictionary) get(s string) int64 {
	if c, ok := d.code[s]; ok {
		return c
	}
	c := int64(len(d.str))
	d.code[s] = c
	d.str = append(d.str, s)
	return c
}

// lookup returns the code of s, or -1 if no variable can take it.
func (d *dictionary) lookup(s string) int64 {
	if c, ok := d.code[s]; ok {
		return c
	}
	return -1
}

// makeVariables creates one solver variable per row and decision column,
// over the column's inferred domain.
func (g *grounder) makeVariables() {
	for _, t := range g.prog.Tables {
		if !t.HasVariables() {
			continue
		}
		r := g.relation(t.Name)
		if r == nil {
			g.fail("table %s was not read", t.Name)
		}
		vars := make([][]cp.IntVar, len(r.Rows))
		for ci, c := range t.Columns {
			if !c.Variable {
				continue
			}
			dom := g.domain(t, c)
			var null int64
			if c.Nullable {
				switch {
				case c.Type == ir.String:
					null = 0
				case len(dom) > 0:
					null = dom[0] - 1
				default:
					null = 0
				}
				dom = append([]int64{null}, dom...)
			}
			if len(dom) == 0 {
				g.fail("variable column %s.%s has no possible value: its domain (%s) is empty in this database", t.Name, c.Name, domainReasons(c))
			}
			d := cp.DomainFromValues(dom...)
			for ri := range r.Rows {
				if vars[ri] == nil {
					vars[ri] = make([]cp.IntVar, len(t.Columns))
				}
				x := g.m.NewIntVarFromDomain(d, fmt.Sprintf("%s[%d].%s", t.Name, ri, c.Name))
				vars[ri][ci] = x
				if c.Nullable {
					g.nullOf[x] = null
				}
				// The stored value is ignored as a fact but is a good
				// first guess: warm-start the search from the current
				// configuration. A stored NULL is no guess unless
				// HintNulls says so: the row is not decided yet (a
				// pending pod), and hinting "leave it unassigned" would
				// make the first solution place nothing.
				if h, ok := g.code(r.Rows[ri][ci]); ok && d.Contains(h) {
					g.m.AddHint(x, h)
				} else if r.Rows[ri][ci] == nil && c.Nullable && g.opts.HintNulls {
					g.m.AddHint(x, null)
				}
			}
		}
		g.vars[t] = vars
	}
}

// uniqueColumns posts an all_different over every decision column with a
// single-column key: the database would reject duplicates, so the solver
// must not propose them. NULLs (nullable columns) may repeat, as in SQL.
func (g *grounder) uniqueColumns() {
	for _, t := range g.prog.Tables {
		for ci, c := range t.Columns {
			if !c.Variable || !c.Unique {
				continue
			}
			name := t.Name + "." + c.Name + " unique"
			var xs []cp.IntVar
			for _, row := range g.vars[t] {
				xs = append(xs, row[ci])
			}
			if !c.Nullable {
				g.m.AddAllDifferent(xs...).WithName(name)
				continue
			}
			for i := range xs {
				for j := i + 1; j < len(xs); j++ {
					var d cp.LinearExpr
					d.AddTerm(xs[i], 1).AddTerm(xs[j], -1)
					g.m.AddNotEqual(d, 0).OnlyEnforceIf(g.m.EqLit(xs[i], g.nullOf[xs[i]]).Not(), g.m.EqLit(xs[j], g.nullOf[xs[j]]).Not()).WithName(name)
				}
			}
		}
	}
}

func domainReasons(c *ir.Column) string {
	var s []string
	for _, d := range c.Domain {
		s = append(s, d.Reason)
	}
	if len(s) == 0 {
		return "boolean"
	}
	return fmt.Sprint(s)
}

// domain computes the values a decision column may take: the intersection
// of its domain sources, as codes for strings.
func (g *grounder) domain(t *ir.Table, c *ir.Column) []int64 {
	if c.Type == ir.Bool && len(c.Domain) == 0 {
		return []int64{0, 1}
	}
	var set map[int64]bool
	for _, d := range c.Domain {
		vals := map[int64]bool{}
		add := func(v any) {
			switch x := v.(type) {
			case int64:
				vals[x] = true
			case string:
				vals[g.dict.get(x)] = true
			case bool:
				if x {
					vals[1] = true
				} else {
					vals[0] = true
				}
			}
		}
		if col, ok := g.storedColumn(d.Query); ok {
			for _, row := range col {
				add(row)
			}
		} else if d.Query != nil {
			r := g.eval(d.Query, nil)
			for _, row := range r.rows {
				if !isTrue(row.guard) || row.vals[0].k != kConst {
					g.fail("the domain of %s.%s (%s) depends on decision variables", t.Name, c.Name, d.Reason)
				}
				add(row.vals[0].c)
			}
		} else {
			for _, v := range d.Values {
				add(v)
			}
		}
		if set == nil {
			set = vals
			continue
		}
		for v := range set {
			if !vals[v] {
				delete(set, v)
			}
		}
	}
	out := make([]int64, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// storedColumn returns the values of q when q only reads one stored
// column of a fetched relation ("select name from node", a foreign key's
// or a pushed-down view's): the domain is read off the fetched rows, not
// built as a relation of rows first (a row per node per batch).
func (g *grounder) storedColumn(q *ir.Query) ([]any, bool) {
	if q == nil || len(q.From) != 1 || len(q.Filters) > 0 || q.Aggregate || len(q.GroupBy) > 0 || len(q.Having) > 0 ||
		q.Check != nil || len(q.Constraints) > 0 || len(q.Select) != 1 {
		return nil, false
	}
	s := q.From[0]
	c, ok := q.Select[0].Expr.(*ir.ColRef)
	if !ok || c.Up != 0 || c.Source != 0 || c.IsVar || s.Kind != ir.FromTable && s.Kind != ir.FromInput {
		return nil, false
	}
	if s.Kind == ir.FromTable && s.Table.Columns[c.Col].Variable {
		return nil, false
	}
	data := g.relation(s.Name())
	if data == nil {
		g.fail("relation %s was not read", s.Name())
	}
	out := make([]any, len(data.Rows))
	for i, r := range data.Rows {
		out[i] = r[c.Col]
	}
	return out, true
}

// code converts a stored constant to the integer a variable would hold.
func (g *grounder) code(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case string:
		c := g.dict.lookup(x)
		return c, c >= 0
	}
	return 0, false
}

// Cell is one decision cell: a variable column of one fetched row.
type Cell struct {
	Table    *ir.Table
	Row, Col int
	Var      cp.IntVar
}

// Cells lists every decision cell, table by table, row by row.
func (gr *Grounded) Cells() []Cell {
	var out []Cell
	for _, t := range gr.prog.Tables {
		for ri, row := range gr.vars[t] {
			for ci, x := range row {
				if t.Columns[ci].Variable {
					out = append(out, Cell{Table: t, Row: ri, Col: ci, Var: x})
				}
			}
		}
	}
	return out
}

// Decode turns the value v of a cell's variable into the SQL value it
// stands for (a string for string columns, nil for NULL).
func (gr *Grounded) Decode(c Cell, v int64) any {
	if n, ok := gr.nullOf[c.Var]; ok && v == n {
		return nil
	}
	switch c.Table.Columns[c.Col].Type {
	case ir.String:
		return gr.dict.str[v]
	case ir.Bool:
		return v != 0
	}
	return v
}

// Value reads a decision cell of a solved table: the row index in the
// fetched relation and the column index.
func (gr *Grounded) Value(r *cp.Response, t *ir.Table, row, col int) any {
	x := gr.vars[t][row][col]
	return gr.Decode(Cell{Table: t, Row: row, Col: col, Var: x}, r.Value(x))
}

// Rows returns the fetched rows of a table, in the order Value indexes them.
func (gr *Grounded) Rows(t *ir.Table) [][]any {
	return gr.snap.rows(t.Name)
}
