package scheduler

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// aheadScheduler returns a scheduler of speculations of four web replicas
// (zone spread, one per node) on twelve nodes in three zones, with web-a
// placed, a speculation of four decided and two of them (web-b, web-c)
// placed from it: the next speculate extends it.
func aheadScheduler(t *testing.T) (*Scheduler, func(i int) Pod) {
	t.Helper()
	ctx := context.Background()
	s := newTest(t, Config{Speculate: true})
	s.specLimit = 4
	for i := range 12 {
		addNodes(t, s, Node{Name: fmt.Sprintf("n%02d", i), Zone: fmt.Sprintf("z%d", i%3), CPU: int64(2000 + 500*(i%4)), Memory: 8192})
	}
	replica := func(i int) Pod {
		p := specReplica("web", i, 300)
		p.Name = fmt.Sprintf("web-%c", 'a'+i)
		return p
	}
	addPods(t, s, replica(0))
	s.specWidth = 4 // as learned on earlier pods (a first replica's arrival sets it to 1)
	schedule(t, s)
	if err := s.speculate(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		addPods(t, s, replica(i))
		if placed, _ := schedule(t, s); len(placed) != 1 {
			t.Fatalf("%s: placed %v", replica(i).Name, placed)
		}
	}
	if st := s.SpeculationStats(); st.Used != 2 || !s.extensionDue() {
		t.Fatalf("%+v, extension due %v: want two replicas placed from a speculation of four, and its extension due", st, s.extensionDue())
	}
	return s, replica
}

// assertConsistent fails unless the database holds the state's bindings
// and every bound pod's placement passes the check on the state.
func assertConsistent(t *testing.T, s *Scheduler) {
	t.Helper()
	var bound []*Pod
	want := map[string]string{}
	for name, p := range s.State().Pods {
		if p.NodeName != "" {
			bound = append(bound, p)
			want[name] = p.NodeName
		}
	}
	if got := boundInDB(t, s.DB()); !slices.Equal(got, bindingsOf(want)) {
		t.Fatalf("database holds %v bound, the state %v", got, bindingsOf(want))
	}
	if err := s.State().Check(bound); err != nil {
		t.Fatalf("the bound pods fail the check: %v", err)
	}
}

// Pods arriving while an extension solves, each the next one it expects,
// are placed on arrival on the nodes decided for them, and are in the
// state (arrived, bound) when it ends; the extension's new pods are
// placed from it as they arrive after.
func TestPlaceAheadDuringAnExtension(t *testing.T) {
	ctx := context.Background()
	s, replica := aheadScheduler(t)
	want := slices.Clone(s.spec.nodes[2:])
	var got []string
	s.whileExtending = func() {
		for i := 3; i <= 4; i++ {
			n, ok := s.PlaceAhead(replica(i))
			if !ok {
				t.Errorf("%s not placed ahead", replica(i).Name)
			}
			got = append(got, n)
		}
		if _, ok := s.PlaceAhead(replica(5)); ok {
			t.Errorf("%s placed ahead: the extension's own pods are not decided yet", replica(5).Name)
		}
	}
	if err := s.speculate(ctx); err != nil {
		t.Fatal(err)
	}
	s.whileExtending = nil
	if !slices.Equal(got, want) {
		t.Fatalf("placed ahead on %v, the speculation decided %v", got, want)
	}
	st := s.SpeculationStats()
	if st.Ahead != 2 || st.Solved != 2 || len(s.spec.likes) != 6 || s.spec.used != 2 {
		t.Fatalf("%+v, speculation %+v: want two pods placed ahead and the speculation extended to six", st, s.spec)
	}
	for i := 3; i <= 4; i++ {
		if p := s.State().Pods[replica(i).Name]; p == nil || p.NodeName != want[i-3] {
			t.Fatalf("%s in the state as %+v, want bound on %s", replica(i).Name, p, want[i-3])
		}
	}
	assertConsistent(t, s)
	// web-f was turned down (the app upserts it as pending) and the next
	// ones arrive: all from the extension.
	for i := 5; i <= 8; i++ {
		addPods(t, s, replica(i))
		if placed, _ := schedule(t, s); placed[replica(i).Name] == "" {
			t.Fatalf("%s not placed: %v", replica(i).Name, placed)
		}
	}
	if st := s.SpeculationStats(); st.Used != 2+4 || st.Stale != 0 {
		t.Fatalf("%+v: want web-f to web-i placed from the extension", st)
	}
	assertConsistent(t, s)
}

