package minizinc

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weavesql/weave/backend/minizinc/mzntest"
	"github.com/weavesql/weave/cp"
)

var (
	flagModels = flag.Int("models", 0, "differential test: number of random models (0: 3000, 600 with -short; Naive style 600, 200)")
	flagSeed   = flag.Uint64("seed", 1, "differential test: first seed")
)

// The differential test solves random models with cp and with Gecode and
// checks that they agree on feasibility and on the optimum where both
// prove it, and that every solution passes cp's Verify.
//
// MiniZinc start-up (~0.1 s of CPU to load its library) dominates a tiny
// model, so the models are solved in batches, several independent models
// in one MiniZinc file, each with its own variable prefix:
//
//   - models cp finds feasible are conjoined. Each objective becomes a
//     variable o_k, and the search is seq_search over o_1 (largest value
//     first when maximising), the model's variables, o_2, ... with
//     "solve satisfy": depth-first search then returns, for every
//     component, the best value of o_k that has a completion before
//     trying a smaller one, i.e. its optimum, without the product blow-up
//     a summed objective would cause in branch-and-bound.
//   - models cp proves infeasible are disjoined: a selector sel in 1..K
//     enables the constraints of one component (the others' variables are
//     fixed), so the batch is unsatisfiable iff every member is.
//
// A batch that does not come back as expected is re-solved member by
// member through Backend.Solve, and a sample of every run is also solved
// through Backend.Solve, the path weave uses.
func TestDifferential(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 600
	}
	differential(t, Optimized, n, genModel)
}

// TestDifferentialNaive runs the differential test on the Naive emission
// style, on fewer models (its sums and pairwise disequalities flatten to
// larger FlatZinc).
func TestDifferentialNaive(t *testing.T) {
	n := 600
	if testing.Short() {
		n = 200
	}
	differential(t, Naive, n, genModel)
}

// TestDifferentialEnforcedAllDifferent compares cp with Gecode on random
// models centred on all_different under enforcement literals (emitted as
// lit -> alldifferent(...), or pairwise in the Naive style), in both
// styles.
func TestDifferentialEnforcedAllDifferent(t *testing.T) {
	for _, tc := range []struct {
		style    Style
		n, short int
	}{{Optimized, 1500, 300}, {Naive, 500, 100}} {
		t.Run(tc.style.String(), func(t *testing.T) {
			n := tc.n
			if testing.Short() {
				n = tc.short
			}
			differential(t, tc.style, n, genEnforcedAllDiff)
		})
	}
}

// genEnforcedAllDiff is genModel (whose all_different is never enforced)
// plus one to three all_different over random members, a variable
// sometimes twice, each under one or two literals: fresh Booleans, their
// negations, or encoding literals; sometimes the Booleans are assumed or
// one of them is required.
func genEnforcedAllDiff(seed uint64) *cp.Model {
	m := genModel(seed)
	if m.Err() != nil {
		return m
	}
	r := rand.New(rand.NewPCG(seed, 0xad))
	in := func(lo, hi int64) int64 { return lo + r.Int64N(hi-lo+1) }
	var ints []cp.IntVar
	for i := 0; i < m.NumVars(); i++ {
		if !m.IsEncodingVar(i) && m.VarDomain(i).Size() > 1 {
			ints = append(ints, m.Var(i))
		}
	}
	for i := 0; i < 2+r.IntN(3); i++ {
		ints = append(ints, m.NewIntVar(in(-3, 1), in(1, 5), "y"))
	}
	var bools []cp.Lit
	for i := 0; i < 1+r.IntN(3); i++ {
		bools = append(bools, m.NewBoolVar("e"))
	}
	lit := func() cp.Lit {
		switch r.IntN(6) {
		case 0:
			return m.EqLit(ints[r.IntN(len(ints))], in(-3, 5))
		case 1:
			return m.LeLit(ints[r.IntN(len(ints))], in(-3, 5))
		}
		l := bools[r.IntN(len(bools))]
		if r.IntN(3) == 0 {
			l = l.Not()
		}
		return l
	}
	for k := 0; k < 1+r.IntN(3); k++ {
		var vs []cp.IntVar
		for i := 0; i < 2+r.IntN(4); i++ {
			vs = append(vs, ints[r.IntN(len(ints))])
		}
		var enf []cp.Lit
		for i := 0; i < 1+r.IntN(2); i++ {
			enf = append(enf, lit())
		}
		m.AddAllDifferent(vs...).OnlyEnforceIf(enf...)
	}
	switch r.IntN(4) {
	case 0:
		m.AddBoolOr(bools...)
	case 1:
		m.AddAssumptions(bools[:1+r.IntN(len(bools))]...)
	}
	return m
}

