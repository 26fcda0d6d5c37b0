package ground

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weavesql/weave/internal/ir"
)

// Relation is the fetched content of a table or pushed-down view. Values
// are int64, bool, string or nil.
type Relation struct {
	Name    string
	Columns []string
	Types   []ir.Type
	Rows    [][]any
}

// Snapshot is everything one solve reads, fetched in one transaction.
//
// Start returns it while it is being filled and the model is grounded
// meanwhile: the grounder waits for a relation only when it first reads
// it, so reading the database and grounding overlap.
type Snapshot struct {
	// Relations holds every relation once the snapshot is complete (after
	// Wait).
	Relations map[string]*Relation
	// Took is how long the reads took (set once Wait returns), not
	// counting a lazy fetch's waits for the grounder to ask.
	Took time.Duration
	// Reused names the tables taken from an earlier snapshot instead of
	// read (Start's versions), in the order they were (set once Wait
	// returns).
	Reused []string
	// pending holds, while the fetch runs, each relation's slot.
	pending map[string]*pendingRelation
	done    chan struct{}
	err     error

	// mu guards the fields below: the grounder asks for a relation the
	// fetch has not started (asked, read next), and Stop ends the fetch
	// after the relation being read.
	mu      sync.Mutex
	asked   []*pendingRelation
	stopped bool
	// used lists the relations the grounder asked for, in the order it
	// first did (Plan.Learn).
	used []int
	// wake signals the fetch of an ask or of Stop; ahead is how many
	// relations of the plan's order it reads before it is asked for them
	// (see Start).
	wake  *sync.Cond
	ahead int
}

type pendingRelation struct {
	ready   chan struct{} // closed once rel is read, or the fetch failed or stopped
	rel     *Relation
	started bool // under Snapshot.mu
	used    bool // under Snapshot.mu: the grounder asked for it
	skipped bool // left unread by Stop
	idx     int  // its place in the plan
	n       need
}

// relation returns the relation named name, waiting while it is being
// read; nil for a relation the snapshot does not hold. An error is the
// fetch's: the relation could not be read.
func (s *Snapshot) relation(name string) (*Relation, error) {
	p, ok := s.pending[name]
	if !ok {
		return nil, nil
	}
	s.mu.Lock()
	if !p.used {
		p.used = true
		s.used = append(s.used, p.idx)
	}
	if !p.started {
		// Not read yet: read it next, ahead of the relations read in
		// advance for later views.
		s.asked = append(s.asked, p)
		s.wake.Signal()
	}
	s.mu.Unlock()
	<-p.ready
	if p.rel == nil {
		if p.skipped {
			return nil, errStopped
		}
		return nil, errFetchFailed
	}
	return p.rel, nil
}

// source returns the relation whose set p's table is read reduced to,
// claimed to be read now, when p may be reduced in memory (versions are
// given) and the set is not read yet; nil otherwise.
func (s *Snapshot) source(p *pendingRelation, versions Versions) *pendingRelation {
	rs := p.n.restrict
	if rs == nil || versions == nil {
		return nil
	}
	if _, ok := versions[p.n.table.Name]; !ok {
		return nil
	}
	src := s.pending[rs.source]
	if src == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if src.started {
		return nil // read already (only the fetch reads)
	}
	src.started = true
	return src
}

// errStopped is what a read of a relation that Stop left unread returns.
var errStopped = errors.New("the relation was not read: the snapshot was stopped")

// Stop ends the fetch once the relation being read is read: the others
// are left unread (a relation asked for afterwards is an error), and
// Relations holds only those read. A solve stops its snapshot once the
// model is grounded, so that relations no view asked for are not read.
func (s *Snapshot) Stop() {
	s.mu.Lock()
	s.stopped = true
	s.wake.Broadcast()
	s.mu.Unlock()
}

// next returns the relation to read next: the first one asked for and
// not started, else the first not started in plan order from *cursor; nil
// once every relation is started or the snapshot is stopped.
func (s *Snapshot) next(slots []*pendingRelation, cursor *int) *pendingRelation {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.stopped {
			return nil
		}
		for len(s.asked) > 0 {
			p := s.asked[0]
			s.asked = s.asked[1:]
			if !p.started {
				p.started = true
				return p
			}
		}
		for *cursor < len(slots) && slots[*cursor].started {
			*cursor++
		}
		if *cursor < s.ahead {
			p := slots[*cursor]
			p.started = true
			return p
		}
		if *cursor == len(slots) {
			return nil
		}
		s.wake.Wait() // the rest only when asked for, until Stop
	}
}

// rows returns the rows of the relation named name (nil if the snapshot
// does not hold it or it could not be read), waiting while it is read.
func (s *Snapshot) rows(name string) [][]any {
	if r, _ := s.relation(name); r != nil {
		return r.Rows
	}
	return nil
}

