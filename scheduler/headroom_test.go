package scheduler

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// roomiest is N4's choice restated in Go: of the nodes with CPU and memory,
// the one with the most of both free in percent of the largest node's
// allocatable (integer percents, as SQL divides), and of a tie the first on
// the sampling ring.
func roomiest(nodes []Node, pods []Pod) string {
	var maxCPU, maxMemory int64
	for _, n := range nodes {
		maxCPU, maxMemory = max(maxCPU, n.CPU), max(maxMemory, n.Memory)
	}
	used := map[string][2]int64{}
	for _, p := range pods {
		if p.NodeName != "" {
			u := used[p.NodeName]
			used[p.NodeName] = [2]int64{u[0] + p.CPU, u[1] + p.Memory}
		}
	}
	best, bestRoom, bestKey := "", int64(0), int64(0)
	for _, n := range nodes {
		if n.CPU <= 0 || n.Memory <= 0 {
			continue
		}
		u := used[n.Name]
		room := (n.CPU-u[0])*100/maxCPU + (n.Memory-u[1])*100/maxMemory
		key := sampleKey(n.Name)
		if best == "" || room > bestRoom || room == bestRoom && key < bestKey {
			best, bestRoom, bestKey = n.Name, room, key
		}
	}
	return best
}

// TestRoomiestNodeViewAgreesWithGo: the view N4 reads, evaluated by each
// state database over random clusters (nodes of several sizes, one without
// memory, running pods filling them unevenly, some nodes full or far
// overcommitted), names the node the Go restatement picks.
func TestRoomiestNodeViewAgreesWithGo(t *testing.T) {
	t.Parallel()
	for _, d := range raceDBs(stateDBs()) {
		t.Run(d.name, func(t *testing.T) {
			s := newOn(t, d, Config{})
			ctx := context.Background()
			rng := rand.New(rand.NewSource(7))
			for trial := 0; trial < 30; trial++ {
				emptyState(t, s)
				var nodes []Node
				for i := 0; i < 2+rng.Intn(8); i++ {
					n := Node{Name: fmt.Sprintf("t%d-n%d", trial, i), CPU: []int64{2000, 4000, 16000}[rng.Intn(3)], Memory: []int64{4000, 8000, 32000}[rng.Intn(3)]}
					if rng.Intn(10) == 0 {
						n.Memory = 0
					}
					nodes = append(nodes, n)
				}
				addNodes(t, s, nodes...)
				var pods []Pod
				for i := 0; i < rng.Intn(20); i++ {
					n := nodes[rng.Intn(len(nodes))]
					pods = append(pods, Pod{Name: fmt.Sprintf("t%d-p%d", trial, i), CPU: rng.Int63n(3000), Memory: rng.Int63n(6000), NodeName: n.Name, Phase: PhaseRunning})
				}
				if trial%5 == 0 { // a node far overcommitted (its allocatable shrank): its room is very negative
					pods = append(pods, Pod{Name: fmt.Sprintf("t%d-huge", trial), CPU: 900000, Memory: 9000000, NodeName: nodes[0].Name, Phase: PhaseRunning})
				}
				addPods(t, s, pods...)
				if err := s.exec(ctx, wholeRing.write()); err != nil {
					t.Fatal(err)
				}
				want := roomiest(nodes, pods)
				got := queryStrings(t, s.DB(), "select node_name from roomiest_node")
				if !slices.Equal(got, []string{want}) {
					t.Errorf("trial %d: roomiest_node %v, want [%s]", trial, got, want)
				}
			}
		})
	}
}

// N4 keeps the roomiest node for a large pod: three small pods leave it
// empty (without N4 the balancing policies put one on each node), and the
// next batch's large pod, which fits nowhere else, takes it.
func TestHeadroomKeepsTheRoomiestNode(t *testing.T) {
	t.Parallel()
	nodes := []Node{{Name: "n1", CPU: 4000, Memory: 4000}, {Name: "n2", CPU: 4000, Memory: 4000}, {Name: "n3", CPU: 4000, Memory: 4000}}
	kept := roomiest(nodes, nil)
	for _, on := range []bool{true, false} {
		cfg := Config{}
		if !on {
			cfg.DisabledPolicies = []string{"N4"}
		}
		s := newTest(t, cfg)
		addNodes(t, s, nodes...)
		addPods(t, s, Pod{Name: "a", CPU: 1000, Memory: 1000}, Pod{Name: "b", CPU: 1000, Memory: 1000}, Pod{Name: "c", CPU: 1000, Memory: 1000})
		placed, us := schedule(t, s)
		if len(placed) != 3 || len(us) != 0 {
			t.Fatalf("N4 %v: placed %v, unschedulable %v", on, placed, us)
		}
		onKept := 0
		for _, n := range placed {
			if n == kept {
				onKept++
			}
		}
		if on && onKept != 0 {
			t.Errorf("N4 on: %v puts pods on %s, the node it keeps", placed, kept)
		}
		if !on && onKept != 1 {
			t.Errorf("N4 off: %v, want one pod per node", placed)
		}
		if !on {
			continue
		}
		addPods(t, s, Pod{Name: "large", CPU: 3500, Memory: 3500})
		placed, us = schedule(t, s)
		if placed["large"] != kept {
			t.Errorf("the large pod placed %v (unschedulable %v), want on %s", placed, us, kept)
		}
	}
}

// On nodes of mixed sizes room counts in absolute terms: a large node half
// full has more room for a large pod than an empty small one, and N4 keeps
// it (in percent of its own allocatable the small node would rank first).
func TestRoomiestNodeOfMixedSizesIsTheLargestRoom(t *testing.T) {
	t.Parallel()
	for _, d := range raceDBs(stateDBs()) {
		t.Run(d.name, func(t *testing.T) {
			s := newOn(t, d, Config{})
			addNodes(t, s, Node{Name: "small", CPU: 2000, Memory: 4000}, Node{Name: "large", CPU: 16000, Memory: 32000})
			addPods(t, s, Pod{Name: "half", CPU: 8000, Memory: 16000, NodeName: "large", Phase: PhaseRunning})
			if err := s.exec(context.Background(), wholeRing.write()); err != nil {
				t.Fatal(err)
			}
			if got := queryStrings(t, s.DB(), "select node_name from roomiest_node"); !slices.Equal(got, []string{"large"}) {
				t.Errorf("roomiest_node %v, want [large]", got)
			}
		})
	}
}
