// Package scheduler is the brain of a Kubernetes scheduler whose whole
// policy is SQL (the Weave paper, §3 and §6.1): the cluster state lives in
// an embedded SQLite database (or a caller's PostgreSQL schema or SQLite
// file, Config.DB), every policy is a view in sql/policies, and
// two Weave models decide: the placement model places a batch of pending
// pods; the preemption model may also evict lower-priority bound pods,
// across nodes. It uses only Weave's public API.
package scheduler

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weavesql/weave"
	_ "modernc.org/sqlite" // the embedded state database
)

// Config tunes a Scheduler. The zero value is usable.
type Config struct {
	// Name is the scheduler name pods must carry ("" accepts "" and
	// "default-scheduler").
	Name string
	// BatchSize is the most pods per batch (b); 0 means 100. 1 behaves
	// like kube-scheduler's one pod at a time.
	BatchSize int
	// BatchIdle is how long ScheduleBatch may wait for more pods before
	// solving a batch smaller than BatchSize. 0 or negative (the default)
	// does not wait: the batch is whatever is pending when ScheduleBatch is
	// called (up to BatchSize), so under a trickle a batch is one pod and
	// under a burst the pods that arrive while a batch is solved form the
	// next one, as group commit does. A positive value waits until
	// BatchSize pods are pending, or BatchIdle passes with no new pending
	// pod, or BatchIdle passes since the wait began with a pod pending,
	// whichever comes first: a pod waits at most BatchIdle for company.
	BatchIdle time.Duration
	// BurstLinger applies when BatchIdle does not wait: while pods arrive
	// in a burst (the last 8 less than 8 ms apart on average), a batch
	// smaller than BatchSize waits for more, until BatchSize pods are
	// pending, or 30 ms pass with no new pod, or BurstLinger passes. A
	// burst is where deciding pods together places more of them than
	// deciding them one by one; under a trickle a pod never waits. 0 means
	// 200ms; negative turns the linger off.
	BurstLinger time.Duration
	// Timeout bounds each solve; 0 means 2s. On expiry the best placement
	// found is used. A batch with no placement found in time is solved
	// again in halves, each with its share of Timeout, within 4 × Timeout
	// in all; pods left over are unschedulable for now and retried with
	// the next batch.
	Timeout time.Duration
	// ImprovementTimeout ends a solve once the placement has not improved
	// for that long (Weave's SolveOptions.ImprovementTimeout), so a batch
	// takes milliseconds rather than Timeout: load-balancing objectives
	// are rarely proven optimal. 0 means 5ms; negative waits for Timeout.
	// A placement batch may end sooner, by GapLimit. The measurements
	// behind each wait's default are in docs/scheduler-performance.md.
	ImprovementTimeout time.Duration
	// UnplacedImprovementTimeout is ImprovementTimeout while the
	// placement found leaves a pod without a node and the solver has not
	// proven that no placement places more (Weave's
	// SolveOptions.WideGapImprovementTimeout, with a gap of half a pod's
	// reward: wideGapPlacement): a batch that places every pod it can still ends after
	// ImprovementTimeout, one that may be a tight packing away from
	// placing another pod searches longer. 0 means 100ms; negative
	// turns it off.
	UnplacedImprovementTimeout time.Duration
	// GapLimit ends a placement batch, without waiting out
	// ImprovementTimeout, once the solver proves its placement within
	// that many objective units of the best one (Weave's
	// SolveOptions.AbsoluteGapLimit). Any limit below a pod's reward
	// means no placement places more pods; the default, 50, also means
	// the load-balancing policies' least spare capacities (S2–S5, in
	// units of 100 millicores and 100 MiB) are within 50 such units of
	// their best in total. 0 means 50; negative turns it off. Preemption
	// plans do not use it: their evictions are worth minimising to the end.
	GapLimit int64
	// PreemptionImprovementTimeout is ImprovementTimeout for preemption
	// plans, longer because a plan's first solution rarely places its pods
	// (each needs several evictions at once); 0 means 50ms, negative waits
	// for Timeout.
	PreemptionImprovementTimeout time.Duration
	// PreemptionUnplacedImprovementTimeout is PreemptionImprovementTimeout
	// while the plan leaves a preemptor without a node and the solver has
	// not proven that no plan places more (cp's WideGapImprovementTimeout,
	// with a gap of the preemptors' reward, which outweighs every eviction):
	// a plan whose first solution places every preemptor (kube-scheduler's
	// choice, the hint) ends as before; one that must evict on other nodes
	// (anti-affinity across a zone) searches on. 0 means 500ms; negative
	// turns it off.
	PreemptionUnplacedImprovementTimeout time.Duration
	// Evictable, if set, says whether a bound pod may be a preemption
	// victim, and if not why (the Reason of a preemptor left without a
	// node names such pods): weave-scheduler leaves out the pods whose
	// eviction a PodDisruptionBudget forbids now, so that a plan evicts
	// others. nil: every bound pod of lower priority may be.
	Evictable func(p *Pod) (ok bool, why string)
	// DisruptionBudget, if set, names the PodDisruptionBudget that limits
	// a bound pod's eviction and the disruptions it allows now ("" if
	// none): a preemption plan evicts at most allowed of one budget's pods
	// (P3), as the Eviction API refuses the eviction past it.
	// weave-scheduler reads the one budget that selects a Running pod and
	// its status.disruptionsAllowed. nil: no budget limits a plan.
	DisruptionBudget func(p *Pod) (budget string, allowed int64)
	// DropRejected: when the independent check (State.Check) rejects a
	// placement batch's solution, the pods its faults name are left
	// unplaced (Unschedulable, Reason ReasonCheckRejected and the fault;
	// they return with a later batch) and the rest is checked again,
	// until it passes, instead of the whole batch failing with ErrCheck.
	// Whatever is applied has passed the check. Off by default: a
	// rejection is a disagreement between the model and the check, which
	// ErrCheck keeps visible (tests, the e2e differential test).
	DropRejected bool
	// Verify makes Weave re-check every solution inside the database
	// (tests); the scheduler's own check (Check) always runs.
	Verify bool
	// Seed and Workers are passed to the solver.
	Seed    int64
	Workers int
	// DB is the state database; nil means a fresh in-memory SQLite
	// database of the scheduler's own. Otherwise it is a *sql.DB opened
	// with pgx's database/sql driver (PostgreSQL) or with modernc.org/sqlite
	// (a SQLite file), and New makes its state clean: it drops the
	// scheduler's tables and views left by an earlier run and creates them
	// again (the caller then loads the cluster, as after a start in
	// memory). It refuses a database holding such tables it did not create
	// (ErrForeignState).
	//
	// On PostgreSQL the tables live in the current schema (the first
	// existing schema of the search_path; set search_path in the DSN so
	// every connection of the pool agrees). New takes an advisory lock on
	// that schema, held on one connection of DB until Close: a second
	// scheduler on the same schema fails with ErrStateInUse, and writes
	// fail with ErrStateLost once the lock's connection is gone. SQLite
	// files are not locked: give each scheduler its own. Close does not
	// close DB.
	DB *sql.DB
	// DisabledPolicies lists policy IDs (Policies, PolicyIDs) left out of
	// both models, as a kube-scheduler profile disables plugins: a soft
	// policy no longer scores, a hard one no longer restricts (nor does the
	// independent check for it). Unknown IDs and RequiredPolicies are an
	// error of New.
	DisabledPolicies []string
	// Backend solves the grounded models; nil means Weave's native engine
	// (weave.SolveOptions.Backend), e.g. backend/minizinc to compare.
	Backend weave.Backend
	// NodeSample is the most nodes a placement batch considers: on a
	// larger cluster each batch takes the nodes of the next arc of a ring
	// of node-name hashes (sample.go), as kube-scheduler scores a share of
	// the nodes (percentageOfNodesToScore). The pods the sample cannot
	// take are solved again over every node before they are called
	// unschedulable. 0 takes kube-scheduler's adaptive share
	// (DefaultNodeSample: every node up to 100, 230 of 500, 500 of
	// 5,000), but at most 100 nodes per pod of the batch; negative
	// considers every node. Preemption plans consider
	// every node.
	NodeSample int
	// GangReserveAfter is the fairness bound for PodGroups (fairness.go):
	// a PodGroup ready to schedule for longer than this without being
	// admitted reserves the cluster, and no pod or group of its priority
	// or lower that arrived after it is tried until it is admitted. 0 (the
	// default) turns the rule off.
	GangReserveAfter time.Duration
	// Speculate decides ahead, while no pod is pending, the batch of the
	// pods expected next (like the last to arrive, or like the pod that
	// followed such a pod last time, and so on; 1 to 16 of them, more
	// while they all arrive), and places such pods from it when they
	// arrive on a state that changed only by their arrival and bindings
	// (speculate.go): a Deployment's replicas wait for a check instead of
	// a solve, at a trickle or 100 a second. Off by default: an idle
	// scheduler then solves once more per arrival or few.
	Speculate bool
}

