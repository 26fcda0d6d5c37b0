package weave

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weavesql/weave/cp"
	"github.com/weavesql/weave/internal/ground"
)

// Solve reads one consistent snapshot of the state (one read transaction),
// grounds the model over it, solves it with the native solver and returns
// the tables with their variable columns filled in.
//
// Infeasibility is a status, not an error. Errors are returned for database
// failures, data the model cannot be grounded on (ErrData), a solution the
// database rejects under Verify (ErrVerify), and invalid models (ErrSolver).
func (m *Model) Solve(ctx context.Context, opts SolveOptions) (*Result, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.db == nil {
		return nil, ErrNotConnected
	}
	res := &Result{Soft: map[string]int64{}, Tables: map[string]*Table{}}
	st := &res.Stats

	// The snapshot is read while the model is grounded: the grounder
	// waits for a relation only when it first reads it.
	t0 := time.Now()
	snap, finish, err := m.startFetch(ctx, opts.NoExplain, opts.TableVersions)
	if err != nil {
		return nil, err
	}
	defer snap.Stop() // a panic in grounding leaves the fetch waiting for asks
	gr, gerr := ground.Ground(m.prog, snap, m.groundOptions(ground.Options{Vars: m.lastVars, Constraints: m.lastConstraints, HintNulls: opts.HintNulls}))
	st.Ground = time.Since(t0)
	if opts.NoExplain || gerr != nil {
		// Nothing grounds this snapshot again (an explanation would, over
		// every view): the relations no view asked for are left unread.
		snap.Stop()
	}
	if gerr == nil {
		m.plan.Learn(snap)
	}
	fetched, err := finish()
	if err != nil {
		return nil, err // a read failed: its error, whatever grounding said
	}
	st.Fetch = fetched
	if gerr != nil {
		if errors.Is(gerr, ground.ErrData) {
			return nil, fmt.Errorf("%w: %v", ErrData, strings.TrimPrefix(gerr.Error(), ground.ErrData.Error()+": "))
		}
		return nil, fmt.Errorf("%w: %v", ErrSolver, gerr)
	}
	m.lastVars, m.lastConstraints = gr.Model.NumVars(), gr.Model.NumConstraints()
	st.Rows = map[string]int{}
	for name, r := range snap.Relations {
		st.Rows[name] = len(r.Rows)
	}
	st.Reused = snap.Reused
	st.PerView = gr.PerView
	st.Views = map[string]ViewStats{}
	for name, v := range gr.Views {
		st.Views[name] = ViewStats{Variables: v.Variables, Constraints: v.Constraints, ByKind: v.ByKind, Ground: v.Ground}
	}

	t0 = time.Now()
	params := cp.Params{TimeLimit: opts.Timeout, Seed: opts.Seed, Workers: opts.Workers, StopAfterFirstSolution: opts.FirstSolution, ImprovementTimeout: opts.ImprovementTimeout,
		WideGapImprovementTimeout: opts.WideGapImprovementTimeout, WideGap: opts.WideGap, AbsoluteGapLimit: opts.AbsoluteGapLimit}
	var resp *cp.Response
	if opts.Backend != nil {
		resp, err = opts.Backend.Solve(ctx, gr.Model, params)
		if err == nil && resp == nil {
			err = fmt.Errorf("backend %s returned no response", opts.Backend.Name())
		}
		if err != nil {
			return nil, fmt.Errorf("%w: backend %s: %v", ErrSolver, opts.Backend.Name(), err)
		}
	} else {
		resp, err = gr.Model.Solve(ctx, params)
	}
	st.Solve = time.Since(t0)
	st.Variables = resp.Stats.Variables
	st.Constraints = resp.Stats.Constraints
	st.ByKind = resp.Stats.ConstraintsByKind
	st.PresolvedVariables = resp.Stats.PresolvedVariables
	st.PresolvedConstraints = resp.Stats.PresolvedConstraints
	st.PresolvedByKind = resp.Stats.PresolvedByKind
	for name, kinds := range resp.Stats.PresolvedByName {
		if vs, ok := st.Views[name]; ok {
			vs.PresolvedByKind = kinds
			for _, n := range kinds {
				vs.Presolved += n
			}
			st.Views[name] = vs
		}
	}
	st.Branches = resp.Stats.Branches
	st.Conflicts = resp.Stats.Conflicts
	st.Solutions = resp.Stats.Solutions
	st.FirstSolution = resp.Stats.FirstSolution
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSolver, err)
	}
	switch resp.Status {
	case cp.Optimal:
		res.Status = Optimal
	case cp.Feasible:
		res.Status = Feasible
	case cp.Infeasible:
		res.Status = Infeasible
	default:
		res.Status = Unknown
	}
	if res.Status == Infeasible && !opts.NoExplain {
		t0 = time.Now()
		budget := opts.ExplainTimeout
		if budget <= 0 {
			budget = time.Second
		}
		expl, err := m.explain(ctx, snap, budget)
		if err != nil {
			return nil, fmt.Errorf("%w: explaining infeasibility: %v", ErrSolver, err)
		}
		res.Explanation = expl
		st.Explain = time.Since(t0)
	}
	if !resp.HasSolution() || !res.Status.HasSolution() {
		return res, nil
	}
	// The referee: the solver's answer must satisfy its own model.
	if err := gr.Model.Verify(resp); err != nil {
		return nil, fmt.Errorf("%w: the solver returned an assignment that violates its model: %v", ErrSolver, err)
	}

	t0 = time.Now()
	m.extract(gr, resp, res)
	if res.Objective != nil && *res.Objective != resp.Objective {
		return nil, fmt.Errorf("%w: soft constraints sum to %d but the solver reports objective %d", ErrSolver, *res.Objective, resp.Objective)
	}
	st.Extract = time.Since(t0)

	if opts.Verify {
		t0 = time.Now()
		if err := m.verify(ctx, res); err != nil {
			return nil, err
		}
		st.Verify = time.Since(t0)
	}
	return res, nil
}

