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
	addPods(t, s, specReplica("web", 0, 300))
	s.specWidth = 2 // as learned on earlier pods (a first replica's arrival sets it to 1)
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

// A folded batch's pods are placed only where they hold without the pods
// expected after them. nginx+redis pods (per app, redis pods anti-affine,
// nginx pods anti-affine and affine to a redis pod of their app) arrive
// behind a busy loop, so batches fold once the order of the kinds is
// learnt; now and then an nginx pod comes before its redis pod, and every
// redis node of its app already runs an nginx pod. The model may put it
// beside the expected redis pod, which has not arrived: it must not be
// bound there (it was, before the fold checked its own pods: "nginx-0-3 on
// n003: H14 affinity unmet").
func TestFoldedPodsHoldWithoutTheExpected(t *testing.T) {
	s := newTest(t, Config{Speculate: true})
	for i := range 40 {
		addNodes(t, s, Node{Name: fmt.Sprintf("n%03d", i), Zone: fmt.Sprintf("z%d", i%3), CPU: 4000, Memory: 32768, Pods: 110})
	}
	sel := func(app, role string) *LabelSelector {
		return SelectLabels(map[string]string{"app": app, "role": role})
	}
	rounds := 5
	if raceDetector {
		rounds = 3 // race_on_test.go; the first swap is in the third round
	}
	var pods []Pod
	for i := range rounds {
		for a := range 5 {
			app := fmt.Sprintf("app-%d", a)
			pods = append(pods, Pod{Name: fmt.Sprintf("redis-%d-%d", a, i), Group: fmt.Sprintf("redis-%d", a), CPU: 100, Memory: 500,
				Labels:   map[string]string{"app": app, "role": "redis"},
				Affinity: []PodAffinityTerm{{Anti: true, Required: true, Selector: sel(app, "redis"), TopologyKey: LabelHostname}}})
			pods = append(pods, Pod{Name: fmt.Sprintf("nginx-%d-%d", a, i), Group: fmt.Sprintf("nginx-%d", a), CPU: 100, Memory: 500,
				Labels: map[string]string{"app": app, "role": "nginx"},
				Affinity: []PodAffinityTerm{{Anti: true, Required: true, Selector: sel(app, "nginx"), TopologyKey: LabelHostname},
					{Required: true, Selector: sel(app, "redis"), TopologyKey: LabelHostname}}})
		}
	}
	for k := 20; k+1 < len(pods); k += 6 { // an nginx pod before its redis pod
		pods[k], pods[k+1] = pods[k+1], pods[k]
	}
	s.specWidth = 16
	for k, p := range pods {
		s.solving.Store(k >= 10) // from the second round on, each pod arrives while a batch is solved
		addPods(t, s, p)
		s.solving.Store(false)
		placed, _ := schedule(t, s)
		for name, n := range placed { // the bindings reported
			q := *s.State().Pods[name]
			q.NodeName = n
			addPods(t, s, q)
		}
		assertConsistent(t, s)
	}
	if st := s.SpeculationStats(); st.Folded == 0 || st.Used == 0 {
		t.Fatalf("%+v: no batch folded, or no pod placed from a fold", st)
	}
}

// Pods a standing speculation decided are placed at once, even when they
// reach the scheduler in a clump that looks like a burst: the burst
// linger waits for pods to decide together, and theirs are decided.
func TestDecidedPodsSkipTheBurstLinger(t *testing.T) {
	s := newTest(t, Config{Speculate: true, BurstLinger: time.Second})
	for i := range 6 {
		addNodes(t, s, Node{Name: fmt.Sprintf("n%02d", i), Zone: fmt.Sprintf("z%d", i%3), CPU: 4000, Memory: 8192})
	}
	s.specLimit = 4
	addPods(t, s, specReplica("web", 0, 300))
	s.specWidth = 4 // as learned on earlier pods (a first replica's arrival sets it to 1)
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

// A batch is folded with at most maxFoldedWidth expected pods, whatever
// width the idle loop learned: the loop is busy, and pods queue behind the
// folded solve.
func TestFoldedWidthIsBounded(t *testing.T) {
	s := newTest(t, Config{Speculate: true})
	for i := range 12 {
		addNodes(t, s, Node{Name: fmt.Sprintf("n%02d", i), Zone: fmt.Sprintf("z%d", i%3), CPU: 4000, Memory: 8192})
	}
	addPods(t, s, specReplica("web", 0, 300))
	schedule(t, s)
	addPods(t, s, specReplica("web", 1, 300))
	s.specWidth = 16 // as learned while idle
	schedule(t, s)
	s.solving.Store(true)
	addPods(t, s, specReplica("web", 2, 300))
	s.solving.Store(false)
	if placed, _ := schedule(t, s); placed["web-2"] == "" {
		t.Fatalf("web-2 not placed: %v", placed)
	}
	if st := s.SpeculationStats(); st.Folded != 1 || s.spec == nil || len(s.spec.likes) != maxFoldedWidth {
		t.Fatalf("%+v, speculation %v: want web-2's batch folded with %d expected pods", st, s.spec != nil, maxFoldedWidth)
	}
}