func differential(t *testing.T, style Style, n int, gen func(seed uint64) *cp.Model) {
	mzntest.Require(t)
	if *flagModels != 0 {
		n = *flagModels
	}
	start := time.Now()
	d := &diffRun{t: t, style: style}
	models := make([]*diffModel, 0, n)
	for s := *flagSeed; len(models) < n; s++ {
		m := gen(s)
		if m.Err() != nil {
			continue
		}
		models = append(models, &diffModel{seed: s, m: m})
	}
	parallel(len(models), func(i int) { d.solveCP(models[i]) })
	cpTime := time.Since(start)

	var sat, unsat, single []*diffModel
	for i, dm := range models {
		switch {
		case i%50 == 0:
			single = append(single, dm)
		case dm.cp.Status == cp.Feasible || dm.cp.Status == cp.Optimal:
			sat = append(sat, dm)
		case dm.cp.Status == cp.Infeasible:
			unsat = append(unsat, dm)
		default:
			single = append(single, dm)
		}
	}
	const batch = 25
	var jobs [][]*diffModel
	for _, g := range [][]*diffModel{sat, unsat} {
		for i := 0; i < len(g); i += batch {
			jobs = append(jobs, g[i:min(i+batch, len(g))])
		}
	}
	nsat := len(jobs) - (len(unsat)+batch-1)/batch
	var retry []*diffModel
	var mu sync.Mutex
	batchStart := time.Now()
	parallel(len(jobs), func(i int) {
		var failed []*diffModel
		if i < nsat {
			failed = d.batchSat(jobs[i])
		} else {
			failed = d.batchUnsat(jobs[i])
		}
		mu.Lock()
		retry = append(retry, failed...)
		mu.Unlock()
	})
	batchTime := time.Since(batchStart)
	single = append(single, retry...)
	singleStart := time.Now()
	parallel(len(single), func(i int) { d.single(single[i]) })
	singleTime := time.Since(singleStart)

	counts := map[string]int{}
	for _, dm := range models {
		counts[dm.cp.Status.String()]++
	}
	t.Logf("%s style: compared %d models (cp: %v) with Gecode in %d batched and %d single minizinc runs (%d retried singly); %v (cp %v, batches %v, singles %v)",
		style, len(models), counts, len(jobs), len(single), len(retry), time.Since(start).Round(time.Millisecond),
		cpTime.Round(time.Millisecond), batchTime.Round(time.Millisecond), singleTime.Round(time.Millisecond))
	if len(d.unproven) > 0 {
		sort.Strings(d.unproven)
		t.Logf("cp did not prove optimality within %v on %d models Gecode proved: %s", cpTimeLimit, len(d.unproven), strings.Join(d.unproven, ", "))
	}
	if d.disagreements > 0 {
		t.Errorf("%d disagreements", d.disagreements)
	}
}

type diffModel struct {
	seed uint64
	m    *cp.Model
	cp   *cp.Response
}

type diffRun struct {
	t             *testing.T
	style         Style
	mu            sync.Mutex
	disagreements int
	unproven      []string // cp Feasible where Gecode proved the optimum
}

// better reports whether objective a is strictly better than b.
func better(m *cp.Model, a, b int64) bool {
	obj, _ := m.Objective()
	if obj.Maximize {
		return a > b
	}
	return a < b
}

func (d *diffRun) fail(dm *diffModel, format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.disagreements++
	if d.disagreements > 10 {
		return
	}
	src, _ := Emit(dm.m, d.style)
	d.t.Errorf("seed %d: %s\ncp: %v obj %d\n%s", dm.seed, fmt.Sprintf(format, args...), dm.cp.Status, dm.cp.Objective, src)
}

func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.NumCPU(); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// cpTimeLimit bounds cp on each random model. These models take cp
// microseconds, except those hitting its known weakness (see the report
// in TestDifferential's log: optimality not proven).
const cpTimeLimit = 250 * time.Millisecond

func (d *diffRun) solveCP(dm *diffModel) {
	r, err := dm.m.Solve(context.Background(), cp.Params{TimeLimit: cpTimeLimit, Seed: 1})
	if err != nil {
		d.t.Errorf("seed %d: cp: %v", dm.seed, err)
		r = &cp.Response{Status: cp.Unknown}
	}
	dm.cp = r
	if r.HasSolution() {
		if err := dm.m.Verify(r); err != nil {
			d.fail(dm, "cp solution fails Verify: %v", err)
		}
	}
}

// compare checks a Gecode response for dm against cp's.
func (d *diffRun) compare(dm *diffModel, g *cp.Response, gecodeOptimal bool) {
	if g.HasSolution() {
		if err := dm.m.Verify(g); err != nil {
			d.fail(dm, "Gecode solution fails Verify (emitter bug?): %v\nvalues %v", err, g.Values())
			return
		}
	}
	_, hasObj := dm.m.Objective()
	switch {
	case dm.cp.Status == cp.Infeasible && g.HasSolution():
		d.fail(dm, "cp says infeasible, Gecode found a verified solution %v", g.Values())
	case dm.cp.HasSolution() && g.Status == cp.Infeasible:
		d.fail(dm, "cp found a verified solution, Gecode says infeasible")
	case hasObj && dm.cp.Status == cp.Optimal && gecodeOptimal && g.Objective != dm.cp.Objective:
		d.fail(dm, "optimum: cp %d, Gecode %d (Gecode solution %v, cp solution %v)", dm.cp.Objective, g.Objective, g.Values(), dm.cp.Values())
	case hasObj && dm.cp.HasSolution() && gecodeOptimal && better(dm.m, dm.cp.Objective, g.Objective):
		d.fail(dm, "cp's solution (objective %d) beats Gecode's proven optimum %d", dm.cp.Objective, g.Objective)
	case hasObj && dm.cp.Status == cp.Feasible && gecodeOptimal:
		d.mu.Lock()
		d.unproven = append(d.unproven, fmt.Sprintf("seed %d (cp %d, optimum %d)", dm.seed, dm.cp.Objective, g.Objective))
		d.mu.Unlock()
	}
}