// startFetch starts reading what the model needs in one read transaction
// (on PostgreSQL a REPEATABLE READ one: one snapshot for every statement)
// and returns the snapshot being filled. finish waits for the reads, ends
// the transaction and returns how long the reads took, or why they
// failed; it must be called once.
func (m *Model) startFetch(ctx context.Context, lazy bool, versions map[string]uint64) (snap *ground.Snapshot, finish func() (time.Duration, error), err error) {
	if !m.readsPrepared {
		// Not under ctx: a statement left out because this solve's
		// context ended would run unprepared in every later solve.
		m.reads = prepareReads(context.WithoutCancel(ctx), m.db, append(ground.Queries(m.prog), ground.WholeQueries(m.prog)...))
		m.readsPrepared = true
	}
	d := dialectOf(m.db)
	tx, err := m.db.BeginTx(ctx, snapshotOptions(d))
	if err != nil {
		return nil, nil, dbError("starting the read transaction", err)
	}
	if d == dialectPostgres {
		if err := jitOff(ctx, tx); err != nil {
			tx.Rollback()
			return nil, nil, dbError("starting the read transaction", err)
		}
	}
	snap = ground.Start(ctx, m.reads.in(tx), m.plan, lazy, versions)
	finish = func() (time.Duration, error) {
		defer tx.Rollback()
		if err := snap.Wait(); err != nil {
			if connectionLost(err) {
				return 0, dbError("reading the state", err)
			}
			return 0, fmt.Errorf("weave: %w", err)
		}
		if err := tx.Commit(); err != nil {
			return 0, dbError("reading the state", err)
		}
		return snap.Took, nil
	}
	return snap, finish, nil
}

// fetch reads what the model needs in one read transaction and waits for
// the whole snapshot (explanations, tests).
func (m *Model) fetch(ctx context.Context) (*ground.Snapshot, error) {
	snap, finish, err := m.startFetch(ctx, false, nil)
	if err != nil {
		return nil, err
	}
	if _, err := finish(); err != nil {
		return nil, err
	}
	return snap, nil
}

// groundOptions completes grounding options with the model's aggregates
// and encoding.
func (m *Model) groundOptions(o ground.Options) ground.Options {
	o.Aggregates = m.groundAggregates()
	o.NaiveSums = m.enc.NaiveSums
	o.NoLoads = m.enc.NoLoads
	o.NoBinPacking = m.enc.NoBinPacking
	o.PairwiseAllDifferent = m.enc.Pairwise
	o.SmallSets = m.smallSets
	return o
}

func (m *Model) groundAggregates() map[string]ground.Aggregate {
	out := map[string]ground.Aggregate{}
	for name, a := range m.aggs {
		out[name] = ground.Aggregate{Post: a.Post}
	}
	return out
}

// extract fills the result's tables and soft values from the solution.
func (m *Model) extract(gr *ground.Grounded, resp *cp.Response, res *Result) {
	var total int64
	for _, name := range gr.Order {
		v := evalLinear(gr.Soft[name], resp)
		res.Soft[name] = v
		total += v
	}
	if len(gr.Order) > 0 {
		res.Objective = &total
		b := resp.Bound
		res.Bound = &b
	}
	for _, t := range m.prog.Tables {
		if !t.HasVariables() {
			continue
		}
		tab := &Table{Name: t.Name}
		for _, c := range t.Columns {
			tab.Columns = append(tab.Columns, c.Name)
		}
		for ri, data := range gr.Rows(t) {
			row := Row{}
			for ci, c := range t.Columns {
				if c.Variable {
					row[c.Name] = gr.Value(resp, t, ri, ci)
				} else {
					row[c.Name] = data[ci]
				}
			}
			tab.Rows = append(tab.Rows, row)
		}
		res.Tables[t.Name] = tab
	}
}

func evalLinear(e cp.LinearExpr, r *cp.Response) int64 {
	v := e.Offset
	for i, x := range e.Vars {
		v += e.Coeffs[i] * r.Value(x)
	}
	return v
}
