package scheduler

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/weavesql/weave"
)

// Placement ahead: a speculation is extended before it runs out. Pods
// arriving at 100 a second come every 10 ms; a speculation of 16 takes
// 15–25 ms live, and while it is solved it holds the state's lock, so
// the one or two pods arriving meanwhile waited for it (the p99 at 100
// pods/s, issue 24). Instead, once half of a standing speculation's pods
// have been placed from it, the loop, idle, extends it: the pods it still
// expects are put on their nodes, each prefix of them checked (checkAfter)
// in the order they are expected, and the next pods expected after them
// are solved on that state. While that solve runs, nothing else writes the
// state (it holds s.mu), so an arriving pod that is the next one the
// speculation expects, in order, is placed at once from it (PlaceAhead):
// its node was checked on exactly the state it joins. Its arrival and
// placement are written to the state when the solve ends, before any
// write that waited.
//
// The window closes — and every later pod waits for the solve, as before —
// at the first pending pod that is not the next expected one, any node or
// pod deletion or node write (interrupt), and any update of a bound pod
// other than one placed here or recently by this scheduler (deferAhead).
// A pod placed ahead is decided on the state as the extension found it; a
// write queued behind the solve is applied after it, as it would be after a
// batch decided on that state (kube-scheduler's scheduling cycle decides on
// its snapshot in the same way).

// aheadName is the name of the i-th pod placed ahead in an extension.
func aheadName(i int) string { return fmt.Sprintf("%sahead%d", specPrefix, i) }

// aheadWindow is the pods an extension under way places on arrival
// (guarded by s.specMu).
type aheadWindow struct {
	likes    []Pod         // the expected pods, in order (replicaOf)
	nodes    []string      // their nodes, every prefix checked
	ready    bool          // likes and nodes are set: pods are placed ahead
	readied  chan struct{} // closed once ready, or given up
	served   []aheadPod    // the pods placed so far, in order
	reported []aheadPod    // bindings reported meanwhile, applied after them (deferAhead)
	closed   bool
}

// aheadPod is a pod placed ahead (on node), or a binding reported, that
// reached the scheduler at at.
type aheadPod struct {
	pod  Pod
	node string
	at   time.Time
}

// maxRecentlyPlaced bounds the pods whose updates leave the window open
// (their binding reported).
const maxRecentlyPlaced = 256

// PlaceAhead places p, a new pending pod, at once when an extension of a
// speculation is being solved and p is the next pod it expects: it
// returns p's node, and p is then the scheduler's, placed there (the
// caller binds it and must not UpsertPod it as pending). Otherwise it
// returns false and the caller upserts p as usual.
func (s *Scheduler) PlaceAhead(p Pod) (string, bool) {
	s.specMu.Lock()
	defer s.specMu.Unlock()
	w := s.ahead
	if w != nil && !w.closed && !w.ready {
		// The extension is writing and checking the pods it expects,
		// a few milliseconds: wait for it rather than for its solve.
		s.specMu.Unlock()
		<-w.readied
		s.specMu.Lock()
	}
	if w == nil || w != s.ahead || w.closed || p.NodeName != "" {
		return "", false
	}
	n := normalizePod(p)
	i := len(w.served)
	if !w.ready || i >= len(w.likes) || !s.ours(&n) || !sameReplica(w.likes[i], &n) || w.has(n.Name) {
		w.closed = true // a pending pod not placed ahead: none is after it
		return "", false
	}
	w.served = append(w.served, aheadPod{pod: n, node: w.nodes[i], at: time.Now()})
	return w.nodes[i], true
}

// has reports whether a pod named name was placed ahead in the window.
func (w *aheadWindow) has(name string) bool {
	return slices.ContainsFunc(w.served, func(a aheadPod) bool { return a.pod.Name == name })
}

// closeAhead closes the window of the extension under way (s.specMu
// held).
func (s *Scheduler) closeAhead() {
	if s.ahead != nil {
		s.ahead.closed = true
	}
}