// Scheduler holds the cluster state (in memory and in the state database) and the two
// compiled models. Its methods are safe for concurrent use.
type Scheduler struct {
	cfg        Config
	off        map[string]bool // the disabled policies
	db         *sql.DB
	placement  *weave.Model
	preemption *weave.Model

	// The state database (db.go).
	ownDB       bool      // the in-memory database, closed by Close
	lock        *sql.Conn // PostgreSQL: the connection holding the state lock
	schema      string    // PostgreSQL: the locked schema
	lost        error     // ErrStateLost once the lock's connection is gone; errClosed after Close
	writes      int       // PostgreSQL: writes, and when to analyze the tables next
	nextAnalyze int

	mu          sync.Mutex
	state       *State
	matches     *matchIndex // the rows of pod_match (selector.go)
	seq         int64
	lastPending time.Time
	arrivals    arrivals // new pending pods, for the burst linger
	wake        chan struct{}
	// LastStats holds the statistics of the latest solve.
	lastStats weave.Stats
	// prepared holds the parameterised writes prepared on db (SQLite).
	prepared map[string]*sql.Stmt
	// arc is the part of the ring of nodes the placement model may use
	// (sample.go); sampleAt is where the next batch's arc starts.
	arc      arc
	sampleAt int64
	// planArc is the nodes the preemption model may use (victimArc).
	planArc arc
	// rejected maps the pods of the batch that the check left unplaced
	// (Config.DropRejected) to the fault it found.
	rejected map[string]string
	// waiting holds the PodGroups ready to schedule and not yet admitted
	// (fairness.go).
	waiting map[string]*groupWait

	// Speculation (speculate.go). version counts the writes to the state
	// database (exec); template is the pod expected next, which a
	// speculation copies (successor maps a replica group to the pod that
	// followed one of its pods, lastArrival is the group of the last
	// pending pod that arrived; templateSeen tells a template that
	// followed such a pod before from the guess "like the last"); spec
	// is the speculation at hand,
	// specTried the version last speculated on, specWidth the pods the
	// next decides (specLimit bounds it in tests); expectWrite marks a
	// write the speculation expects (exec).
	version      uint64
	template     *Pod
	templateSeen bool
	successor    map[string]*Pod
	lastArrival  string
	spec         *speculation
	specTried    uint64
	specWidth    int
	specLimit    int
	expectWrite  bool
	specCount    SpeculationStats
	// whileExtending runs while an extension solves, beforeAheadReady
	// before its window places pods (tests: arrivals meanwhile);
	// extendOff turns extensions off (tests of plain speculations).
	whileExtending   func()
	beforeAheadReady func()
	extendOff        bool
	// Folding (fold.go): solving is set while SchedulePending solves a
	// batch; queuedBehind records a pending pod arriving meanwhile.
	solving      atomic.Bool
	queuedBehind bool
	// speculating is set while a solve decides pods expected, not
	// arrived (speculate, extend, placeFolded); folding while a batch is
	// solved with them (placeFolded).
	speculating, folding bool
	// Table versions (versions.go): written holds the write count of
	// each table's latest write, writtenAll that of the latest statement
	// whose table was not recognised; tables lists the state tables.
	// rereadTables makes every solve read every table (tests).
	written      map[string]uint64
	writtenAll   uint64
	tables       []string
	rereadTables bool
	// specMu guards the speculation under way, which UpsertPod interrupts
	// without waiting for s.mu, and the pods it places ahead meanwhile
	// (ahead.go).
	specMu     sync.Mutex
	specLikes  []Pod
	specCancel context.CancelFunc
	ahead      *aheadWindow
	// recentlyPlaced holds the pods this scheduler placed last (up to
	// maxRecentlyPlaced, oldest first in recentOrder): their binding
	// reported leaves the window of placement ahead open.
	recentlyPlaced map[string]bool
	recentOrder    []string
}

