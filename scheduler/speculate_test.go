package scheduler

import (
	"context"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weavesql/weave/cp"
)

// specReplica is the i-th replica of Deployment d, whose pods spread over
// zones, keep apart per node and ask for a share of a node.
func specReplica(d string, i int, cpu int64) Pod {
	app := map[string]string{"app": d}
	return Pod{Name: fmt.Sprintf("%s-%d", d, i), Group: d, CPU: cpu, Memory: 256, Labels: app,
		Affinity: []PodAffinityTerm{{Anti: true, Required: true, Selector: &LabelSelector{MatchLabels: app}, TopologyKey: LabelHostname}},
		Spread:   []SpreadConstraint{{TopologyKey: LabelZone, MaxSkew: 1, Hard: true, Selector: &LabelSelector{MatchLabels: app}}}}
}

// A speculation places a replica where its own batch would: two
// schedulers see the same events, one solving every batch, the other
// deciding each replica's batch ahead (called here as its idle loop would)
// and using it when the replica arrives. Between arrivals the test changes
// the state now and then (a node fills up, a node is cordoned, a pod of
// another shape arrives): the speculation must then be dropped, and the
// batch solved. The replicas come from one Deployment, or from two in
// turn (the speculation is then of the pod that followed the last one's
// like last time).
func TestSpeculationPlacesAsTheBatchWould(t *testing.T) {
	t.Run("one Deployment", func(t *testing.T) {
		speculationAgainstBatches(t, func(i int) Pod { return specReplica("web", i, 300) })
	})
	t.Run("two Deployments in turn", func(t *testing.T) {
		speculationAgainstBatches(t, func(i int) Pod {
			if i%2 == 1 {
				return specReplica("api", i, 700)
			}
			return specReplica("web", i, 300)
		})
	})
}

func speculationAgainstBatches(t *testing.T, replica func(i int) Pod) {
	ctx := context.Background()
	fresh := newTest(t, Config{})
	spec := newTest(t, Config{Speculate: true})
	spec.specLimit = 1 // each replica's own batch (a wider one decides several together)
	var nodes []Node
	for i := range 12 {
		nodes = append(nodes, Node{Name: fmt.Sprintf("n%02d", i), Zone: fmt.Sprintf("z%d", i%3), CPU: int64(2000 + 500*(i%4)), Memory: 8192})
	}
	addNodes(t, fresh, nodes...)
	addNodes(t, spec, nodes...)
	both := func(f func(s *Scheduler)) { f(fresh); f(spec) }
	rng := rand.New(rand.NewSource(7))
	changes, used, steps := 0, 0, 12
	if raceDetector {
		steps = 6 // race_on_test.go
	}
	for i := range steps {
		if s := spec; s.template != nil {
			if err := s.speculate(ctx); err != nil {
				t.Fatal(err)
			}
		}
		changed := rng.Intn(3) == 0 && i > 0
		if changed {
			changes++
			switch i % 3 {
			case 0: // another shape of pod takes room
				both(func(s *Scheduler) { addPods(t, s, Pod{Name: fmt.Sprintf("other-%d", i), CPU: 1500, Memory: 512}) })
				a, _ := schedule(t, fresh)
				b, _ := schedule(t, spec)
				if fmt.Sprint(a) != fmt.Sprint(b) {
					t.Fatalf("step %d: other pod placed %v without speculation, %v with", i, a, b)
				}
			case 1: // a node is cordoned
				n := nodes[rng.Intn(len(nodes))]
				n.Unschedulable = true
				both(func(s *Scheduler) { addNodes(t, s, n) })
			case 2: // a bound pod goes
				for name, p := range fresh.State().Pods {
					if p.NodeName != "" {
						both(func(s *Scheduler) {
							if err := s.DeletePod(ctx, name); err != nil {
								t.Fatal(err)
							}
						})
						break
					}
				}
			}
		}
		p := replica(i)
		both(func(s *Scheduler) { addPods(t, s, p) })
		before := spec.SpeculationStats().Used
		a, _ := schedule(t, fresh)
		b, _ := schedule(t, spec)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("step %d: %s placed %v by its batch, %v with speculation", i, p.Name, a, b)
		}
		if spec.SpeculationStats().Used > before {
			used++
			if changed {
				t.Fatalf("step %d: a speculation was used after the state changed", i)
			}
		}
	}
	st := spec.SpeculationStats()
	if used < steps-2*changes-3 || st.Stale == 0 || changes == 0 {
		t.Fatalf("%d batches from a speculation, %d stale, %d changes: the test exercises neither side (%+v)", used, st.Stale, changes, st)
	}
	t.Logf("%d of %d batches from a speculation (%+v), %d state changes", used, steps, st, changes)
}