func (d *diffRun) single(dm *diffModel) {
	g, err := Backend{Style: d.style}.Solve(context.Background(), dm.m, cp.Params{TimeLimit: 20 * time.Second, Seed: 1})
	if err != nil {
		d.fail(dm, "backend: %v", err)
		return
	}
	d.compare(dm, g, g.Status == cp.Optimal)
}

// runBatch runs minizinc on src with a time limit.
func runBatch(src string) (procOutput, error) {
	return Backend{}.run(context.Background(), src, []string{"--solver", "gecode", "--output-mode", "dzn", "--time-limit", "20000"})
}

func prefix(k int) string { return fmt.Sprintf("c%d_", k) }

// batchSat conjoins feasible models; it returns the members to re-solve
// singly.
func (d *diffRun) batchSat(ms []*diffModel) []*diffModel {
	var decls, cons strings.Builder
	inc := map[string]bool{}
	var search []string
	es := make([]*emitter, len(ms))
	for k, dm := range ms {
		e := newEmitter(dm.m, prefix(k), "", d.style)
		es[k] = e
		e.decls(&decls)
		if err := e.constraints(&cons); err != nil {
			d.fail(dm, "emit: %v", err)
			continue
		}
		e.assumptions(&cons)
		for n := range e.inc {
			inc[n] = true
		}
		if obj, ok := dm.m.Objective(); ok && len(obj.Expr.Vars) > 0 {
			o := prefix(k) + "obj"
			fmt.Fprintf(&decls, "var int: %s = %s;\n", o, e.expr(obj.Expr))
			val := "indomain_min"
			if obj.Maximize {
				val = "indomain_max"
			}
			search = append(search, fmt.Sprintf("int_search([%s], input_order, %s, complete)", o, val))
		}
		var vs []string
		for i := 0; i < dm.m.NumVars(); i++ {
			if !e.omitted(i) {
				vs = append(vs, e.v(i))
			}
		}
		search = append(search, fmt.Sprintf("int_search([%s], input_order, indomain_min, complete)", strings.Join(vs, ", ")))
	}
	src := includeText(inc) + decls.String() + cons.String() +
		"solve :: seq_search([\n  " + strings.Join(search, ",\n  ") + "]) satisfy;\n"
	out, err := runBatch(src)
	if err != nil {
		if os.Getenv("WEAVE_MZN_DEBUG") != "" {
			d.t.Logf("batch from seed %d: %v\n%s\n%s\n%s", ms[0].seed, err, src, out.stdout, tail(out.stderr))
		}
		return ms
	}
	for k, dm := range ms {
		r, perr := parseOutput(out, prefix(k), dm.m.NumVars(), es[k].skip)
		if perr != nil || r.values == nil {
			return ms
		}
		es[k].complete(r.values)
		g := dm.m.NewResponseFromValues(r.values)
		g.Status = cp.Optimal
		d.compare(dm, g, true)
	}
	return nil
}

// batchUnsat disjoins infeasible models; it returns the members to
// re-solve singly.
func (d *diffRun) batchUnsat(ms []*diffModel) []*diffModel {
	var b strings.Builder
	inc := map[string]bool{}
	fmt.Fprintf(&b, "var 1..%d: sel;\n", len(ms))
	for k, dm := range ms {
		guard := fmt.Sprintf("(sel = %d)", k+1)
		e := newEmitter(dm.m, prefix(k), guard, d.style)
		e.decls(&b)
		for i := 0; i < dm.m.NumVars(); i++ {
			if !e.omitted(i) {
				fmt.Fprintf(&b, "constraint %s \\/ %s = %d;\n", guard, e.v(i), dm.m.VarDomain(i).Min())
			}
		}
		if err := e.constraints(&b); err != nil {
			d.fail(dm, "emit: %v", err)
			continue
		}
		e.assumptions(&b)
		for n := range e.inc {
			inc[n] = true
		}
	}
	src := includeText(inc) + b.String() + "solve :: int_search([sel], input_order, indomain_min, complete) satisfy;\n"
	out, err := runBatch(src)
	if err != nil {
		if os.Getenv("WEAVE_MZN_DEBUG") != "" {
			d.t.Logf("batch from seed %d: %v\n%s\n%s\n%s", ms[0].seed, err, src, out.stdout, tail(out.stderr))
		}
		return ms
	}
	r, _ := parseOutput(out, "", 0, nil)
	if r.unsat {
		return nil // every member infeasible, as cp says
	}
	return ms // some member has a solution: find it singly
}

func includeText(inc map[string]bool) string {
	var b strings.Builder
	(&emitter{inc: inc}).includes(&b)
	return b.String()
}