// errFetchFailed is what grounding stops with when a relation it waits for
// could not be read; Wait returns the reason.
var errFetchFailed = errors.New("the snapshot could not be read")

// Wait waits until the fetch is complete and returns its error. The
// transaction the fetch reads may be ended once Wait returns.
func (s *Snapshot) Wait() error {
	<-s.done
	return s.err
}

// Needs lists the tables and pushed-down views the compiled part of the
// program reads: tables with decision columns (they are returned solved),
// and every relation a hard, soft or intermediate view or a domain source
// reads. Views pushed down to the database and only read by other such
// views are not fetched: the model's size follows what its views select.
func Needs(p *ir.Program) (tables []*ir.Table, inputs []*ir.View) {
	for _, n := range needs(p) {
		if n.table != nil {
			tables = append(tables, n.table)
		} else {
			inputs = append(inputs, n.view)
		}
	}
	return tables, inputs
}

// need is one relation to read: a table or a pushed-down view.
type need struct {
	table *ir.Table
	view  *ir.View
	// restrict, for a table, reads only its rows with a key in a decision
	// column's domain (semijoin.go).
	restrict *restriction
}

func (n need) name() string {
	if n.table != nil {
		return n.table.Name
	}
	return n.view.Name
}

// needs lists what Needs lists, in the order the grounder first reads
// them: the tables with decision columns and their domains' sources,
// then the relations of each view in the program's order.
func needs(p *ir.Program) []need {
	var out []need
	rs := restrictions(p)
	seenT := map[*ir.Table]bool{}
	seenV := map[*ir.View]bool{}
	var visit func(q *ir.Query)
	visit = func(q *ir.Query) {
		if q == nil {
			return
		}
		for _, s := range q.From {
			switch s.Kind {
			case ir.FromTable:
				if !seenT[s.Table] {
					seenT[s.Table] = true
					out = append(out, need{table: s.Table, restrict: rs[s.Table]})
				}
			case ir.FromInput:
				if !seenV[s.View] {
					seenV[s.View] = true
					out = append(out, need{view: s.View})
				}
			case ir.FromQuery:
				visit(s.Query)
			}
		}
		ir.InspectQuery(q, func(e ir.Expr) bool {
			switch e := e.(type) {
			case *ir.In:
				visit(e.Sub)
			case *ir.Exists:
				visit(e.Sub)
			case *ir.Scalar:
				visit(e.Sub)
			}
			return true
		})
	}
	for _, t := range p.Tables {
		if t.HasVariables() && !seenT[t] {
			seenT[t] = true
			out = append(out, need{table: t})
		}
		for _, c := range t.Columns {
			for _, d := range c.Domain {
				visit(d.Query)
			}
		}
	}
	// The constraints in the order Ground takes them, each with the
	// intermediate views it reads (visit follows them), so that the
	// grounder waits for no relation read ahead of time for a later
	// view: with the schema's helper views first, a placement batch's
	// fourth view waited 1.9 ms for node_label and node_free, which its
	// fifth and later views read. Then whatever no constraint reads.
	for _, v := range p.Views {
		if v.Kind == ir.Hard || v.Kind == ir.Soft {
			visit(v.Query)
		}
	}
	for _, v := range p.Views {
		if v.Kind == ir.Intermediate {
			visit(v.Query)
		}
	}
	return out
}

// Querier is what a snapshot is read through: a read transaction.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Plan is what a snapshot of a program reads, and how: worked out once
// per compiled program (the relations in the grounder's order, the tables
// read reduced to a decision domain), not once per solve.
type Plan struct {
	needs []need
	// What the plan's snapshots' grounders asked for (Learn): order is
	// the read order (indexes into needs), its first used entries the
	// relations asked for lately, the last snapshot's first in the order
	// it asked; nil before any. lastAsked holds, per relation, the number
	// of the latest snapshot learnt from that asked for it (0: none).
	mu        sync.Mutex
	order     []int
	used      int
	learnt    int
	lastAsked []int
	// kept holds, per table, its latest read by a snapshot given
	// versions (reuse.go).
	kept map[string]*keptTable
}

// AskedLately is how many snapshots back a relation counts as asked for:
// batches of different pods ask for different relations (node_label for
// a pod with affinity terms), and a relation read only when asked makes
// its grounder wait for the whole read.
const AskedLately = 16

// Fresh returns the plan with nothing learned (Learn), for another model
// of the same program.
func (p *Plan) Fresh() *Plan { return &Plan{needs: p.needs} }