// afterFirstReplica is a speculating scheduler on nodes that has placed
// the first replica of ReplicaSet rs (500m): the template of the next.
func afterFirstReplica(t *testing.T, cfg Config, nodes ...Node) *Scheduler {
	t.Helper()
	cfg.Speculate = true
	s := newTest(t, cfg)
	addNodes(t, s, nodes...)
	addPods(t, s, Pod{Name: "r0", Group: "rs", CPU: 500, Memory: 100})
	schedule(t, s)
	return s
}

// A speculation stands for a pod like its template only: a pod with
// another request, or the template's replica after any other write, is
// solved as its batch.
func TestSpeculationOnlyForTheTemplatesReplica(t *testing.T) {
	ctx := context.Background()
	s := afterFirstReplica(t, Config{}, Node{Name: "big", Zone: "z", CPU: 4000, Memory: 8192}, Node{Name: "small", Zone: "z", CPU: 1000, Memory: 8192})
	s.specLimit = 1
	speculate := func() {
		t.Helper()
		if err := s.speculate(ctx); err != nil {
			t.Fatal(err)
		}
	}

	speculate()
	addPods(t, s, Pod{Name: "r1", Group: "rs", CPU: 600, Memory: 100}) // not the template's replica
	schedule(t, s)
	if st := s.SpeculationStats(); st.Solved != 1 || st.Used != 0 || st.Stale != 1 {
		t.Fatalf("a pod with another request: %+v, want the speculation solved and dropped", st)
	}

	speculate() // the template is r1 now
	node := s.spec.nodes[0]
	n := Node{Name: node, Zone: "z", CPU: 4000, Memory: 8192, Unschedulable: true}
	if node == "small" {
		n.CPU = 1000
	}
	addNodes(t, s, n) // cordon the node the speculation chose
	addPods(t, s, Pod{Name: "r2", Group: "rs", CPU: 600, Memory: 100})
	got, _ := schedule(t, s)
	if st := s.SpeculationStats(); st.Used != 0 || st.Stale != 2 {
		t.Fatalf("after a write: %+v, want the speculation dropped", st)
	}
	if got["r2"] == node {
		t.Fatalf("r2 placed on %s, cordoned after the speculation chose it", node)
	}

	n.Unschedulable = false
	addNodes(t, s, n)
	speculate()
	addPods(t, s, Pod{Name: "r3", Group: "rs", CPU: 600, Memory: 100})
	got, _ = schedule(t, s)
	if st := s.SpeculationStats(); st.Used != 1 || got["r3"] == "" {
		t.Fatalf("the template's replica on an unchanged state: %+v, placed %v; want it placed from the speculation", st, got)
	}
	if s.State().Pods[specName(0)] != nil {
		t.Fatal("the speculated pod stayed in the state")
	}
}

// The idle loop speculates once the state has settled, and a replica
// arriving then is placed from it.
func TestWaitBatchSpeculates(t *testing.T) {
	ctx := context.Background()
	s := afterFirstReplica(t, Config{}, Node{Name: "a", Zone: "z", CPU: 4000, Memory: 8192}, Node{Name: "b", Zone: "z", CPU: 4000, Memory: 8192})
	done := make(chan error, 1)
	go func() { done <- s.WaitBatch(ctx) }()
	deadline := time.Now().Add(20 * time.Second)
	for s.SpeculationStats().Solved == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle loop did not speculate")
		}
		time.Sleep(time.Millisecond)
	}
	addPods(t, s, Pod{Name: "r1", Group: "rs", CPU: 500, Memory: 100})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	bs, _, err := s.SchedulePending(ctx)
	if err != nil || len(bs) != 1 {
		t.Fatalf("r1: %v, %v", bs, err)
	}
	if st := s.SpeculationStats(); st.Used != 1 {
		t.Fatalf("%+v: r1 not placed from the speculation", st)
	}
}

