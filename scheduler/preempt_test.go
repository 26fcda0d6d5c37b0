package scheduler

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// PreemptPods on the paper's Fig. 3: pod1 is placed on node1 by evicting pod2 on node2 (cross-node), the
// victim stays in the state until the caller deletes it, and pod1 is assumed on node1.
func TestPreemptPodsCrossNode(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{})
	ctx := context.Background()
	addFig3(t, s)
	bs, ev, us, err := s.PreemptPods(ctx, []string{"pod1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 1 || bs[0] != (Binding{"pod1", "node1"}) || len(ev) != 1 || ev[0] != (Eviction{"pod2", "node2"}) || len(us) != 0 {
		t.Fatalf("bindings %v evictions %v unschedulable %v; want pod1 → node1 evicting pod2 on node2", bs, ev, us)
	}
	st := s.State()
	if st.Pods["pod2"] == nil || st.Pods["pod2"].NodeName != "node2" {
		t.Error("the victim left the state before the caller deleted it")
	}
	if st.Pods["pod1"].NodeName != "node1" {
		t.Errorf("pod1 assumed on %q", st.Pods["pod1"].NodeName)
	}
	if len(s.Pending()) != 0 {
		t.Errorf("pending %v", s.Pending())
	}
}

// Victims are only pods of lower priority than every preemptor; a preemptor that fits without evicting is
// left to the placement model; the evictions are minimal.
func TestPreemptPodsRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	shared := newTest(t, Config{}) // one scheduler (compiling the models costs seconds under -race), emptied per case
	newTest := func(t *testing.T, _ Config) *Scheduler {
		emptyState(t, shared)
		return shared
	}
	t.Run("equal or higher priority is never evicted", func(t *testing.T) {
		s := newTest(t, Config{})
		addNodes(t, s, Node{Name: "n1", CPU: 2000, Memory: 2000})
		addPods(t, s,
			Pod{Name: "same", CPU: 1000, Memory: 100, Priority: 5, NodeName: "n1", Phase: PhaseRunning},
			Pod{Name: "higher", CPU: 1000, Memory: 100, Priority: 9, NodeName: "n1", Phase: PhaseRunning},
			Pod{Name: "p", CPU: 1000, Memory: 100, Priority: 5})
		bs, ev, us, err := s.PreemptPods(ctx, []string{"p"})
		if err != nil {
			t.Fatal(err)
		}
		if len(bs) != 0 || len(ev) != 0 || len(us) != 1 || us[0].Pod != "p" {
			t.Fatalf("bindings %v evictions %v unschedulable %v", bs, ev, us)
		}
		if len(s.Pending()) != 1 {
			t.Errorf("pending %v", s.Pending())
		}
	})
	t.Run("a pod of a lower-priority preemptor is not a victim", func(t *testing.T) {
		// Preemptors of priority 10 and 3: the pod of priority 5 is not evicted (for either).
		s := newTest(t, Config{})
		addNodes(t, s, Node{Name: "n1", CPU: 1000, Memory: 1000}, Node{Name: "n2", CPU: 1000, Memory: 1000})
		addPods(t, s,
			Pod{Name: "mid", CPU: 1000, Memory: 100, Priority: 5, NodeName: "n1", Phase: PhaseRunning},
			Pod{Name: "low", CPU: 1000, Memory: 100, Priority: 1, NodeName: "n2", Phase: PhaseRunning},
			Pod{Name: "a", CPU: 1000, Memory: 100, Priority: 10},
			Pod{Name: "b", CPU: 1000, Memory: 100, Priority: 3})
		bs, ev, _, err := s.PreemptPods(ctx, []string{"a", "b"})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ev {
			if e.Pod == "mid" {
				t.Fatalf("evicted mid (priority 5) with a preemptor of priority 3 in the plan: %v %v", bs, ev)
			}
		}
		if len(ev) != 1 || ev[0].Pod != "low" || len(bs) != 1 || bs[0].Node != "n2" {
			t.Fatalf("bindings %v evictions %v; want one preemptor on n2 evicting low", bs, ev)
		}
	})
	t.Run("fits without eviction", func(t *testing.T) {
		s := newTest(t, Config{})
		addNodes(t, s, Node{Name: "n1", CPU: 2000, Memory: 2000}, Node{Name: "n2", CPU: 2000, Memory: 2000})
		addPods(t, s,
			Pod{Name: "v", CPU: 2000, Memory: 100, Priority: 1, NodeName: "n1", Phase: PhaseRunning},
			Pod{Name: "p", CPU: 1000, Memory: 100, Priority: 10})
		bs, ev, us, err := s.PreemptPods(ctx, []string{"p"})
		if err != nil {
			t.Fatal(err)
		}
		if len(bs) != 0 || len(ev) != 0 || len(us) != 0 {
			t.Fatalf("bindings %v evictions %v unschedulable %v; want p left pending", bs, ev, us)
		}
		if got := s.Pending(); len(got) != 1 || got[0] != "p" {
			t.Fatalf("pending %v", got)
		}
	})
	t.Run("minimal evictions", func(t *testing.T) {
		// 4 small victims of 500m on a 2-CPU node; the preemptor needs 1 CPU: two evictions, not more.
		s := newTest(t, Config{})
		addNodes(t, s, Node{Name: "n1", CPU: 2000, Memory: 2000})
		for _, n := range []string{"v1", "v2", "v3", "v4"} {
			addPods(t, s, Pod{Name: n, CPU: 500, Memory: 100, Priority: 1, NodeName: "n1", Phase: PhaseRunning})
		}
		addPods(t, s, Pod{Name: "p", CPU: 1000, Memory: 100, Priority: 10})
		bs, ev, us, err := s.PreemptPods(ctx, []string{"p"})
		if err != nil {
			t.Fatal(err)
		}
		if len(bs) != 1 || len(ev) != 2 || len(us) != 0 {
			t.Fatalf("bindings %v evictions %v unschedulable %v; want 2 evictions", bs, ev, us)
		}
	})
}