// Learn orders the plan's later snapshots by what snap's grounder asked
// for: those relations first, in the order it asked, then the others
// that one of the last AskedLately snapshots learnt from asked for, then
// the rest (read only when asked for, by a lazy snapshot). A
// placement batch's grounder skips the joins of views whose first
// relation is empty, so the others are read last, and not at all by a
// snapshot stopped once the model is grounded (node_label, 1.1 ms of
// a one-pod batch's 5 ms of reads, was read ahead of relations the
// grounder then waited for). The order stays a guess: a relation asked
// for out of it is read next.
func (p *Plan) Learn(snap *Snapshot) {
	snap.mu.Lock()
	asked := append([]int(nil), snap.used...) // each once
	snap.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.learnt++
	if p.lastAsked == nil {
		p.lastAsked = make([]int, len(p.needs))
	}
	order := make([]int, 0, len(p.needs))
	seen := make([]bool, len(p.needs))
	for _, i := range asked {
		seen[i] = true
		p.lastAsked[i] = p.learnt
		order = append(order, i)
	}
	var rest []int
	for i, at := range p.lastAsked {
		switch {
		case seen[i]:
		case at > 0 && p.learnt-at < AskedLately:
			order = append(order, i)
		default:
			rest = append(rest, i)
		}
	}
	p.order, p.used = append(order, rest...), len(order)
}

// ReadsAhead reports whether a lazy snapshot of the plan reads the
// relation named name before its grounder asks for it (it may still be
// left unread: the fetch stops when the model is grounded).
func (p *Plan) ReadsAhead(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.order == nil {
		return true
	}
	for _, i := range p.order[:p.used] {
		if p.needs[i].name() == name {
			return true
		}
	}
	return false
}

// NewPlan plans the snapshots of p.
func NewPlan(p *ir.Program) *Plan { return &Plan{needs: needs(p)} }

// Start starts reading the relations of plan through q, in the order the
// grounder reads them, and returns the snapshot they fill. q must stay
// usable until Wait returns.
//
// With lazy, a relation the plan's recent snapshots did not ask for
// (Learn) is read only when the grounder asks for it, and the snapshot
// must be stopped (Stop) before Wait: the fetch waits for asks until
// then. Otherwise every relation is read, those asked for ahead of the
// plan's order.
//
// With versions, a table whose version is the one an earlier snapshot of
// the plan read it at is taken from that snapshot (reuse.go).
func Start(ctx context.Context, q Querier, plan *Plan, lazy bool, versions Versions) *Snapshot {
	ns := plan.needs
	s := &Snapshot{pending: make(map[string]*pendingRelation, len(ns)), done: make(chan struct{}), ahead: len(ns)}
	s.wake = sync.NewCond(&s.mu)
	plan.mu.Lock()
	order, used := plan.order, plan.used
	plan.mu.Unlock()
	if lazy && order != nil {
		s.ahead = used
	}
	slots := make([]*pendingRelation, len(ns))
	for i, n := range ns {
		slots[i] = &pendingRelation{ready: make(chan struct{}), idx: i, n: n}
		s.pending[n.name()] = slots[i]
	}
	if order != nil {
		byOrder := make([]*pendingRelation, len(ns))
		for k, i := range order {
			byOrder[k] = slots[i]
		}
		slots = byOrder
	}
	go func() {
		rels := make(map[string]*Relation, len(ns))
		var took time.Duration // reading, not waiting for asks
		var reused []string
		defer func() {
			s.Took, s.Reused = took, reused
			// What was not read (a failed read, Stop) is closed unread.
			for _, sl := range slots {
				if sl.rel == nil {
					sl.skipped = s.err == nil
					close(sl.ready)
				}
			}
			if s.err == nil {
				s.Relations = rels
			}
			close(s.done)
		}()
		get := func(p *pendingRelation) bool {
			t0 := time.Now()
			r, kept, err := plan.readKept(ctx, q, p.n, versions, rels)
			took += time.Since(t0)
			if err != nil {
				s.err = err
				return false
			}
			if kept {
				reused = append(reused, r.Name)
			}
			rels[r.Name] = r
			p.rel = r
			close(p.ready)
			return true
		}
		cursor := 0
		for p := s.next(slots, &cursor); p != nil; p = s.next(slots, &cursor) {
			// A table that may be reduced in memory (reuse.go) needs its
			// set first.
			if src := s.source(p, versions); src != nil && !get(src) {
				return
			}
			if !get(p) {
				return
			}
		}
	}()
	return s
}

// Queries lists the statements a snapshot of p is read with, in the
// order Start runs them: a caller that reads snapshot after snapshot can
// prepare them once (Querier gets exactly these strings).
func Queries(p *ir.Program) []string {
	ns := needs(p)
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.query()
	}
	return out
}