// waitOrDefault applies the convention of Config's waits: 0 means def,
// negative means none (0 for the solver).
func waitOrDefault(d *time.Duration, def time.Duration) {
	switch {
	case *d == 0:
		*d = def
	case *d < 0:
		*d = 0
	}
}

// New compiles both models, creates the schema in the state database
// (Config.DB, or a fresh in-memory SQLite database) and connects the
// models to it.
func New(cfg Config) (*Scheduler, error) {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 100
	}
	if cfg.BatchIdle < 0 {
		cfg.BatchIdle = 0
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Second
	}
	switch {
	case cfg.GapLimit == 0:
		cfg.GapLimit = 50
	case cfg.GapLimit < 0:
		cfg.GapLimit = 0
	}
	waitOrDefault(&cfg.BurstLinger, DefaultBurstLinger)
	waitOrDefault(&cfg.ImprovementTimeout, 5*time.Millisecond)
	waitOrDefault(&cfg.UnplacedImprovementTimeout, 100*time.Millisecond)
	waitOrDefault(&cfg.PreemptionImprovementTimeout, 50*time.Millisecond)
	waitOrDefault(&cfg.PreemptionUnplacedImprovementTimeout, 500*time.Millisecond)
	off, err := disabledSet(cfg.DisabledPolicies)
	if err != nil {
		return nil, err
	}
	plSQL, _ := ModelSQL(Placement, cfg.DisabledPolicies)
	prSQL, _ := ModelSQL(Preemption, cfg.DisabledPolicies)
	pl, err := compileModel(plSQL)
	if err != nil {
		return nil, fmt.Errorf("scheduler: placement model: %w", err)
	}
	pr, err := compileModel(prSQL)
	if err != nil {
		return nil, fmt.Errorf("scheduler: preemption model: %w", err)
	}
	s := &Scheduler{cfg: cfg, off: off, placement: pl, preemption: pr, state: NewState(), matches: newMatchIndex(), wake: make(chan struct{}, 1), arc: wholeRing, planArc: wholeRing}
	err = s.open(context.Background())
	if err == nil {
		// Placement first: its error is the one a mismatch reports.
		err = weave.ConnectAll(s.db, pl, pr)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the state database: it closes the in-memory database,
// or releases the lock on a caller's database (Config.DB, left open).
func (s *Scheduler) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unlockState()
	s.closePrepared()
	s.lost = errClosed // no write after Close: the schema may be someone else's
	if s.ownDB && s.db != nil {
		return s.db.Close()
	}
	return nil
}

// DB returns the state database (read it, do not write it).
func (s *Scheduler) DB() *sql.DB { return s.db }

// State returns a copy of the scheduler's in-memory state.
func (s *Scheduler) State() *State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Clone()
}

// PolicyState returns a copy of the state as the enabled hard policies see
// it: without the inputs of the disabled ones (Config.DisabledPolicies), so
// that its Check and FeasibleNodes check only the enabled policies. With no
// policy disabled it is State().
func (s *Scheduler) PolicyState() *State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return relax(s.state.Clone(), s.off)
}

// WithPolicyState calls f with the state as PolicyState returns it, under
// the scheduler's lock, and without copying it when no policy is disabled:
// a check of each batch's placements on a large cluster does not pay for
// a copy of every pod. f must only read the
// state, must not keep it, and must not call the Scheduler.
func (s *Scheduler) WithPolicyState(f func(*State)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state
	if len(s.off) > 0 {
		st = relax(s.state.Clone(), s.off)
	}
	f(st)
}

// WithPolicyStateWithout is WithPolicyState with the named pods left out
// of the state f reads, and put back after it: weave-scheduler re-checks a
// preemptor whose victims are gone without the preemptors still waiting
// for theirs (each assumed on its node beside its victims counts the room
// twice), in place. A copy of the state per preemptor took seconds of a
// 500-preemptor plan at 5,000 nodes.
func (s *Scheduler) WithPolicyStateWithout(leave []string, f func(*State)) {
	s.WithPolicyState(func(st *State) {
		ov := newPodOverlay(st)
		defer ov.restore()
		for _, name := range leave {
			if st.Pods[name] != nil {
				ov.remove(name)
			}
		}
		f(st)
	})
}

// LastStats returns Weave's statistics for the latest solve.
func (s *Scheduler) LastStats() weave.Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastStats
}

func (s *Scheduler) ours(p *Pod) bool {
	if s.cfg.Name == "" {
		return p.SchedulerName == "" || p.SchedulerName == "default-scheduler"
	}
	return p.SchedulerName == s.cfg.Name
}

// UpsertNode adds or replaces a node.
func (s *Scheduler) UpsertNode(ctx context.Context, n Node) error {
	s.interrupt() // speculate.go
	s.mu.Lock()
	defer s.mu.Unlock()
	n = normalizeNode(n)
	if err := s.exec(ctx, writeNode(n)); err != nil {
		return err
	}
	s.state.Nodes[n.Name] = &n
	return nil
}

// DeleteNode removes a node (its pods stay until they are deleted).
func (s *Scheduler) DeleteNode(ctx context.Context, name string) error {
	s.interrupt() // speculate.go
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.exec(ctx, deleteNode(name)); err != nil {
		return err
	}
	delete(s.state.Nodes, name)
	return nil
}

// UpsertVolume adds or replaces a volume; zone "" means not zonal.
func (s *Scheduler) UpsertVolume(ctx context.Context, name, zone string) error {
	s.interrupt() // speculate.go
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.exec(ctx, writeVolume(name, zone)); err != nil {
		return err
	}
	s.state.Volumes[name] = zone
	return nil
}