// The window of placement ahead closes at anything but the next expected
// pod: a pending pod of another kind, a write that interrupts (a node's,
// a deletion), a bound pod's update other than a binding of this
// scheduler reported.
func TestPlaceAheadWindowCloses(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		before func(t *testing.T, s *Scheduler, replica func(int) Pod)
		placed int // of web-d, web-e
	}{
		{"another pod pending", func(_ *testing.T, s *Scheduler, _ func(int) Pod) {
			s.PlaceAhead(Pod{Name: "other", CPU: 100, Memory: 100})
		}, 0},
		{"a write interrupts", func(_ *testing.T, s *Scheduler, _ func(int) Pod) { s.interrupt() }, 0},
		{"a binding of this scheduler reported", func(t *testing.T, s *Scheduler, replica func(int) Pod) {
			p := replica(1)
			p.NodeName = s.state.Pods[p.Name].NodeName
			if err := s.UpsertPod(context.Background(), p); err != nil { // taken by the window: no wait for the lock
				t.Error(err)
			}
		}, 2},
		{"another bound pod's update", func(_ *testing.T, s *Scheduler, _ func(int) Pod) {
			s.interruptSpeculation(&Pod{Name: "elsewhere", NodeName: "n01", CPU: 100, Memory: 100})
		}, 0},
		{"a pod the extension expects, pending", func(_ *testing.T, s *Scheduler, replica func(int) Pod) {
			p := replica(6)
			s.interruptSpeculation(&p) // upserted as pending: not placed ahead
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, replica := aheadScheduler(t)
			var got int
			s.whileExtending = func() {
				c.before(t, s, replica)
				for i := 3; i <= 4; i++ {
					if _, ok := s.PlaceAhead(replica(i)); ok {
						got++
					}
				}
			}
			if err := s.speculate(ctx); err != nil {
				t.Fatal(err)
			}
			if got != c.placed || s.SpeculationStats().Ahead != got {
				t.Fatalf("%d placed ahead (%+v), want %d", got, s.SpeculationStats(), c.placed)
			}
			assertConsistent(t, s)
			// The pods not placed ahead arrive as usual.
			for i := 3 + got; i <= 4; i++ {
				addPods(t, s, replica(i))
				if placed, _ := schedule(t, s); placed[replica(i).Name] == "" {
					t.Fatalf("%s not placed: %v", replica(i).Name, placed)
				}
			}
			assertConsistent(t, s)
		})
	}
}

// A pod arriving while the extension still writes and checks the pods it
// expects waits for that, a few milliseconds, and is then placed ahead,
// rather than waiting for the whole solve.
func TestPlaceAheadWaitsForTheWindow(t *testing.T) {
	s, replica := aheadScheduler(t)
	want := s.spec.nodes[2]
	type answer struct {
		node string
		ok   bool
	}
	got := make(chan answer, 1)
	s.beforeAheadReady = func() {
		go func() {
			n, ok := s.PlaceAhead(replica(3))
			got <- answer{n, ok}
		}()
		select {
		case a := <-got:
			t.Errorf("PlaceAhead answered %+v before the window was ready", a)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := s.speculate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a := <-got; !a.ok || a.node != want {
		t.Fatalf("PlaceAhead answered %+v, want %s", a, want)
	}
	if p := s.State().Pods[replica(3).Name]; p == nil || p.NodeName != want {
		t.Fatalf("%s in the state as %+v, want on %s", replica(3).Name, p, want)
	}
	assertConsistent(t, s)
}
