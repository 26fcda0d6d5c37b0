package scheduler

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"testing"
)

// nodeFree is node_free restated in Go: for each node of the arc, its
// allocatable less the requests and limits (and one pod each) of the pods
// holding it: bound, pending or running, and not decided by the model.
func nodeFree(nodes []Node, pods []Pod, a arc, decided map[string]bool) map[string][6]int64 {
	onArc := map[string]bool{}
	for _, n := range a.extra {
		onArc[n] = true
	}
	free := map[string][6]int64{}
	for _, n := range nodes {
		if a.holds(sampleKey(n.Name)) || onArc[n.Name] {
			free[n.Name] = [6]int64{n.CPU, n.Memory, n.Storage, n.Pods, n.CPU, n.Memory}
		}
	}
	for _, p := range pods {
		f, ok := free[p.NodeName]
		if !ok || decided[p.Name] || p.Phase != PhasePending && p.Phase != PhaseRunning {
			continue
		}
		free[p.NodeName] = [6]int64{f[0] - p.CPU, f[1] - p.Memory, f[2] - p.Storage, f[3] - 1, f[4] - p.CPULimit, f[5] - p.MemoryLimit}
	}
	return free
}

// TestNodeFreeViewAgreesWithGo: node_free, evaluated by each state database
// over random clusters (pods bound to nodes on and off the arc, pending,
// running or finished, some of them victims the model decides; arcs that
// wrap past the ring's end and nodes added outside the arc), holds the
// nodes of the arc with what the Go restatement leaves of each, in ring
// order.
func TestNodeFreeViewAgreesWithGo(t *testing.T) {
	t.Parallel()
	phases := []string{PhasePending, PhaseRunning, PhaseRunning, PhaseSucceeded, PhaseFailed}
	for _, d := range raceDBs(stateDBs()) {
		t.Run(d.name, func(t *testing.T) {
			s := newOn(t, d, Config{})
			ctx := context.Background()
			rng := rand.New(rand.NewSource(11))
			for trial := 0; trial < 25; trial++ {
				emptyState(t, s)
				var nodes []Node
				for i := 0; i < 1+rng.Intn(12); i++ {
					nodes = append(nodes, Node{Name: fmt.Sprintf("t%d-n%d", trial, i), CPU: 1000 + rng.Int63n(16000),
						Memory: 1000 + rng.Int63n(32000), Storage: rng.Int63n(100000), Pods: 10 + rng.Int63n(100)})
				}
				addNodes(t, s, nodes...)
				var pods, batch, victims []Pod
				decided := map[string]bool{}
				for i := 0; i < rng.Intn(40); i++ {
					p := Pod{Name: fmt.Sprintf("t%d-p%d", trial, i), CPU: rng.Int63n(2000), Memory: rng.Int63n(4000),
						Storage: rng.Int63n(1000), CPULimit: rng.Int63n(3000), MemoryLimit: rng.Int63n(6000), Phase: phases[rng.Intn(len(phases))]}
					if rng.Intn(5) > 0 {
						p.NodeName = nodes[rng.Intn(len(nodes))].Name
					} else {
						p.Phase = PhasePending
					}
					pods = append(pods, p)
					switch {
					case p.NodeName == "":
						batch = append(batch, p)
						decided[p.Name] = true
					case p.Phase == PhaseRunning && rng.Intn(4) == 0:
						batch, victims = append(batch, p), append(victims, p)
						decided[p.Name] = true
					}
				}
				addPods(t, s, pods...)
				a := arc{lo: rng.Int63n(sampleRing), hi: rng.Int63n(sampleRing)}
				if trial%5 == 0 {
					a = wholeRing
				}
				for _, n := range nodes {
					if rng.Intn(6) == 0 && !a.holds(sampleKey(n.Name)) {
						a.extra = append(a.extra, n.Name)
					}
				}
				if err := s.exec(ctx, a.write()); err != nil {
					t.Fatal(err)
				}
				if err := s.exec(ctx, loadModelPods(ptrs(batch), ptrs(victims), nil)); err != nil {
					t.Fatal(err)
				}
				got := map[string][6]int64{}
				rows, err := s.DB().Query("select node_name, cpu_free, memory_free, storage_free, pods_free, cpu_limit_free, memory_limit_free from node_free")
				if err != nil {
					t.Fatal(err)
				}
				prev := ""
				for rows.Next() {
					var n string
					var f [6]int64
					if err := rows.Scan(&n, &f[0], &f[1], &f[2], &f[3], &f[4], &f[5]); err != nil {
						t.Fatal(err)
					}
					if _, dup := got[n]; dup {
						t.Errorf("trial %d: node_free holds %s twice", trial, n)
					}
					// In ring order: the model's nodes, and the search's first choices, follow it.
					if prev != "" && sampleKey(prev) > sampleKey(n) {
						t.Errorf("trial %d: node_free lists %s (key %d) after %s (key %d)", trial, n, sampleKey(n), prev, sampleKey(prev))
					}
					got[n], prev = f, n
				}
				if err := rows.Close(); err != nil {
					t.Fatal(err)
				}
				if want := nodeFree(nodes, pods, a, decided); !reflect.DeepEqual(got, want) {
					t.Errorf("trial %d (arc %d..%d, extra %v):\nnode_free %v\nwant      %v", trial, a.lo, a.hi, a.extra, got, want)
				}
				if err := s.exec(ctx, loadModelPods(nil, nil, nil)); err != nil { // pending_pod refers to the nodes
					t.Fatal(err)
				}
			}
		})
	}
}

func ptrs(ps []Pod) []*Pod {
	out := make([]*Pod, len(ps))
	for i := range ps {
		out[i] = &ps[i]
	}
	return out
}
