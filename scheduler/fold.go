package scheduler

import (
	"context"
)

// A speculation folded into a batch. A speculation starts only while the
// loop is idle; pods of a new kind arriving at 100 a second keep it busy
// (a solved batch of one pod takes 10–20 ms live, the next pod comes
// 10 ms later), so none starts, every pod is solved in a batch of its own
// and the queue grows (live: the first 36 pods of a run, up to 72 ms
// each). So a batch solved while the pods expected next are not decided
// is solved together with them: the batch's pods and the expected ones
// are one model, the batch's pods are placed from it, and the expected
// ones' nodes are a speculation standing on the state the batch leaves
// (its own placements are the writes it expects). The pods that arrive
// while it solves are then placed from it, and the loop has time to
// speculate again.

// maxFoldedBatch bounds the batches folded with a speculation: pods
// arriving one after another make batches of one to three. A burst makes
// batches of tens, which the burst linger gathers; folding 16 expected
// pods of mixed kinds into those only made them slower (live, nginx+redis
// burst at 8167fc9: p50 467.6 and 541.8 ms in two runs, 363.5 before).
const maxFoldedBatch = 3

// maxFoldedWidth bounds the expected pods folded into a batch: the loop is
// busy, and pods queue behind the folded solve. Folded with the width
// learned while idle (up to 16), a batch of one pod took 37.6 ms live and
// one of three 39.4, where alone they take 5–25 (weave-bench latency,
// nginx+redis at 100 pods/s, traced); the idle loop extends what the fold
// leaves standing.
const maxFoldedWidth = 4

// foldDue reports whether the batch q is solved with the pods expected
// after it (s.mu held): speculation on, the loop busy (a pod arrived while
// the last batch was solved), a template that followed a pod like the
// last before, no speculation standing, a batch of a few pods, and q's
// pods speculable.
//
// A template that is only a guess ("like the last": no pod followed one
// like it yet) is not folded: pods of kinds new to the scheduler, which
// keep its loop busy, rarely come as the guess says, and the expected
// pods made each of their batches several times slower to no use (live,
// nginx+redis at 100 pods/s, each rate in a namespace of its own: folded
// batches of one pod took 31–35 ms against 6 ms alone, and the pods after
// them were not those expected). An idle speculation still guesses.
func (s *Scheduler) foldDue(q []*Pod) bool {
	if !s.cfg.Speculate || !s.queuedBehind || s.template == nil || !s.templateSeen || s.spec != nil || len(q) > maxFoldedBatch || len(q)+s.foldedWidth() > s.cfg.BatchSize {
		return false
	}
	for _, p := range q {
		if !speculable(p) {
			return false
		}
	}
	return true
}

// foldedWidth is how many expected pods a batch is folded with (s.mu
// held).
func (s *Scheduler) foldedWidth() int { return min(s.width(), maxFoldedWidth) }

// placeFolded places the batch q with the pods expected after it, and
// leaves their nodes as the speculation (s.mu held).
func (s *Scheduler) placeFolded(ctx context.Context, q []*Pod) ([]Binding, []Unschedulable, error) {
	pods, ok := s.expectedPods(s.expected(s.foldedWidth()), specName, s.seq+1)
	if !ok {
		return s.placeAlone(ctx, q)
	}
	if err := s.writeExpected(ctx, pods); err != nil {
		return nil, nil, err
	}
	s.rejected = map[string]string{}
	defer func() { s.rejected = nil }()
	s.speculating, s.folding = true, true
	placed, perr := s.place(ctx, append(append([]*Pod(nil), q...), pods...))
	s.speculating, s.folding = false, false
	// A pod of q left out, or no solution: q is solved by itself, with
	// the longer search.
	alone := perr != nil
	for _, p := range q {
		alone = alone || placed[p.Name] == ""
	}
	if !alone {
		// q's placements must hold without the expected pods, which
		// may never come: the model decided them together, and a web
		// pod may sit beside an expected cache pod instead of a bound one
		// (live, nginx+redis at 100 pods/s: weave-scheduler's re-check
		// caught it; a caller without one would have bound it).
		alone = s.checkAfter(q, nil, placed) != nil
	}
	var bs []Binding
	var us []Unschedulable
	var err error
	if !alone {
		if bs, us, err = s.apply(ctx, q, placed, nil); err == nil {
			// Each expected pod placed after those before it, the
			// batch's placed (speculate).
			s.orderForArrival(pods, placed)
		}
	}
	for _, p := range pods {
		if derr := s.deletePodLocked(context.WithoutCancel(ctx), p.Name); derr != nil {
			return nil, nil, firstErr(err, derr)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if alone {
		return s.placeAlone(ctx, q)
	}
	sp := &speculation{matched: make([]string, len(pods)), sampleAfter: s.sampleAt, stats: s.lastStats}
	for _, p := range pods {
		sp.likes = append(sp.likes, replicaOf(p))
		sp.nodes = append(sp.nodes, placed[p.Name])
	}
	s.spec = sp // after its pods' deletion, which it expects
	s.specTried = s.version
	s.specCount.Solved++
	s.specCount.Folded++
	return bs, us, nil
}

// placeAlone places the batch q by itself (s.mu held).
func (s *Scheduler) placeAlone(ctx context.Context, q []*Pod) ([]Binding, []Unschedulable, error) {
	s.rejected = map[string]string{}
	defer func() { s.rejected = nil }()
	placed, err := s.place(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	return s.apply(ctx, q, placed, nil)
}
