package scheduler

import (
	"fmt"
	"testing"
)

// With more nodes holding victims than max(100, 2 × preemptors), a plan
// considers the victims of that many nodes: those where evicting makes
// room for a preemptor first, the fewest evictions first.
func TestVictimsOnCandidateNodes(t *testing.T) {
	st := NewState()
	var victims []*Pod
	add := func(node string, cpu int64, victim bool) {
		p := &Pod{Name: fmt.Sprintf("%s-%d", node, len(st.Pods)), NodeName: node, CPU: cpu, Memory: 10, Phase: PhaseRunning}
		st.Pods[p.Name] = p
		if victim {
			victims = append(victims, p)
		}
	}
	for i := 0; i < 150; i++ {
		n := fmt.Sprintf("n%03d", i)
		st.Nodes[n] = &Node{Name: n, CPU: 1000, Memory: 1000, Pods: 110}
		switch {
		case i < 30: // a high-priority pod keeps most of the node: no room even emptied
			add(n, 800, false)
			add(n, 100, true)
		case i < 60: // room once its three victims are gone
			for k := 0; k < 3; k++ {
				add(n, 300, true)
			}
		default: // room once its one victim is gone
			add(n, 900, true)
		}
	}
	pre := []*Pod{{Name: "p", CPU: 500, Memory: 10}}
	got := victimsOnCandidateNodes(st, victims, pre)
	nodes := map[string]int{}
	for _, v := range got {
		nodes[v.NodeName]++
	}
	if len(nodes) != 100 {
		t.Fatalf("%d nodes kept, want 100", len(nodes))
	}
	for i := 0; i < 30; i++ {
		if nodes[fmt.Sprintf("n%03d", i)] > 0 {
			t.Errorf("n%03d kept: no room for the preemptor even emptied, while roomy nodes were left out", i)
		}
	}
	for i := 60; i < 150; i++ {
		if nodes[fmt.Sprintf("n%03d", i)] != 1 {
			t.Errorf("n%03d (one eviction frees it) left out", i)
		}
	}
	// Few nodes: nothing is left out.
	few := victimsOnCandidateNodes(st, victims[:40], pre)
	if len(few) != 40 {
		t.Errorf("%d of 40 victims kept on fewer than 100 nodes", len(few))
	}
}