// interruptSpeculation cancels a speculation under way for a pending pod
// that is not the template's replica, and only for one.
func TestInterruptSpeculation(t *testing.T) {
	s := newTest(t, Config{Speculate: true})
	tmpl := normalizePod(Pod{Name: "r0", Group: "rs", CPU: 500, Labels: map[string]string{"app": "x"}})
	like := replicaOf(&tmpl)
	for _, c := range []struct {
		name   string
		pod    Pod
		cancel bool
	}{
		{"replica", Pod{Name: "r9", Group: "rs", CPU: 500, Labels: map[string]string{"app": "x"}}, false},
		{"bound pod's update", Pod{Name: "r0", Group: "rs", CPU: 500, NodeName: "a"}, false},
		{"other request", Pod{Name: "r9", Group: "rs", CPU: 600, Labels: map[string]string{"app": "x"}}, true},
		{"other labels", Pod{Name: "r9", Group: "rs", CPU: 500, Labels: map[string]string{"app": "y"}}, true},
		{"own group", Pod{Name: "r9", CPU: 500, Labels: map[string]string{"app": "x"}}, true},
	} {
		cancelled := false
		s.specLikes, s.specCancel = []Pod{like}, func() { cancelled = true }
		s.interruptSpeculation(&c.pod)
		if cancelled != c.cancel {
			t.Errorf("%s: cancelled %v, want %v", c.name, cancelled, c.cancel)
		}
	}
	s.specLikes, s.specCancel = nil, nil
}

// blockingBackend solves with the native engine, or, while block is set,
// signals entered, waits for its context to end and signals cancelled.
type blockingBackend struct {
	block              atomic.Bool
	entered, cancelled chan struct{}
}

func (*blockingBackend) Name() string { return "blocking" }

func (b *blockingBackend) Solve(ctx context.Context, m *cp.Model, p cp.Params) (*cp.Response, error) {
	if !b.block.Load() {
		return m.Solve(ctx, p)
	}
	b.entered <- struct{}{}
	<-ctx.Done()
	b.cancelled <- struct{}{}
	return nil, ctx.Err()
}

// A write during a speculation cuts it short instead of waiting for it:
// a pending pod of another kind, or a node's change. The speculated pod
// leaves the state, and the pod is placed by its own batch. A bound pod's
// update (its binding reported) does not interrupt.
func TestWritesInterruptASpeculation(t *testing.T) {
	for _, c := range []struct {
		name  string
		write func(s *Scheduler) error
	}{
		{"a pod of another kind", func(s *Scheduler) error {
			return s.UpsertPod(context.Background(), Pod{Name: "other", Group: "x", CPU: 700, Memory: 100})
		}},
		{"a node's change", func(s *Scheduler) error {
			return s.UpsertNode(context.Background(), Node{Name: "b", Zone: "z", CPU: 8000, Memory: 8192, Pods: 110, Storage: 100000})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			b := &blockingBackend{entered: make(chan struct{}, 1), cancelled: make(chan struct{}, 1)}
			s := afterFirstReplica(t, Config{Backend: b}, Node{Name: "a", Zone: "z", CPU: 4000, Memory: 8192}, Node{Name: "b", Zone: "z", CPU: 4000, Memory: 8192})
			b.block.Store(true)
			done := make(chan error, 1)
			go func() { done <- s.WaitBatch(ctx) }()
			defer func() {
				cancel()
				<-done
			}()
			select {
			case <-b.entered:
			case <-time.After(20 * time.Second):
				t.Fatal("no speculation started")
			}
			// The binding of r0 reported: no interruption
			// (TestReportedBindingDoesNotWaitForASpeculation).
			s.interruptSpeculation(&Pod{Name: "r0", Group: "rs", CPU: 500, Memory: 100, NodeName: "a"})
			select {
			case <-b.cancelled:
				t.Fatal("a bound pod's update cut the speculation short")
			case <-time.After(50 * time.Millisecond):
			}
			wrote := make(chan error, 1)
			go func() { wrote <- c.write(s) }()
			select {
			case err := <-wrote:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the write waited for the speculation")
			}
			<-b.cancelled
			b.block.Store(false)
			if st := s.SpeculationStats(); st.Interrupted != 1 {
				t.Fatalf("%+v, want one speculation interrupted", st)
			}
			if s.State().Pods[specName(0)] != nil {
				t.Fatal("the speculated pod stayed in the state")
			}
			if c.name == "a pod of another kind" {
				bs, _, err := s.SchedulePending(ctx)
				if err != nil || len(bs) != 1 || bs[0].Pod != "other" {
					t.Fatalf("other not placed by its batch: %v, %v", bs, err)
				}
			}
		})
	}
}