// deferAhead takes p, a pod about to be upserted, for the end of the
// extension (or speculation: reportWindow) under way when the window is
// open and p is a bound pod placed ahead in it or recently by this
// scheduler: its binding reported, which would wait for the solve, and
// the informer's events behind it (the next pods' arrivals) with it
// (s.specMu not held). Any other bound pod's update closes the window
// (interruptSpeculation).
func (s *Scheduler) deferAhead(p *Pod) bool {
	s.specMu.Lock()
	defer s.specMu.Unlock()
	w := s.ahead
	if w == nil || w.closed || p.NodeName == "" {
		return false
	}
	if !s.recentlyPlaced[p.Name] && !w.has(p.Name) {
		return false
	}
	w.reported = append(w.reported, aheadPod{pod: *p, at: time.Now()})
	return true
}

// notePlaced records pods this scheduler placed, whose binding will be
// reported (s.specMu not held).
func (s *Scheduler) notePlaced(names []string) {
	if !s.cfg.Speculate {
		return
	}
	s.specMu.Lock()
	defer s.specMu.Unlock()
	if s.recentlyPlaced == nil {
		s.recentlyPlaced = map[string]bool{}
	}
	for _, n := range names {
		if !s.recentlyPlaced[n] {
			s.recentlyPlaced[n] = true
			s.recentOrder = append(s.recentOrder, n)
		}
	}
	for len(s.recentOrder) > maxRecentlyPlaced {
		delete(s.recentlyPlaced, s.recentOrder[0])
		s.recentOrder = s.recentOrder[1:]
	}
}

// extensionDue reports whether the standing speculation should be
// extended (s.mu held): standing, with every pod that arrived placed from
// it and at most half of its pods still expected.
func (s *Scheduler) extensionDue() bool {
	sp := s.spec
	if sp == nil || sp.foreign || s.specMaxWidth() < 2 || s.extendOff {
		return false
	}
	left := len(sp.likes) - sp.arrived
	return left > 0 && 2*left <= len(sp.likes) && sp.used == sp.arrived
}

// extend extends the standing speculation (s.mu held; see the top of the
// file): its pods still expected are placed on their nodes, the next
// width pods expected after them are solved on that state, and the
// speculation becomes both, in order. The window is open from its start:
// bindings reported meanwhile wait in it rather than on s.mu (with the
// informer's events behind them); pods are placed ahead once every prefix
// of the pods still expected is checked. What the window took is applied
// at the end, whether the extension succeeded or not.
func (s *Scheduler) extend(ctx context.Context) error {
	sp := s.spec
	var left []int // sp's pods still expected, in order
	for i := range sp.likes {
		if sp.matched[i] == "" {
			if sp.nodes[i] == "" {
				return nil // that pod will be solved: nothing is known after it
			}
			left = append(left, i)
		}
	}
	last := sp.likes[len(sp.likes)-1]
	after := s.successorOf(&last)
	exp := s.chain(after, s.width())
	if len(left) == 0 || len(exp) == 0 {
		return nil
	}
	ext := &extension{}
	for _, i := range left {
		ext.likes = append(ext.likes, sp.likes[i])
		ext.nodes = append(ext.nodes, sp.nodes[i])
	}
	var ok1, ok2 bool
	ext.ahead, ok1 = s.expectedPods(ext.likes, aheadName, s.seq+1)
	ext.pods, ok2 = s.expectedPods(exp, specName, s.seq+1+int64(len(left)))
	if !ok1 || !ok2 {
		return nil
	}
	// Pods expected after these do not interrupt it (speculate).
	var chain []Pod
	for _, p := range s.chain(after, min(2*len(exp)+2, 2*maxSpecWidth)) {
		chain = append(chain, replicaOf(&p))
	}
	sctx, cancel := context.WithCancel(ctx)
	s.specMu.Lock()
	s.specLikes, s.specCancel = append(slices.Clone(ext.likes), chain...), cancel
	s.ahead = &aheadWindow{readied: make(chan struct{})}
	s.specMu.Unlock()

	got, stats, err := s.solveExtension(ctx, sctx, ext)

	s.specMu.Lock()
	served, reported := s.ahead.served, s.ahead.reported
	interrupted := sctx.Err() != nil
	if !s.ahead.ready {
		close(s.ahead.readied) // given up before its solve
	}
	s.specLikes, s.specCancel, s.ahead = nil, nil, nil
	s.specMu.Unlock()
	cancel()
	switch {
	case err != nil:
		// A write failed (the state database): the speculation stands as
		// it was, and the error ends the loop's wait, as speculate's.
	case interrupted:
		s.specCount.Interrupted++
	case got != nil:
		s.specCount.Solved++
		next := &speculation{likes: ext.likes, nodes: ext.nodes, sampleAfter: stats.sampleAfter, stats: stats.stats}
		for _, p := range ext.pods {
			next.likes = append(next.likes, replicaOf(p))
			next.nodes = append(next.nodes, got[p.Name])
		}
		next.matched = make([]string, len(next.likes))
		s.spec = next
		// Every pod it expected so far arrived: the next extension
		// decides twice as many, as the next speculation would.
		s.specWidth = min(2*max(s.specWidth, 1), s.specMaxWidth())
	}
	if aerr := s.applyAhead(ctx, served); aerr != nil {
		return firstErr(err, aerr)
	}
	if uerr := s.applyReported(ctx, reported); uerr != nil {
		return firstErr(err, uerr)
	}
	if err == nil && interrupted {
		return ctx.Err()
	}
	return err
}

