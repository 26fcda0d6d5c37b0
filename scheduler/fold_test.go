package scheduler

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// A pod that arrives while a batch is solved finds the loop busy: its
// own batch is solved together with the pods expected after it, and the
// next replica is placed from that speculation on arrival. Placements
// pass the check, and the database holds them.
func TestBusyBatchFoldsTheSpeculation(t *testing.T) {
	s := newTest(t, Config{Speculate: true})
	for i := range 12 {
		addNodes(t, s, Node{Name: fmt.Sprintf("n%02d", i), Zone: fmt.Sprintf("z%d", i%3), CPU: int64(2000 + 500*(i%4)), Memory: 8192})
	}
	s.specWidth = 2
	addPods(t, s, specReplica("web", 0, 300))
	schedule(t, s)
	addPods(t, s, specReplica("web", 1, 300))
	schedule(t, s)
	if st := s.SpeculationStats(); st.Folded != 0 || st.Solved != 0 {
		t.Fatalf("%+v: a batch folded with nothing arriving behind it", st)
	}
	// web-2 arrives while a batch is solved (SchedulePending sets
	// solving; the app's loop solves while the informer upserts).
	s.solving.Store(true)
	addPods(t, s, specReplica("web", 2, 300))
	s.solving.Store(false)
	placed, _ := schedule(t, s)
	if placed["web-2"] == "" {
		t.Fatalf("web-2 not placed: %v", placed)
	}
	if st := s.SpeculationStats(); st.Folded != 1 || s.spec == nil || len(s.spec.likes) != 2 {
		t.Fatalf("%+v, speculation %+v: want web-2's batch solved with the two pods expected after it", st, s.spec)
	}
	want := s.spec.nodes[0]
	addPods(t, s, specReplica("web", 3, 300))
	placed, _ = schedule(t, s)
	if st := s.SpeculationStats(); st.Used != 1 || placed["web-3"] != want {
		t.Fatalf("%+v: web-3 placed %v, want on %s from the folded speculation", st, placed, want)
	}
	assertConsistent(t, s)
}

// A busy batch folds only a template seen before: api-0, the first pod
// of its kind, arrives behind a batch, and what follows it is only a
// guess (more api pods), so its batch is solved alone; web-1 then arrives
// behind a batch, and the pod that followed web-0 (api-0) is known, so
// web-1's batch is solved with an api pod expected after it.
func TestGuessedTemplatesDoNotFold(t *testing.T) {
	s := newTest(t, Config{Speculate: true})
	for i := range 12 {
		addNodes(t, s, Node{Name: fmt.Sprintf("n%02d", i), Zone: fmt.Sprintf("z%d", i%3), CPU: 4000, Memory: 8192})
	}
	s.specWidth = 1
	behind := func(p Pod) {
		s.solving.Store(true) // p arrives while a batch is solved
		addPods(t, s, p)
		s.solving.Store(false)
	}
	addPods(t, s, specReplica("web", 0, 300))
	schedule(t, s)
	behind(specReplica("api", 0, 700))
	if placed, _ := schedule(t, s); placed["api-0"] == "" {
		t.Fatalf("api-0 not placed: %v", placed)
	}
	if st := s.SpeculationStats(); st.Folded != 0 {
		t.Fatalf("%+v: api-0's batch folded with a guess", st)
	}
	behind(specReplica("web", 1, 300))
	if placed, _ := schedule(t, s); placed["web-1"] == "" {
		t.Fatalf("web-1 not placed: %v", placed)
	}
	if st := s.SpeculationStats(); st.Folded != 1 || s.spec == nil || len(s.spec.likes) != 1 || s.spec.likes[0].Group != "api" {
		t.Fatalf("%+v, speculation %+v: want web-1's batch folded with the api pod expected after it", st, s.spec)
	}
	assertConsistent(t, s)
}

// Pods a standing speculation decided are placed at once, even when they
// reach the scheduler in a clump that looks like a burst: the burst
// linger waits for pods to decide together, and theirs are decided.
func TestDecidedPodsSkipTheBurstLinger(t *testing.T) {
	s := newTest(t, Config{Speculate: true, BurstLinger: time.Second})
	for i := range 6 {
		addNodes(t, s, Node{Name: fmt.Sprintf("n%02d", i), Zone: fmt.Sprintf("z%d", i%3), CPU: 4000, Memory: 8192})
	}
	s.specWidth, s.specLimit = 4, 4
	addPods(t, s, specReplica("web", 0, 300))
	schedule(t, s)
	if err := s.speculate(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		addPods(t, s, specReplica("web", i, 300))
	}
	// The four arrivals came in a clump, a burst by the linger's rule (set
	// here: under the race detector the upserts take longer than a burst).
	now := time.Now()
	for range burstSpan {
		s.arrivals.add(now)
	}
	if !s.arrivals.bursting(time.Now()) {
		t.Fatal("the arrivals do not look like a burst: the test tests nothing")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond) // the linger waits 30 ms at least
	defer cancel()
	if err := s.WaitBatch(ctx); err != nil {
		t.Fatalf("WaitBatch: %v: the batch of decided pods waited for the linger", err)
	}
	placed, _ := schedule(t, s)
	if st := s.SpeculationStats(); len(placed) != 4 || st.Used != 1 {
		t.Fatalf("placed %v (%+v): want the four replicas from the speculation", placed, st)
	}
}

// Only a batch of a few pods folds: a burst's batches of tens are
// gathered by the burst linger, and the expected pods only slowed them.
func TestOnlySmallBatchesFold(t *testing.T) {
	s := newTest(t, Config{Speculate: true})
	addNodes(t, s, Node{Name: "a", Zone: "z", CPU: 64000, Memory: 65536})
	var q []*Pod
	for i := range maxFoldedBatch + 1 {
		p := specReplica("web", i, 100)
		addPods(t, s, p)
		q = append(q, s.state.Pods[p.Name])
	}
	s.queuedBehind = true
	if !s.foldDue(q[:1]) || !s.foldDue(q[:maxFoldedBatch]) {
		t.Fatalf("a batch of 1 or %d pods does not fold", maxFoldedBatch)
	}
	if s.foldDue(q) {
		t.Fatalf("a batch of %d pods folds", len(q))
	}
	s.queuedBehind = false
	if s.foldDue(q[:1]) {
		t.Fatal("a batch folds with no pod queued behind the last one")
	}
}