// gateBackend solves with the native engine; while block is set, it
// first signals entered and waits for release (or its context's end).
type gateBackend struct {
	block            atomic.Bool
	entered, release chan struct{}
}

func (*gateBackend) Name() string { return "gate" }

func (b *gateBackend) Solve(ctx context.Context, m *cp.Model, p cp.Params) (*cp.Response, error) {
	if b.block.Load() {
		b.entered <- struct{}{}
		select {
		case <-b.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return m.Solve(ctx, p)
}

// The binding of a pod the scheduler placed, reported while a speculation
// is solved, does not wait for it (the informer's events behind the
// report, the next pods' arrivals, would wait with it): UpsertPod returns
// during the solve, and the report is applied when the speculation ends.
// A report of the binding alone leaves the speculation standing (the next
// replica is placed from it); any other change of the pod makes it stale.
func TestReportedBindingDoesNotWaitForASpeculation(t *testing.T) {
	for _, c := range []struct {
		name   string
		labels map[string]string
		stands bool
	}{
		{"binding reported", map[string]string{LabelZone: "z"}, true},
		{"pod relabelled", map[string]string{"app": "other"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &gateBackend{entered: make(chan struct{}, 1), release: make(chan struct{})}
			s := afterFirstReplica(t, Config{Backend: b}, Node{Name: "a", Zone: "z", CPU: 4000, Memory: 8192}, Node{Name: "b", Zone: "z", CPU: 4000, Memory: 8192})
			r0 := s.State().Pods["r0"]
			if r0 == nil || r0.NodeName == "" {
				t.Fatalf("r0 not placed: %+v", r0)
			}
			b.block.Store(true)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- s.WaitBatch(ctx) }()
			released, waited := false, false
			t.Cleanup(func() { // a failure ends the solve and the wait before the scheduler closes
				cancel()
				if !released {
					close(b.release)
				}
				if !waited {
					<-done
				}
			})
			select {
			case <-b.entered:
			case <-time.After(20 * time.Second):
				t.Fatal("no speculation started")
			}
			wrote := make(chan error, 1)
			go func() {
				wrote <- s.UpsertPod(context.Background(), Pod{Name: "r0", Group: "rs", CPU: 500, Memory: 100, NodeName: r0.NodeName, Labels: c.labels})
			}()
			select {
			case err := <-wrote:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the report waited for the speculation")
			}
			b.block.Store(false)
			close(b.release)
			released = true
			deadline := time.Now().Add(20 * time.Second)
			for s.SpeculationStats().Solved == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the speculation did not end")
				}
				time.Sleep(time.Millisecond)
			}
			cancel()
			<-done
			waited = true
			got := s.State().Pods["r0"]
			if !maps.Equal(got.Labels, c.labels) || got.NodeName != r0.NodeName {
				t.Fatalf("r0 after the speculation: %+v, want the report applied (labels %v)", got, c.labels)
			}
			addPods(t, s, Pod{Name: "r1", Group: "rs", CPU: 500, Memory: 100})
			if placed, _ := schedule(t, s); placed["r1"] == "" {
				t.Fatalf("r1 not placed: %v", placed)
			}
			if used := s.SpeculationStats().Used; (used == 1) != c.stands {
				t.Fatalf("speculation used %d times; want it to stand: %v", used, c.stands)
			}
		})
	}
}