// reportWindow is the window a speculation opens (speculate): it places
// no pod ahead — the first pending pod closes it, and waits for the
// solve or interrupts it (interruptSpeculation) — but it takes the
// bindings of the pods recently placed by this scheduler (deferAhead), so
// that the informer's events behind such a report, the next pods'
// arrivals, reach the scheduler during the solve. Live at 100 pods/s, a
// pod of a new Deployment waited behind the reported binding of the pod
// before it for a speculation of 15 pods that did not expect it: 28 ms,
// where its arrival would have interrupted it at once.
func reportWindow() *aheadWindow {
	w := &aheadWindow{readied: make(chan struct{})}
	close(w.readied)
	return w
}

// closeReportWindow closes the window of speculate and applies the
// bindings it took, in order (s.mu held): they are written after the
// speculated pods are undone, before any write that waited on s.mu.
func (s *Scheduler) closeReportWindow(ctx context.Context) error {
	s.specMu.Lock()
	var reported []aheadPod
	if s.ahead != nil {
		reported = s.ahead.reported
	}
	s.ahead = nil
	s.specMu.Unlock()
	return s.applyReported(ctx, reported)
}

// applyReported writes the bindings a window took (deferAhead), in the
// order they were reported (s.mu held); the writes run to the end.
func (s *Scheduler) applyReported(ctx context.Context, reported []aheadPod) error {
	for _, p := range reported {
		if err := s.upsertPodLocked(context.WithoutCancel(ctx), p.pod, p.at); err != nil {
			return err
		}
	}
	return nil
}

// extension is the work of one extension: the pods of the speculation
// still expected (their likes and nodes), as pods placed ahead, and the
// pods expected after them, to solve.
type extension struct {
	likes       []Pod
	nodes       []string
	ahead, pods []*Pod
}

// extensionStats is what an extension's solve leaves for the
// speculation.
type extensionStats struct {
	sampleAfter int64
	stats       weave.Stats
}

// expectedPods are copies of the expected pods exp, the i-th named
// name(i), pending, with the arrivals from on they will have (speculate,
// extend, placeFolded); false when a pod of such a name is in the state
// (not from Kubernetes).
func (s *Scheduler) expectedPods(exp []Pod, name func(int) string, from int64) ([]*Pod, bool) {
	pods := make([]*Pod, len(exp))
	for i, t := range exp {
		n := name(i)
		if s.state.Pods[n] != nil {
			return nil, false
		}
		if t.Group == t.Name {
			t.Group = n
		}
		t.Name, t.NodeName, t.Phase, t.created = n, "", PhasePending, from+int64(i)
		pods[i] = &t
	}
	return pods, true
}