// query is the statement that reads n: a table in primary-key order, or
// a pushed-down view.
func (n need) query() string {
	if t := n.table; t != nil {
		cols := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			cols[i] = c.Name
		}
		order := ""
		if len(t.PrimaryKey) > 0 {
			var ks []string
			for _, k := range t.PrimaryKey {
				ks = append(ks, quoteIdent(t.Columns[k].Name))
			}
			order = " order by " + strings.Join(ks, ", ")
		}
		where := ""
		if r := n.restrict; r != nil {
			where = " where " + quoteIdent(r.key) + " in (select " + quoteIdent(r.col) + " from " + r.sql + ")"
		}
		return "select " + quoteList(cols) + " from " + t.SQLName() + where + order
	}
	// Views are read by position: the name a database gives an unnamed
	// expression column differs (SQLite: its text; PostgreSQL: the
	// function's name or ?column?).
	return "select * from " + n.view.SQLName()
}

// read reads one table or pushed-down view.
func read(ctx context.Context, q Querier, n need) (*Relation, error) {
	r := &Relation{Name: n.name()}
	if t := n.table; t != nil {
		for _, c := range t.Columns {
			r.Columns = append(r.Columns, c.Name)
			r.Types = append(r.Types, c.Type)
		}
	} else {
		for _, o := range n.view.Query.Select {
			r.Columns = append(r.Columns, o.Name)
			r.Types = append(r.Types, o.Expr.Type())
		}
	}
	if err := r.load(ctx, q, n.query()); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Relation) load(ctx context.Context, q Querier, query string) error {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return fmt.Errorf("reading %s: %w", r.Name, err)
	}
	defer rows.Close()
	n := len(r.Columns)
	cts, err := rows.ColumnTypes()
	if err != nil {
		return fmt.Errorf("reading %s: %w", r.Name, err)
	}
	if len(cts) != n {
		return fmt.Errorf("reading %s: the database returns %d columns, the schema declares %d", r.Name, len(cts), n)
	}
	// PostgreSQL pads char(n) values with blanks and ignores them in
	// comparisons; SQLite stores them as written. Both compare equal
	// without the padding, so it is dropped.
	var padded []bool
	for i, ct := range cts {
		if strings.EqualFold(ct.DatabaseTypeName(), "BPCHAR") {
			if padded == nil {
				padded = make([]bool, n)
			}
			padded[i] = true
		}
	}
	ptrs := make([]any, n)
	for rows.Next() {
		raw := make([]any, n)
		for i := range raw {
			ptrs[i] = &raw[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("reading %s: %w", r.Name, err)
		}
		for i, v := range raw {
			if padded != nil && padded[i] {
				switch x := v.(type) {
				case string:
					v = strings.TrimRight(x, " ")
				case []byte:
					v = strings.TrimRight(string(x), " ")
				}
			}
			nv, err := normalize(v, r.Types[i])
			if err != nil {
				return fmt.Errorf("reading %s.%s: %w", r.Name, r.Columns[i], err)
			}
			raw[i] = nv
		}
		r.Rows = append(r.Rows, raw)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", r.Name, err)
	}
	return nil
}

// normalize converts a driver value to the Go type of the column's type.
func normalize(v any, t ir.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t {
	case ir.Int:
		switch x := v.(type) {
		case int64:
			return v, nil // as boxed already: boxing x again allocates
		case int32:
			return int64(x), nil
		case int:
			return int64(x), nil
		case bool:
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		case string:
			// PostgreSQL's numeric (sum over bigint) arrives as text.
			return numericInt(x)
		case []byte:
			return numericInt(string(x))
		}
	case ir.Bool:
		switch x := v.(type) {
		case bool:
			return v, nil
		case int64:
			return x != 0, nil
		}
	case ir.String:
		switch x := v.(type) {
		case string:
			return v, nil
		case []byte:
			return string(x), nil
		}
	}
	return nil, fmt.Errorf("value %v (%T) does not fit type %s", v, v, t)
}

// numericInt converts the text of an integral numeric value ("42",
// "-7", "3.000") to int64. A fraction is an error: PostgreSQL divides
// numeric values (sum over a bigint column) exactly where SQLite divides
// integers.
func numericInt(s string) (any, error) {
	t := s
	if i := strings.IndexByte(t, '.'); i >= 0 {
		if strings.Trim(t[i+1:], "0") != "" {
			return nil, fmt.Errorf("value %s is not an integer (PostgreSQL computed a decimal: sum over a bigint column is numeric there, and numeric division is exact; declare the column integer)", s)
		}
		t = t[:i]
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("value %q is not an integer", s)
	}
	return n, nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func quoteList(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = quoteIdent(c)
	}
	return strings.Join(q, ", ")
}