// BenchmarkTrickle: a Deployment's replicas arriving one at a time on 500
// nodes, each decided as its own batch (SchedulePending, timed) once the
// loop has been idle; with speculation the idle time went to the replica's
// batch (speculate, not timed), and the batch only checks and records it.
func BenchmarkTrickle(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("speculate=%v", on), func(b *testing.B) {
			ctx := context.Background()
			s, err := New(Config{BatchIdle: -1, Speculate: on})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			for i := range 500 {
				if err := s.UpsertNode(ctx, Node{Name: fmt.Sprintf("n%03d", i), Zone: fmt.Sprintf("z%d", i%3), CPU: 64000, Memory: 256000, Storage: 100000, Pods: 110}); err != nil {
					b.Fatal(err)
				}
			}
			var batch []time.Duration
			used := 0
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				if on && s.template != nil {
					if err := s.speculate(ctx); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.UpsertPod(ctx, specReplica("web", i, 100)); err != nil {
					b.Fatal(err)
				}
				before := s.SpeculationStats().Used
				b.StartTimer()
				t0 := time.Now()
				bs, _, err := s.SchedulePending(ctx)
				batch = append(batch, time.Since(t0))
				if err != nil || len(bs) != 1 {
					b.Fatalf("%v, %v", bs, err)
				}
				if s.SpeculationStats().Used > before {
					used++
				}
			}
			slices.Sort(batch)
			b.ReportMetric(float64(batch[len(batch)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(used)/float64(len(batch)), "speculated")
		})
	}
}

// A speculation of several replicas places them as their batch would:
// replicas arriving one at a time, each placed from the speculation (one
// of them reported bound in between, with the zone label the API server
// adds), take the nodes that a scheduler without speculation gives the
// same replicas arriving together. The replicas are identical but for
// their names, which sort in arrival order on both sides, so the two
// models are the same.
func TestWideSpeculationPlacesAsABatch(t *testing.T) {
	ctx := context.Background()
	fresh := newTest(t, Config{})
	spec := newTest(t, Config{Speculate: true})
	spec.specLimit = 4
	var nodes []Node
	for i := range 12 {
		nodes = append(nodes, Node{Name: fmt.Sprintf("n%02d", i), Zone: fmt.Sprintf("z%d", i%3), CPU: int64(2000 + 500*(i%4)), Memory: 8192})
	}
	addNodes(t, fresh, nodes...)
	addNodes(t, spec, nodes...)
	replica := func(i int) Pod {
		p := specReplica("web", i, 300)
		p.Name = fmt.Sprintf("web-%c", 'a'+i)
		return p
	}
	addPods(t, fresh, replica(0))
	addPods(t, spec, replica(0))
	spec.specWidth = 4 // as learned on earlier pods (a first replica's arrival sets it to 1)
	a, _ := schedule(t, fresh)
	b, _ := schedule(t, spec)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("first replica: %v, %v", a, b)
	}
	if err := spec.speculate(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(spec.spec.likes); n != 4 {
		t.Fatalf("a speculation of %d pods, want 4", n)
	}
	var got []string
	for i := 1; i <= 4; i++ {
		p := replica(i)
		addPods(t, spec, p)
		placed, _ := schedule(t, spec)
		if placed[p.Name] == "" {
			t.Fatalf("%s not placed: %v", p.Name, placed)
		}
		got = append(got, placed[p.Name])
		if i == 2 { // its binding reported
			p.NodeName = placed[p.Name]
			p.Labels = map[string]string{"app": "web", LabelZone: spec.State().Nodes[p.NodeName].Zone}
			addPods(t, spec, p)
		}
	}
	if st := spec.SpeculationStats(); st.Used != 4 || st.Solved != 1 || st.Stale != 0 {
		t.Fatalf("%+v: want the four replicas placed from one speculation", st)
	}
	for i := 1; i <= 4; i++ {
		addPods(t, fresh, replica(i))
	}
	placed, _ := schedule(t, fresh)
	var want []string
	for i := 1; i <= 4; i++ {
		want = append(want, placed[replica(i).Name])
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("placed from the speculation on %v, by their batch on %v", got, want)
	}
}