// A pod with preemptionPolicy Never has no pod evicted for it, by PreemptPods or Preempt; beside it, a pod
// that may preempt still does.
func TestPreemptionPolicyNever(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, call := range []string{"PreemptPods", "Preempt"} {
		t.Run(call, func(t *testing.T) {
			s := newTest(t, Config{})
			addNodes(t, s, Node{Name: "n1", CPU: 1000, Memory: 2000}, Node{Name: "n2", CPU: 1000, Memory: 2000})
			addPods(t, s,
				Pod{Name: "low1", CPU: 1000, Memory: 100, Priority: 1, NodeName: "n1", Phase: PhaseRunning},
				Pod{Name: "low2", CPU: 1000, Memory: 100, Priority: 1, NodeName: "n2", Phase: PhaseRunning},
				Pod{Name: "never", CPU: 1000, Memory: 100, Priority: 9, NeverPreempts: true},
				Pod{Name: "may", CPU: 1000, Memory: 100, Priority: 5})
			var bs []Binding
			var ev []Eviction
			var err error
			if call == "Preempt" {
				bs, ev, _, err = s.Preempt(ctx)
			} else {
				bs, ev, _, err = s.PreemptPods(ctx, []string{"never", "may"})
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ev) != 1 || len(bs) != 1 || bs[0].Pod != "may" {
				t.Fatalf("bindings %v evictions %v: want one eviction, for may only", bs, ev)
			}
			if p := s.State().Pods["never"]; p.NodeName != "" {
				t.Errorf("never placed on %s", p.NodeName)
			}
		})
	}
}

// A plan whose hard policies are node-local is solved over the nodes of its
// candidate victims only; with a pod of required anti-affinity running, a
// victim's eviction may free another node of its zone, and the plan keeps
// every node.
func TestPreemptionModelHasTheVictimsNodes(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{})
	ctx := context.Background()
	var nodes []Node
	for i := 0; i < 20; i++ {
		nodes = append(nodes, Node{Name: fmt.Sprintf("n%02d", i), CPU: 4000, Memory: 4000, Zone: "z0"})
	}
	addNodes(t, s, nodes...)
	for i, n := range nodes { // every node full: high pods on 17, low pods on 3
		prio := int64(10)
		if i%7 == 0 {
			prio = 1
		}
		addPods(t, s, Pod{Name: fmt.Sprintf("run-%02d", i), CPU: 4000, Memory: 100, Priority: prio, NodeName: n.Name, Phase: PhaseRunning})
	}
	addPods(t, s, Pod{Name: "p", CPU: 2000, Memory: 100, Priority: 5})
	bs, ev, us, err := s.PreemptPods(ctx, []string{"p"})
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 1 || len(ev) != 1 || len(us) != 0 || ev[0].Node != bs[0].Node || !strings.HasPrefix(ev[0].Pod, "run-") {
		t.Fatalf("bindings %v evictions %v unschedulable %v; want p on a low pod's node, evicting it", bs, ev, us)
	}
	if got := s.LastStats().Rows["node_free"]; got != 3 {
		t.Errorf("the plan's model read node_free for %d nodes, want the 3 holding victims", got)
	}
	// A running pod with required anti-affinity: the plan considers every node.
	addPods(t, s, Pod{Name: "q", CPU: 2000, Memory: 100, Priority: 5})
	addNodes(t, s, Node{Name: "extra", CPU: 4000, Memory: 4000, Zone: "z1"})
	addPods(t, s, Pod{Name: "anti", CPU: 100, Memory: 100, Priority: 10, NodeName: "extra", Phase: PhaseRunning, Labels: map[string]string{"a": "b"},
		Affinity: []PodAffinityTerm{{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"x": "y"}), TopologyKey: LabelZone}}})
	if _, _, _, err := s.PreemptPods(ctx, []string{"q"}); err != nil {
		t.Fatal(err)
	}
	if got := s.LastStats().Rows["node_free"]; got != len(nodes)+1 {
		t.Errorf("with a required anti-affinity term running, the plan's model read node_free for %d nodes, want all %d", got, len(nodes)+1)
	}
}