// UpsertPod adds or replaces a pod.
func (s *Scheduler) UpsertPod(ctx context.Context, p Pod) error {
	if s.deferAhead(&p) { // ahead.go
		return nil
	}
	s.interruptSpeculation(&p) // speculate.go
	at := time.Now()           // its arrival, for the burst linger: not when s.mu is free
	behind := s.solving.Load() // it waits for a batch's solve (fold.go)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.upsertPodLocked(ctx, p, at); err != nil {
		return err
	}
	if q := s.state.Pods[p.Name]; behind && q != nil && q.NodeName == "" && q.Phase == PhasePending && s.ours(q) {
		s.queuedBehind = true
	}
	return nil
}

// upsertPodLocked is UpsertPod of p, which arrived at at (s.mu held).
func (s *Scheduler) upsertPodLocked(ctx context.Context, p Pod, at time.Time) error {
	was := s.state.Pods[p.Name]
	if was != nil {
		p.created = was.created
	} else {
		s.seq++
		p.created = s.seq
	}
	p = normalizePod(p)
	// A pod reported as the state already holds it writes nothing: a
	// running pod's status updates (conditions, IPs, restarts: fields the
	// Pod type does not keep), or the binding of a pod this scheduler
	// assumed bound (unless the API server added the node's topology
	// labels to it, as v1.37 does). A rewrite is a statement per table the
	// pod has rows in and its node's usage. The state and the database
	// change together everywhere, so equal state means equal rows.
	if was == nil || !reflect.DeepEqual(*was, p) {
		// The arrival of a pod a speculation expects, or a binding
		// reported, leaves the speculation standing (speculate.go).
		arrival := -1
		if was == nil {
			arrival = s.arrival(&p)
		}
		matches, commit := s.matches.upsert(s.state, &p)
		st := append(writePod(&p), matches...)
		if was != nil {
			st = append(st, usageRefresh(was.NodeName, p.NodeName)...)
		} else {
			st = append(st, usageRefresh(p.NodeName)...)
		}
		s.expectWrite = arrival >= 0 || (was == nil && s.stranger(&p)) || bindingReported(was, &p)
		err := s.exec(ctx, st)
		s.expectWrite = false
		if err != nil {
			return err
		}
		commit()
		s.state.Pods[p.Name] = &p
		if arrival >= 0 {
			s.spec.matched[arrival] = p.Name
			s.spec.arrived++
		}
	}
	if p.NodeName == "" && p.Phase == PhasePending && s.ours(&p) {
		s.lastPending = at
		if was == nil || was.NodeName != "" || was.Phase != PhasePending {
			s.arrivals.add(s.lastPending)
			s.noteArrival(&p)
		}
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// DeletePod removes a pod.
func (s *Scheduler) DeletePod(ctx context.Context, name string) error {
	s.interrupt() // speculate.go
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deletePodLocked(ctx, name)
}

func (s *Scheduler) deletePodLocked(ctx context.Context, name string) error {
	matches, commit := s.matches.delete(name)
	st := append(deletePod(name), matches...)
	if p := s.state.Pods[name]; p != nil {
		st = append(st, usageRefresh(p.NodeName)...)
	}
	if err := s.exec(ctx, st); err != nil {
		return err
	}
	commit()
	delete(s.state.Pods, name)
	return nil
}

// SetPhase changes the phase of a pod (the kubelet's report).
func (s *Scheduler) SetPhase(ctx context.Context, name, phase string) error {
	s.interrupt() // speculate.go
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.state.Pods[name]
	if p == nil {
		return fmt.Errorf("scheduler: no pod %s", name)
	}
	if err := s.exec(ctx, append([]stmt{setPodPhase(name, phase)}, usageRefresh(p.NodeName)...)); err != nil {
		return err
	}
	p.Phase = phase
	return nil
}

// Pending lists the pods waiting for this scheduler in queue order:
// priority first, then arrival.
func (s *Scheduler) Pending() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, p := range s.queue() {
		out = append(out, p.Name)
	}
	return out
}

func (s *Scheduler) queue() []*Pod {
	var q []*Pod
	for _, p := range s.state.Pods {
		if p.NodeName == "" && p.Phase == PhasePending && s.ours(p) {
			q = append(q, p)
		}
	}
	sort.Slice(q, func(i, j int) bool {
		if q[i].Priority != q[j].Priority {
			return q[i].Priority > q[j].Priority
		}
		return q[i].created < q[j].created
	})
	return s.fairQueue(s.state.groupReady(q)) // fairness.go
}

// noPendingPoll is how long waitBatch sleeps with nothing pending before it
// looks again without being woken (UpsertPod wakes it; the poll covers a pod
// made pending by any other path).
const noPendingPoll = time.Second

// WaitBatch returns once a batch is ready, as ScheduleBatch would start it
// (Config.BatchIdle), or with ctx's error. ScheduleBatch is WaitBatch then
// SchedulePending; a caller that times its batches calls the two itself.
func (s *Scheduler) WaitBatch(ctx context.Context) error { return s.waitBatch(ctx) }

// waitBatch blocks until a pod is pending, then, when Config.BatchIdle is
// positive, until BatchSize pods are pending, or BatchIdle passes with no
// new pending pod, or BatchIdle passes since it began waiting with a pod
// pending (Config.BatchIdle). When BatchIdle does not wait, pods arriving
// in a burst are waited for as Config.BurstLinger says.
func (s *Scheduler) waitBatch(ctx context.Context) error {
	var since time.Time // when the wait began with a pod pending
	for {
		s.mu.Lock()
		n := len(s.queue()) // the queue's rules (a gang counts once minCount pods exist), not every pending pod
		now := time.Now()
		idle := now.Sub(s.lastPending)
		arr := s.arrivals
		spec := s.speculationDue() // speculate.go
		decided := s.decidedPending()
		s.mu.Unlock()
		var wait time.Duration
		switch {
		case n == 0 && spec:
			if err := s.speculate(ctx); err != nil {
				return err
			}
			continue
		case n == 0:
			wait = noPendingPoll
		case n >= s.cfg.BatchSize:
			return nil
		case decided && s.cfg.BatchIdle <= 0:
			// A pending pod the standing speculation decided: its node is
			// known, and waiting for more pods only delays it (live at 100
			// pods/s, the linger took pods arriving in a clump for a burst
			// and held them up to 30 ms).
			return nil
		case s.cfg.BatchIdle <= 0:
			// The burst linger: the pods of a burst are decided together.
			if since.IsZero() {
				since = now
			}
			if wait = s.cfg.linger(&arr, now, since); wait <= 0 {
				return nil
			}
		default:
			if since.IsZero() {
				since = time.Now()
			}
			wait = min(s.cfg.BatchIdle-idle, s.cfg.BatchIdle-time.Since(since))
			if wait <= 0 {
				return nil
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-s.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// ScheduleBatch waits for a batch (at least one pending pod; see
// Config.BatchIdle for a wait for more), places it with the placement model, checks the
// placement and records the bindings (the pods are assumed bound). Pods
// the model leaves without a node are returned as Unschedulable.
func (s *Scheduler) ScheduleBatch(ctx context.Context) ([]Binding, []Unschedulable, error) {
	if err := s.waitBatch(ctx); err != nil {
		return nil, nil, err
	}
	return s.SchedulePending(ctx)
}

// SchedulePending is ScheduleBatch without the wait: it places the pods
// pending now (up to BatchSize, in queue order), and returns nothing when
// none is.
func (s *Scheduler) SchedulePending(ctx context.Context) ([]Binding, []Unschedulable, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := takeBatch(s.queue(), s.cfg.BatchSize)
	if len(q) == 0 {
		return nil, nil, nil
	}
	if bs, us, ok, err := s.useSpeculation(ctx, q); ok { // speculate.go
		return bs, us, err
	}
	fold := s.foldDue(q) // fold.go
	s.queuedBehind = false
	s.solving.Store(true)
	defer s.solving.Store(false)
	if fold {
		return s.placeFolded(ctx, q)
	}
	return s.placeAlone(ctx, q)
}

// place decides the nodes of the batch q: over the batch's sample of the
// nodes, then the pods the sample could not take over every node (s.mu
// held; s.rejected collects the pods the check left out).
func (s *Scheduler) place(ctx context.Context, q []*Pod) (map[string]string, error) {
	s.arc = s.nextArc(q)
	defer func() { s.arc = wholeRing }()
	deadline := time.Now().Add(splitBudget * s.cfg.Timeout)
	placed, err := s.placeSplit(ctx, q, s.cfg.Timeout, deadline)
	if err != nil {
		return nil, err
	}
	if !s.arc.whole() {
		// The pods the sample could not take are solved again over
		// every node, those it placed assumed bound; not those no node
		// has room for (a full cluster, the case of preemption: every
		// pod of a PreemptionBasic batch at 5,000 nodes was solved
		// again over every node, 0.7 s a batch, to no effect).
		// Nor, in a batch folded with the pods expected after it
		// (fold.go), those: one the sample cannot take is solved when it
		// arrives, and solving it over every node here held up the
		// batch's own pods (live, nginx+redis at 100 pods/s: a folded
		// batch with pods whose affinity no pod met yet took 150 ms).
		// Nor those that fit no node with the batch's pods placed
		// (fitNowhere, room.go): the solve over every node would give
		// the same answer.
		var rest []*Pod
		roomless := s.state.roomless(q, placed)
		for _, p := range q {
			if placed[p.Name] == "" && !roomless[p.Name] && !(s.folding && strings.HasPrefix(p.Name, specPrefix)) {
				rest = append(rest, p)
			}
		}
		if nowhere := s.fitNowhere(q, rest, placed); len(nowhere) > 0 {
			rest = slices.DeleteFunc(rest, func(p *Pod) bool { return nowhere[p.Name] })
		}
		if len(rest) > 0 {
			s.arc = wholeRing
			more, err := s.assuming(ctx, q, placed, func() (map[string]string, error) {
				return s.placeSplit(ctx, rest, s.cfg.Timeout, deadline)
			})
			if err != nil {
				return nil, err
			}
			for name, node := range more {
				if node != "" {
					placed[name] = node
				}
			}
		}
	}
	return placed, nil
}

// wideGapPlacement is the gap above which a placement batch waits
// UnplacedImprovementTimeout: half a pod's reward. Placing one more pod
// gains its reward less what it costs the other soft policies (N4's room
// on the roomiest node, N5's whole domains: up to 500 points per key and
// resource, the balancing scores' least spare), so the gap it leaves is
// below a whole reward: with the whole reward less one as the bound, a
// gang the greedy hint stranded was given 5 ms, not 100, to be found
// (TestGangStrandingSim failed on a loaded machine). Those costs stay
// far below half a reward.
const wideGapPlacement = baseWeight / 2

// splitBudget bounds a batch's solves, in Timeouts. A batch no solve
// answers in time is split in halves, each solved with its share of
// Timeout (the pods' share: smaller models solve sooner), so each level
// of halving costs at most one Timeout, and splitBudget levels are tried.
// Before, every solve of the 2n - 1 a batch of n pods could come to had
// the whole Timeout: 100 pods that no node could take any more kept the
// loop 146 s on one batch.
const splitBudget = 4

// minSplitSolve is the least time worth a solve of a split batch.
const minSplitSolve = 10 * time.Millisecond

// placeSplit solves a batch within limit; when the solver finds no
// solution in time it solves the two halves in turn, each within its
// share of limit (the first half is assumed bound while the second is
// solved), down to single pods, until deadline: a pod not solved by then
// is left out of the result (unschedulable for now, retried with the next
// batch).
func (s *Scheduler) placeSplit(ctx context.Context, q []*Pod, limit time.Duration, deadline time.Time) (map[string]string, error) {
	limit = min(limit, time.Until(deadline))
	if limit < minSplitSolve {
		return map[string]string{}, nil
	}
	var hint map[string]string
	if hasGroups(q) {
		// The search starts from the greedy placement, one group at a
		// time, as kube-scheduler places PodGroups (gangHint): finding any
		// placement of several all-or-nothing groups took the solver
		// seconds, and the result is at least as good as the greedy one.
		hint = s.state.gangHint(q, s.arc)
	}
	placed, _, err := s.solve(ctx, s.placement, q, nil, hint, limit)
	h := splitPoint(q) // between groups (a group is never split)
	if !errors.Is(err, ErrNoSolution) || h == 0 {
		if errors.Is(err, ErrNoSolution) {
			return map[string]string{}, nil // one pod or group, no answer in time: unschedulable for now
		}
		return placed, err
	}
	share := func(part []*Pod) time.Duration { return limit * time.Duration(len(part)) / time.Duration(len(q)) }
	first, err := s.placeSplit(ctx, q[:h], share(q[:h]), deadline)
	if err != nil {
		return nil, err
	}
	// The second half sees the first as bound.
	second, err := s.assuming(ctx, q[:h], first, func() (map[string]string, error) {
		return s.placeSplit(ctx, q[h:], share(q[h:]), deadline)
	})
	if err != nil {
		return nil, err
	}
	for k, v := range second {
		first[k] = v
	}
	return first, nil
}

// assuming runs solve with the pods that placed gives a node assumed bound
// there, in the state and in the database, and undoes that afterwards.
func (s *Scheduler) assuming(ctx context.Context, pods []*Pod, placed map[string]string, solve func() (map[string]string, error)) (map[string]string, error) {
	saved := map[string]string{}
	var st, undo []stmt
	var touched []string
	for _, p := range pods {
		if n := placed[p.Name]; n != "" {
			saved[p.Name] = s.state.Pods[p.Name].NodeName
			s.state.Pods[p.Name].NodeName = n
			st = append(st, setPodNode(p.Name, n))
			undo = append(undo, setPodNode(p.Name, ""))
			touched = append(touched, n)
		}
	}
	st = append(st, usageRefresh(touched...)...)
	undo = append(undo, usageRefresh(touched...)...)
	out, err := func() (map[string]string, error) {
		if err := s.exec(ctx, st); err != nil {
			return nil, err
		}
		return solve()
	}()
	for name, n := range saved {
		s.state.Pods[name].NodeName = n
	}
	if uerr := s.exec(context.WithoutCancel(ctx), undo); err == nil { // the state and the database change together
		err = uerr
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Preempt runs the preemption model for the pending pods of the queue (up
// to BatchSize, a PodGroup's pods whole): they may be placed by evicting
// bound pods of lower priority, on any node. It maximises the
// priority-weighted pods placed, then minimises evictions; evicted pods are
// deleted from the state and returned so that their controller can
// recreate them. Pods with preemptionPolicy Never (NeverPreempts), or of a
// PodGroup that has it, are left to the placement model. A PodGroup is
// planned whole (gang_preempt.go).
func (s *Scheduler) Preempt(ctx context.Context) ([]Binding, []Eviction, []Unschedulable, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var q []*Pod
	for _, p := range s.queue() {
		if s.state.mayPreempt(p) { // preemptionPolicy Never: left to the placement model
			q = append(q, p)
		}
	}
	q = takeBatch(q, s.cfg.BatchSize)
	if len(q) == 0 {
		return nil, nil, nil, nil
	}
	top := q[0].Priority
	victims, _ := s.victimsBelow(top, q)
	sort.Slice(victims, func(i, j int) bool { return victims[i].Name < victims[j].Name })
	placed, _, err := s.solve(ctx, s.preemption, q, victims, preemptionHint(s.state, q, victims), s.cfg.Timeout)
	if err != nil {
		return nil, nil, nil, err
	}
	var ev []Eviction
	for _, v := range victims {
		if placed[v.Name] == "" {
			ev = append(ev, Eviction{Pod: v.Name, Node: v.NodeName})
		}
	}
	if err := s.groupPolicies().checkDisruption(ev); err != nil {
		return nil, nil, nil, err
	}
	if err := s.checkBudgets(ev); err != nil {
		return nil, nil, nil, err
	}
	b, u, err := s.apply(ctx, q, placed, ev)
	return b, ev, u, err
}

// PreemptPods runs the preemption model for the named pods (pending,
// unbound, this scheduler's; the others are skipped), as a scheduler that
// evicts through an API does: it returns a plan and assumes nothing
// evicted.
//
//   - A pod with preemptionPolicy Never (NeverPreempts) is not part of the
//     plan: it is returned as Unschedulable, as DefaultPreemption leaves it.
//   - Victims are live bound pods of priority lower than every named pod's:
//     a pod is never evicted for one of equal or higher priority.
//   - A named pod that fits some node as the state is (every victim kept,
//     the other named pods placed as the plan says) is left pending for
//     the placement model, not placed by evicting.
//   - The evictions are minimal: every eviction the plan's placements do
//     not need (the hard policies hold with that pod kept) is dropped; the
//     pods of a PodGroup with disruptionMode all are kept or evicted
//     together (G3).
//   - The named pods of a PodGroup are planned as one (G1, G2): at least
//     MinCount of its pods, with those bound, get nodes in one topology
//     domain, or none does and nothing is evicted for them. A group whose
//     preemptionPolicy is Never, or one of whose pods' is, is not part of
//     the plan (ReasonGroupNeverPreempts).
//
// The pods placed are assumed bound, as by ScheduleBatch; the victims stay
// in the state (the caller deletes each once it is gone: an eviction may be
// refused). Pods that no eviction of lower-priority pods makes room for are
// returned as Unschedulable.
func (s *Scheduler) PreemptPods(ctx context.Context, names []string) ([]Binding, []Eviction, []Unschedulable, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var q []*Pod
	var never []Unschedulable
	for _, p := range s.queue() {
		switch {
		case !want[p.Name]:
		case p.NeverPreempts:
			never = append(never, Unschedulable{Pod: p.Name, Reason: "preemptionPolicy Never: no pod is evicted for it"})
		case !s.state.mayPreempt(p):
			never = append(never, Unschedulable{Pod: p.Name, Reason: ReasonGroupNeverPreempts})
		default:
			q = append(q, p)
		}
	}
	if len(q) == 0 {
		return nil, nil, never, nil
	}
	bs, ev, us, err := s.preemptLocked(ctx, q)
	return bs, ev, append(us, never...), err
}

// preemptLocked is PreemptPods for the pods q that may preempt. s.mu is
// held.
func (s *Scheduler) preemptLocked(ctx context.Context, q []*Pod) ([]Binding, []Eviction, []Unschedulable, error) {
	low := q[0].Priority
	for _, p := range q {
		low = min(low, p.Priority)
	}
	victims, spared := s.victimsBelow(low, q)
	unsched := func(ps []*Pod, reason string) []Unschedulable {
		var us []Unschedulable
		for _, p := range ps {
			us = append(us, Unschedulable{Pod: p.Name, Reason: reason})
		}
		return us
	}
	if len(victims) == 0 {
		return nil, nil, unsched(q, "no running pod of lower priority to evict"+spared), nil
	}
	sort.Slice(victims, func(i, j int) bool { return victims[i].Name < victims[j].Name })
	if s.nodeLocalPlan(q) {
		s.planArc = s.victimArc(q, victims)
		defer func() { s.planArc = wholeRing }()
	}
	placed, _, err := s.solve(ctx, s.preemption, q, victims, preemptionHint(s.state, q, victims), s.cfg.Timeout)
	if err != nil {
		return nil, nil, nil, err
	}
	// Never evict for a pod that fits without: with every victim kept and
	// the other pods of the plan placed, a pod that fits some node stays
	// pending (the placement model places it). The passes below change the
	// state's pods through an overlay, put back before apply.
	kept := s.state
	if len(s.off) > 0 {
		kept = relax(s.state.Clone(), s.off)
	}
	ov := newPodOverlay(kept)
	defer ov.restore()
	for _, p := range q {
		c := *kept.Pods[p.Name]
		c.NodeName = placed[p.Name]
		ov.set(&c)
	}
	fitsAlone := map[string]bool{}
	room := newRoomIndex(kept, kept.usage(nil)) // kept up to date as pods leave and return
	for _, p := range q {
		if placed[p.Name] == "" || p.PodGroup != "" {
			// A PodGroup's member is placed with the others: alone it may
			// fit where the group does not (the minimal-evictions pass
			// drops every eviction the group does not need).
			continue
		}
		kept.Pods[p.Name].NodeName = "" // the overlay's copy
		room.move(p, placed[p.Name], -1)
		if room.fitsSomewhere(kept.Pods[p.Name]) {
			fitsAlone[p.Name] = true
			placed[p.Name] = ""
			continue
		}
		kept.Pods[p.Name].NodeName = placed[p.Name]
		room.move(p, placed[p.Name], 1)
	}
	// Minimal evictions: keep each victim (higher priority first) whose
	// eviction the placements do not need. after is the state with every
	// preemptor on its node of placed (the fits-alone pass leaves it so)
	// and the victims gone.
	after := kept
	var evicted []*Pod
	for _, v := range victims {
		if placed[v.Name] == "" {
			evicted = append(evicted, after.Pods[v.Name]) // as relaxed
			ov.remove(v.Name)
		}
	}
	var batch []*Pod
	for _, p := range q {
		c := *after.Pods[p.Name]
		c.NodeName = placed[p.Name]
		ov.set(&c)
		batch = append(batch, &c)
	}
	var ev []Eviction
	receives := map[string]bool{}
	for _, p := range batch {
		receives[p.NodeName] = true
	}
	// The live bound pods' use per node in after, kept up to date as
	// victims come back or go: summing the node's pods for each victim
	// read every pod of the cluster each time (300 victims at 5,000 nodes
	// running 20,000 pods, 0.26 s a plan). It is the fits-alone pass's use
	// without the evicted victims.
	afterUse := room.used
	moveAfter := func(v *Pod, sign int64) {
		if live(v) {
			u := afterUse[v.NodeName]
			u.add(v, sign)
			afterUse[v.NodeName] = u
		}
	}
	for _, v := range evicted {
		moveAfter(v, -1)
	}
	// A unit is a victim, or the evicted pods of a disruptionMode-all
	// group, kept back or evicted together.
	for _, unit := range s.groupPolicies().evictionUnits(evicted) {
		for _, v := range unit {
			ov.set(v)
			moveAfter(v, 1)
		}
		keep := true
		for _, v := range unit {
			// Kept back on a node that receives a pod and has no room for
			// it, the victim breaks capacity there (Check checks the
			// capacity of those nodes): the eviction stays, without a
			// Check of the batch. Its room: the node's use without it.
			if !receives[v.NodeName] {
				continue
			}
			u, n := afterUse[v.NodeName], after.Nodes[v.NodeName]
			if live(v) {
				u.add(v, -1)
			}
			if n == nil || !u.holds(n, v) {
				keep = false
			}
		}
		if !keep || after.Check(batch) != nil {
			for _, v := range unit {
				ov.remove(v.Name)
				moveAfter(v, -1)
				ev = append(ev, Eviction{Pod: v.Name, Node: v.NodeName})
			}
		}
	}
	if err := after.Check(batch); err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %v", ErrCheck, err)
	}
	ov.restore() // the checks below and apply read the state as it is
	if err := s.groupPolicies().checkDisruption(ev); err != nil {
		return nil, nil, nil, err
	}
	if err := s.checkBudgets(ev); err != nil {
		return nil, nil, nil, err
	}
	sort.Slice(ev, func(i, j int) bool { return ev[i].Pod < ev[j].Pod })
	var rest []*Pod
	for _, p := range q {
		if !fitsAlone[p.Name] {
			rest = append(rest, p)
		}
	}
	bs, us, err := s.apply(ctx, rest, placed, nil)
	for i := range us {
		us[i].Reason = "no node even after evicting pods of lower priority" + spared
	}
	return bs, ev, us, err
}

// solve loads the model's pods, solves and returns the node of each (""
// for none), after the independent check. hint, if not nil, is a first
// guess of each pod's node ("" for none) that the search starts from.
func (s *Scheduler) solve(ctx context.Context, m *weave.Model, pods, victims []*Pod, hint map[string]string, timeout time.Duration) (map[string]string, *weave.Result, error) {
	all := append(append([]*Pod(nil), pods...), victims...)
	a := s.planArc
	if m == s.placement {
		a = s.arc
	}
	load := append(loadModelPods(all, victims, hint), a.write()...)
	if m == s.preemption {
		load = append(load, s.victimBudgets(victims)...)
	}
	if err := s.exec(ctx, load); err != nil {
		return nil, nil, err
	}
	// The longer wait applies while the gap may hide one more pod placed:
	// in a placement batch half a pod's reward (wideGapPlacement); in a
	// plan a preemptor's, which outweighs every victim (an evicted victim
	// loses its own reward).
	improvement, unplaced, gap, wide := s.cfg.ImprovementTimeout, s.cfg.UnplacedImprovementTimeout, s.cfg.GapLimit, int64(wideGapPlacement)
	if s.speculating {
		// Pods expected, not arrived: one left out is solved when it
		// arrives. Waiting for it here held up the pods that did arrive
		// (live, nginx+redis at 100 pods/s: batches folded with pods whose
		// affinity no pod met yet took 100–170 ms).
		unplaced = improvement
	}
	if m == s.preemption {
		// A plan's evictions are worth minimising to the end.
		improvement, unplaced, gap = s.cfg.PreemptionImprovementTimeout, s.cfg.PreemptionUnplacedImprovementTimeout, 0
		low := pods[0].Priority // the plan's lowest preemptor: weights grow with priority
		for _, p := range pods {
			low = min(low, p.Priority)
		}
		wide = placeWeights(all)[low] - 1
	}
	var versions map[string]uint64
	if !s.rereadTables {
		versions = s.tableVersions()
	}
	res, err := m.Solve(ctx, weave.SolveOptions{Timeout: timeout, ImprovementTimeout: improvement,
		WideGapImprovementTimeout: unplaced, WideGap: wide, AbsoluteGapLimit: gap, Verify: s.cfg.Verify, Seed: s.cfg.Seed, Workers: s.cfg.Workers, NoExplain: true, Backend: s.cfg.Backend,
		HintNulls: hint != nil, TableVersions: versions})
	if err != nil {
		return nil, nil, err
	}
	s.lastStats = res.Stats
	if !res.Status.HasSolution() {
		return nil, res, fmt.Errorf("%w: status %s", ErrNoSolution, res.Status)
	}
	placed := map[string]string{}
	for _, row := range res.Table("pending_pod").Rows {
		name, _ := row["pod_name"].(string)
		node, _ := row["node_name"].(string)
		placed[name] = node
	}
	// Independent check: the hard policies, restated in Go, over the
	// state the solution would produce.
	if err := s.checkAfter(pods, victims, placed); err != nil {
		if m != s.placement || !s.cfg.DropRejected {
			return nil, res, fmt.Errorf("%w: %v", ErrCheck, err)
		}
		if err := s.dropRejected(pods, placed, err); err != nil {
			return nil, res, fmt.Errorf("%w: %v", ErrCheck, err)
		}
	}
	return placed, res, nil
}

// dropRejected leaves unplaced the pods that the check's faults name and
// checks the others again, until the check passes (Config.DropRejected).
// Each round unplaces at least one pod, so it ends; it fails when a fault
// names no placed pod.
func (s *Scheduler) dropRejected(pods []*Pod, placed map[string]string, err error) error {
	if s.rejected == nil {
		s.rejected = map[string]string{}
	}
	for err != nil {
		var ce *CheckError
		if !errors.As(err, &ce) {
			return err
		}
		dropped := false
		for _, f := range ce.Faults {
			for _, name := range f.Pods {
				if placed[name] != "" {
					placed[name] = ""
					s.rejected[name] = f.Problem
					dropped = true
				}
			}
		}
		if !dropped {
			return err
		}
		err = s.checkAfter(pods, nil, placed)
	}
	return nil
}

// checkAfter runs State.Check over the state as it would be with the
// batch's pods on their placed nodes and the victims that lost theirs
// gone. With every policy enabled the state is changed in place for the
// check and restored after it (s.mu is held): copying every node and pod
// of the cluster per batch cost more than the check itself. A disabled
// policy needs a relaxed copy.
func (s *Scheduler) checkAfter(pods, victims []*Pod, placed map[string]string) error {
	after := s.state
	if len(s.off) > 0 {
		after = relax(s.state.Clone(), s.off)
	}
	ov := newPodOverlay(after)
	defer ov.restore()
	for _, v := range victims {
		if placed[v.Name] == "" {
			ov.remove(v.Name)
		}
	}
	for _, p := range pods {
		c := *after.Pods[p.Name]
		c.NodeName = placed[p.Name]
		ov.set(&c)
	}
	return after.Check(pods)
}

// ErrNoSolution is returned when the solver finds no solution in time.
var ErrNoSolution = errors.New("scheduler: no solution")

// ErrCheck is returned when a solution fails the scheduler's own check of
// the hard policies: it is never applied.
var ErrCheck = errors.New("scheduler: solution rejected by the independent check")

// ReasonCheckRejected begins the Reason of a pod that the model placed and
// the independent check did not accept (Config.DropRejected); the fault
// follows.
const ReasonCheckRejected = "the independent check rejected its placement"

// apply records evictions and bindings in the state.
func (s *Scheduler) apply(ctx context.Context, pods []*Pod, placed map[string]string, ev []Eviction) ([]Binding, []Unschedulable, error) {
	for _, e := range ev {
		if err := s.deletePodLocked(ctx, e.Pod); err != nil {
			return nil, nil, err
		}
	}
	var bs []Binding
	var us []Unschedulable
	var st []stmt
	var touched []string
	for _, p := range pods {
		n := placed[p.Name]
		if n == "" {
			reason := "no node satisfies the pod's hard constraints together with the batch"
			if f, ok := s.rejected[p.Name]; ok {
				reason = ReasonCheckRejected + ": " + f
			}
			us = append(us, Unschedulable{Pod: p.Name, Reason: reason})
			continue
		}
		bs = append(bs, Binding{Pod: p.Name, Node: n})
		st = append(st, setPodNode(p.Name, n))
		touched = append(touched, s.state.Pods[p.Name].NodeName, n)
	}
	if err := s.exec(ctx, append(st, usageRefresh(touched...)...)); err != nil {
		return nil, nil, err
	}
	var names []string
	for _, b := range bs {
		s.state.Pods[b.Pod].NodeName = b.Node
		if !strings.HasPrefix(b.Pod, specPrefix) {
			names = append(names, b.Pod)
		}
	}
	s.notePlaced(names) // ahead.go
	return bs, us, nil
}

func live(p *Pod) bool { return p.Phase == PhasePending || p.Phase == PhaseRunning }