// The width doubles while every expected pod arrives and is placed from
// the speculation (1, 2, 4, 8, 16), and halves (or falls to the pods that
// arrived, if more) when a write the speculation does not expect drops
// it.
func TestSpeculationWidth(t *testing.T) {
	ctx := context.Background()
	s := afterFirstReplica(t, Config{}, Node{Name: "a", Zone: "z", CPU: 64000, Memory: 65536}, Node{Name: "b", Zone: "z", CPU: 64000, Memory: 65536})
	s.extendOff = true // each speculation used up before the next (ahead_test.go extends them)
	var widths []int
	next := 1
	arrive := func() {
		t.Helper()
		if s.speculationDue() {
			if err := s.speculate(ctx); err != nil {
				t.Fatal(err)
			}
			widths = append(widths, len(s.spec.likes))
		}
		addPods(t, s, Pod{Name: fmt.Sprintf("r%d", next), Group: "rs", CPU: 500, Memory: 100})
		next++
		if placed, _ := schedule(t, s); len(placed) != 1 {
			t.Fatalf("placed %v", placed)
		}
	}
	for range 1 + 2 + 4 + 8 + 3 {
		arrive()
	}
	if !slices.Equal(widths, []int{1, 2, 4, 8, 16}) {
		t.Fatalf("widths %v, want 1, 2, 4, 8, 16", widths)
	}
	if st := s.SpeculationStats(); st.Used != 18 || st.Stale != 0 {
		t.Fatalf("%+v: want every replica placed from a speculation", st)
	}
	addNodes(t, s, Node{Name: "c", Zone: "z", CPU: 64000, Memory: 65536}) // not expected
	arrive()
	if st := s.SpeculationStats(); !slices.Equal(widths, []int{1, 2, 4, 8, 16, 8}) || st.Used != 19 || st.Stale != 1 {
		t.Fatalf("%+v, widths %v: want the speculation of 16 dropped after 3, and one of 8 next", st, widths)
	}
	// The first pod of another replica group: nothing has followed such a
	// pod yet, and the width learned on rs does not carry over to it.
	addPods(t, s, Pod{Name: "x0", Group: "xs", CPU: 700, Memory: 100})
	if placed, _ := schedule(t, s); len(placed) != 1 {
		t.Fatalf("placed %v", placed)
	}
	if !s.speculationDue() {
		t.Fatal("no speculation due after x0")
	}
	if err := s.speculate(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(s.spec.likes); n != 1 {
		t.Fatalf("a speculation of %d pods after a new group's first pod, want 1", n)
	}
}

func TestBindingReported(t *testing.T) {
	was := normalizePod(Pod{Name: "p", Group: "g", CPU: 100, NodeName: "n1", Labels: map[string]string{"app": "x"}})
	for _, c := range []struct {
		name string
		p    func(p *Pod)
		want bool
	}{
		{"unchanged", func(p *Pod) {}, true},
		{"topology labels added", func(p *Pod) {
			p.Labels = map[string]string{"app": "x", LabelZone: "z1", "topology.kubernetes.io/region": "r"}
		}, true},
		{"another label", func(p *Pod) { p.Labels = map[string]string{"app": "y"} }, false},
		{"another node", func(p *Pod) { p.NodeName = "n2" }, false},
		{"finished", func(p *Pod) { p.Phase = PhaseSucceeded }, false},
		{"another request", func(p *Pod) { p.CPU = 200 }, false},
	} {
		p := was
		p.Labels = maps.Clone(was.Labels)
		c.p(&p)
		p = normalizePod(p)
		if got := bindingReported(&was, &p); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	unbound := was
	unbound.NodeName = ""
	if bindingReported(&unbound, &unbound) || bindingReported(nil, &was) {
		t.Error("a pod not bound before reported as a binding")
	}
}

// A pending pod the speculation does not expect (another replica group,
// or another shape in its group) arriving among the expected ones leaves
// it standing: the expected pod of the batch is placed from it, the
// stranger stays pending for the next batch, solved. Only a pod of a
// speculated group spread evenly (N2 counts its pending pods) makes it
// stale.
func TestStrangerLeavesTheSpeculation(t *testing.T) {
	ctx := context.Background()
	for _, even := range []bool{false, true} {
		t.Run(fmt.Sprintf("even=%v", even), func(t *testing.T) {
			pod := func(name string, cpu int64) Pod {
				p := Pod{Name: name, Group: "rs", CPU: cpu, Memory: 100}
				if even {
					p.Labels = map[string]string{"app": "rs"}
					p.Spread = []SpreadConstraint{{TopologyKey: LabelZone, MaxSkew: 0, Hard: true, Selector: &LabelSelector{MatchLabels: p.Labels}}}
				}
				return p
			}
			s := newTest(t, Config{Speculate: true})
			addNodes(t, s, Node{Name: "a", Zone: "z1", CPU: 8000, Memory: 8192}, Node{Name: "b", Zone: "z2", CPU: 8000, Memory: 8192})
			addPods(t, s, pod("r0", 500))
			schedule(t, s)
			if !even { // evenly spread, r1 alone would break the spread the speculation counted on
				s.specWidth = 2
				if err := s.speculate(ctx); err != nil {
					t.Fatal(err)
				}
				addPods(t, s, pod("r1", 500), Pod{Name: "other", Group: "x", CPU: 700, Memory: 100})
				first, _ := schedule(t, s)
				if len(first) != 1 || first["r1"] == "" {
					t.Fatalf("first batch %v, want r1 alone, from the speculation", first)
				}
				second, _ := schedule(t, s)
				if len(second) != 1 || second["other"] == "" {
					t.Fatalf("second batch %v, want the stranger", second)
				}
				if st := s.SpeculationStats(); s.spec != nil || st.Used != 1 || st.Stale != 1 {
					t.Fatalf("%+v: want r1 placed from the speculation, then the speculation dropped by the stranger's batch", st)
				}
			} else {
				addPods(t, s, pod("r1", 500))
				schedule(t, s)
			}

			tmpl := *s.State().Pods["r1"]
			s.template, s.specWidth = &tmpl, 2
			if err := s.speculate(ctx); err != nil {
				t.Fatal(err)
			}
			addPods(t, s, pod("r2", 900)) // its group, not its shape
			addPods(t, s, pod("r3", 500))
			placed, _ := schedule(t, s)
			st := s.SpeculationStats()
			if even {
				if len(placed) != 2 || st.Used != 0 || st.Stale != 1 {
					t.Fatalf("placed %v (%+v): want r2 and r3 solved together, the speculation dropped", placed, st)
				}
				return
			}
			if len(placed) != 1 || placed["r3"] == "" || st.Used != 2 {
				t.Fatalf("placed %v (%+v): want r3 alone, from the speculation", placed, st)
			}
			if placed, _ = schedule(t, s); len(placed) != 1 || placed["r2"] == "" {
				t.Fatalf("placed %v: want r2 solved next", placed)
			}
		})
	}
}

// A pod of a batch that the check turns down on the speculation's node
// (here a node made too small for it; live, a pod whose affinity peer,
// decided with it, has not arrived yet) stays pending while the others
// are placed from the speculation; the next batch solves it.
func TestCheckedOutPodStaysPending(t *testing.T) {
	ctx := context.Background()
	s := afterFirstReplica(t, Config{}, Node{Name: "a", Zone: "z", CPU: 8000, Memory: 8192}, Node{Name: "tiny", Zone: "z", CPU: 100, Memory: 8192})
	s.specWidth = 2
	if err := s.speculate(ctx); err != nil {
		t.Fatal(err)
	}
	s.spec.nodes[1] = "tiny" // as a model that disagreed with the check would
	addPods(t, s, Pod{Name: "r1", Group: "rs", CPU: 500, Memory: 100}, Pod{Name: "r2", Group: "rs", CPU: 500, Memory: 100})
	placed, us := schedule(t, s)
	if len(placed) != 1 || placed[s.spec.matched[0]] == "" || len(us) != 0 {
		t.Fatalf("placed %v, unschedulable %v: want the first replica placed from the speculation, the other pending", placed, us)
	}
	if st := s.SpeculationStats(); st.Used != 1 {
		t.Fatalf("%+v", st)
	}
	other := s.spec.matched[1]
	placed, _ = schedule(t, s)
	if placed[other] != "a" {
		t.Fatalf("placed %v: want %s solved onto a", placed, other)
	}
	if st := s.SpeculationStats(); st.Used != 1 || st.Stale != 1 {
		t.Fatalf("%+v: want the speculation dropped for the solved batch", st)
	}
}

// Replicas spread over zones (maxSkew 1), decided 16 at a time on a
// sampled cluster, arrive one at a time: each is placed from the
// speculation, the nodes of the 16 ordered so that every prefix keeps the
// spread (orderForArrival; in the answer's own order a prefix put two
// more in one zone than in another).
func TestSpeculatedSpreadHoldsPodByPod(t *testing.T) {
	ctx := context.Background()
	s := newTest(t, Config{Speculate: true})
	for i := range 150 {
		addNodes(t, s, Node{Name: fmt.Sprintf("n%03d", i), Zone: fmt.Sprintf("z%d", i%3), CPU: 64000, Memory: 256000})
	}
	addPods(t, s, specReplica("web", 0, 100))
	schedule(t, s)
	n := 32
	if raceDetector {
		n = 16 // race_on_test.go
	}
	for i := 1; i <= n; i++ {
		if s.speculationDue() {
			s.specWidth = 16
			if err := s.speculate(ctx); err != nil {
				t.Fatal(err)
			}
		}
		addPods(t, s, specReplica("web", i, 100))
		if placed, _ := schedule(t, s); len(placed) != 1 {
			t.Fatalf("replica %d: placed %v", i, placed)
		}
	}
	if st := s.SpeculationStats(); st.Used != n || st.Stale != 0 {
		t.Fatalf("%+v: want the %d replicas placed from speculations", st, n)
	}
}

// A speculation of several pods whose selector is new to the state (its
// pods are gone) adds the selector once: each pod's rows are worked out
// with the pods before it, as arrivals one by one would be (writing them
// all from the state before the first failed on pod_match's key).
func TestWideSpeculationOfANewSelector(t *testing.T) {
	ctx := context.Background()
	s := newTest(t, Config{Speculate: true})
	addNodes(t, s, Node{Name: "a", Zone: "z", CPU: 8000, Memory: 8192}, Node{Name: "b", Zone: "z", CPU: 8000, Memory: 8192},
		Node{Name: "c", Zone: "z", CPU: 8000, Memory: 8192})
	addPods(t, s, Pod{Name: "other", CPU: 100, Memory: 100, Labels: map[string]string{"app": "solo"}, NodeName: "c", Phase: PhaseRunning})
	addPods(t, s, specReplica("solo", 0, 300))
	schedule(t, s)
	if err := s.DeletePod(ctx, "solo-0"); err != nil { // its selector leaves the index
		t.Fatal(err)
	}
	s.specWidth = 3
	if err := s.speculate(ctx); err != nil {
		t.Fatal(err)
	}
	if s.spec == nil || len(s.spec.likes) != 3 {
		t.Fatalf("speculation %+v, want one of three pods", s.spec)
	}
	for i := 1; i <= 2; i++ {
		addPods(t, s, specReplica("solo", i, 300))
		if placed, _ := schedule(t, s); len(placed) != 1 || placed[fmt.Sprintf("solo-%d", i)] == "c" {
			t.Fatalf("placed %v: want solo-%d on a node apart from the running app pod", placed, i)
		}
	}
	if st := s.SpeculationStats(); st.Used != 2 {
		t.Fatalf("%+v: want both replicas placed from the speculation", st)
	}
}