// A plan's passes change the state's pods through an overlay (no copy of
// the state): after PreemptPods every pod but the bound preemptors is the
// state's same pod, unchanged, the victims included, and nothing is added
// or lost. The case has a preemptor placed by evicting, one that fits
// without (left pending) and victims kept back by the minimal-evictions
// pass. Leaving the overlay in place (no restore) fails it.
func TestPreemptPodsLeavesTheStateAsItWas(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{})
	ctx := context.Background()
	addNodes(t, s, Node{Name: "n1", CPU: 2000, Memory: 2000}, Node{Name: "n2", CPU: 2000, Memory: 2000}, Node{Name: "n3", CPU: 2000, Memory: 2000})
	addPods(t, s,
		Pod{Name: "low-1a", CPU: 1000, Memory: 100, Priority: 1, NodeName: "n1", Phase: PhaseRunning},
		Pod{Name: "low-1b", CPU: 1000, Memory: 100, Priority: 1, NodeName: "n1", Phase: PhaseRunning},
		Pod{Name: "low-2a", CPU: 1500, Memory: 100, Priority: 1, NodeName: "n2", Phase: PhaseRunning},
		Pod{Name: "high-3", CPU: 1500, Memory: 100, Priority: 9, NodeName: "n3", Phase: PhaseRunning},
		Pod{Name: "big", CPU: 1000, Memory: 100, Priority: 5},  // needs one eviction
		Pod{Name: "small", CPU: 500, Memory: 100, Priority: 5}) // fits n2 or n3 as they are
	before := map[string]*Pod{}
	values := map[string]Pod{}
	for name, p := range s.state.Pods {
		before[name], values[name] = p, *p
	}
	bs, ev, _, err := s.PreemptPods(ctx, []string{"big", "small"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) != 1 || len(bs) != 1 || bs[0].Pod != "big" {
		t.Fatalf("bindings %v evictions %v; want big bound evicting one pod, small left pending", bs, ev)
	}
	if len(s.state.Pods) != len(before) {
		t.Fatalf("%d pods in the state after the plan, %d before", len(s.state.Pods), len(before))
	}
	for name, p := range before {
		got := s.state.Pods[name]
		if name == "big" {
			if got == nil || got.NodeName != bs[0].Node {
				t.Errorf("big not assumed on %s: %+v", bs[0].Node, got)
			}
			continue
		}
		if got != p || !reflect.DeepEqual(*got, values[name]) {
			t.Errorf("pod %s changed by the plan: %+v, was %+v", name, got, values[name])
		}
	}
}

// WithPolicyStateWithout shows f the state without the named pods (a name
// not in the state is ignored) and puts them back after it: the same pods,
// unchanged.
func TestWithPolicyStateWithoutPutsThePodsBack(t *testing.T) {
	t.Parallel()
	s := newTest(t, Config{})
	addNodes(t, s, Node{Name: "n1", CPU: 2000, Memory: 2000})
	addPods(t, s,
		Pod{Name: "a", CPU: 1000, Memory: 100, NodeName: "n1", Phase: PhaseRunning},
		Pod{Name: "b", CPU: 1000, Memory: 100, NodeName: "n1", Phase: PhaseRunning},
		Pod{Name: "p", CPU: 1000, Memory: 100})
	before := map[string]*Pod{}
	for name, p := range s.state.Pods {
		before[name] = p
	}
	var sawA, sawB, sawP, fits bool
	s.WithPolicyStateWithout([]string{"a", "nothing"}, func(st *State) {
		sawA, sawB, sawP = st.Pods["a"] != nil, st.Pods["b"] != nil, st.Pods["p"] != nil
		fits = len(st.FeasibleNodes(st.Pods["p"])) == 1
	})
	if sawA || !sawB || !sawP {
		t.Fatalf("f saw a %v, b %v, p %v; want b and p only", sawA, sawB, sawP)
	}
	if !fits {
		t.Error("p does not fit n1 with a left out")
	}
	if len(s.state.Pods) != len(before) {
		t.Fatalf("%d pods after, %d before", len(s.state.Pods), len(before))
	}
	for name, p := range before {
		if s.state.Pods[name] != p {
			t.Errorf("pod %s not put back", name)
		}
	}
}