// solveExtension writes ext's pods still expected, checks every prefix of
// them on their nodes and places them there, opens the window, then
// writes and solves the pods after them; every write is undone before it
// returns (s.mu held). got is nil when the extension was given up (a
// prefix fails its check: such a pod would be checked out on arrival).
func (s *Scheduler) solveExtension(ctx, sctx context.Context, ext *extension) (got map[string]string, st extensionStats, err error) {
	// Every write is undone before the end: the speculation stands
	// through them.
	s.expectWrite = true
	defer func() { s.expectWrite = false }()
	var written []*Pod
	defer func() {
		for i := len(written) - 1; i >= 0; i-- {
			if derr := s.deletePodLocked(context.WithoutCancel(ctx), written[i].Name); derr != nil {
				got, err = nil, derr
				return
			}
		}
	}()
	write := func(ps []*Pod) error {
		if err := s.writeExpected(ctx, ps); err != nil {
			return err
		}
		written = append(written, ps...)
		return nil
	}
	if err := write(ext.ahead); err != nil {
		return nil, st, err
	}
	placed := map[string]string{}
	for k, p := range ext.ahead {
		placed[p.Name] = ext.nodes[k]
		if s.checkAfter(ext.ahead[:k+1], nil, placed) != nil {
			return nil, st, nil
		}
	}
	if _, _, err := s.apply(ctx, ext.ahead, placed, nil); err != nil {
		return nil, st, err
	}
	if err := write(ext.pods); err != nil {
		return nil, st, err
	}
	if s.beforeAheadReady != nil {
		s.beforeAheadReady()
	}
	s.specMu.Lock()
	if s.ahead != nil {
		s.ahead.likes, s.ahead.nodes, s.ahead.ready = ext.likes, ext.nodes, true
		close(s.ahead.readied)
	}
	s.specMu.Unlock()
	if s.whileExtending != nil {
		s.whileExtending()
	}
	sampleAt, stats := s.sampleAt, s.lastStats
	s.rejected = map[string]string{}
	s.speculating = true
	got, err = s.place(sctx, ext.pods)
	s.rejected, s.speculating = nil, false
	st = extensionStats{sampleAfter: s.sampleAt, stats: s.lastStats}
	s.sampleAt, s.lastStats = sampleAt, stats
	if err != nil || sctx.Err() != nil {
		return nil, st, nil // the batch of such pods will meet the error itself
	}
	s.orderForArrival(ext.pods, got)
	return got, st, nil
}

// firstErr returns a, or b when a is nil.
func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// applyAhead writes the pods placed ahead to the state (s.mu held): each
// arrives, as UpsertPod would write it, and is placed on its node, as a
// batch placed from the speculation would place it.
func (s *Scheduler) applyAhead(ctx context.Context, served []aheadPod) error {
	ctx = context.WithoutCancel(ctx) // the writes run to the end
	for _, a := range served {
		if err := s.upsertPodLocked(ctx, a.pod, a.at); err != nil {
			return err
		}
		p := s.state.Pods[a.pod.Name]
		if p == nil {
			return fmt.Errorf("scheduler: pod %s placed ahead is not in the state", a.pod.Name) // not reached
		}
		sp := s.spec
		if sp != nil && slices.Contains(sp.matched, p.Name) {
			if sp.used == 0 {
				s.sampleAt = sp.sampleAfter
			}
			s.lastStats = sp.stats
			sp.used++
		}
		s.expectWrite = true
		_, _, err := s.apply(ctx, []*Pod{p}, map[string]string{p.Name: a.node}, nil)
		s.expectWrite = false
		if err != nil {
			return err
		}
		s.specCount.Ahead++
		if sp != nil && sp == s.spec && sp.used == len(sp.likes) {
			s.dropSpeculation()
		}
	}
	return nil
}
