package scheduler

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"testing"
	"time"
)

// N5 on the Kueue #4474 stranding case with the jobs in separate batches:
// nodes of 2, 1 and 1 GPUs, job A (2 pods × 1 GPU) alone in the first
// batch, job B (1 pod × 2 GPUs) in the next. The 2-GPU node has the most
// CPU, so the balancing scores (S2–S5) put A there; N5 keeps it whole and
// B fits. With N5 disabled (the mutation) B is stranded. With and without
// a rack constraint on both jobs.
func TestWholeDomainsKeepTheLargeNodeForALaterGang(t *testing.T) {
	t.Parallel()
	for _, topo := range []string{"", "rack"} {
		for _, on := range []bool{true, false} {
			t.Run(fmt.Sprintf("topology=%q/N5=%v", topo, on), func(t *testing.T) {
				// The assertions need the best-scored placement: the
				// solver waits up to 1 s for a better one, not 5 ms (under
				// -race on a loaded machine it kept the first one).
				cfg := Config{ImprovementTimeout: time.Second}
				if !on {
					cfg.DisabledPolicies = []string{"N5"}
				}
				s := newTest(t, cfg)
				big := gpuNode("big", "r1", 2)
				big.CPU = 32000
				small1, small2 := gpuNode("small-1", "r1", 1), gpuNode("small-2", "r1", 1)
				small1.CPU, small2.CPU = 16000, 16000
				addNodes(t, s, big, small1, small2)
				addGroups(t, s, PodGroup{Name: "A", MinCount: 2, TopologyKey: topo}, PodGroup{Name: "B", MinCount: 1, TopologyKey: topo})
				addPods(t, s, gangPod("a-0", "A", 1), gangPod("a-1", "A", 1))
				placed, us := schedule(t, s)
				if len(placed) != 2 {
					t.Fatalf("A: placed %v, unschedulable %v", placed, us)
				}
				onBig := placed["a-0"] == "big" || placed["a-1"] == "big"
				addPods(t, s, gangPod("b-0", "B", 2))
				placedB, _ := schedule(t, s)
				t.Logf("A on %v, B on %v", placed, placedB)
				if on && (onBig || placedB["b-0"] != "big") {
					t.Errorf("N5 on: A on %v, B on %v: want A on the 1-GPU nodes and B on big", placed, placedB)
				}
				if !on && (!onBig || len(placedB) != 0) {
					t.Errorf("N5 off: A on %v, B on %v: the balancing scores should put A on big and strand B (the case no longer tests N5)", placed, placedB)
				}
			})
		}
	}
}

// N5 at the rack level: a small gang without topology (2 pods × 2 GPUs)
// goes to the partly used rack r1 (a bound pod holds all of r1-a's 8
// GPUs), on r1-b, not to the empty rack r2, whose nodes have the most CPU
// (so the balancing scores prefer them); r2 stays whole for the next
// batch's gang of 4 × 4 GPUs that must be in one rack and needs all of
// one. r1-b and r2's nodes are equally empty: only the domain term tells
// them apart. With N5 disabled the small gang takes r2 and the rack gang
// is stranded.
func TestWholeDomainsKeepAWholeRackForATopologyGang(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("N5=%v", on), func(t *testing.T) {
			cfg := Config{ImprovementTimeout: time.Second} // the best-scored placement, as above
			if !on {
				cfg.DisabledPolicies = []string{"N5"}
			}
			s := newTest(t, cfg)
			r1a, r1b, r2a, r2b := gpuNode("r1-a", "r1", 8), gpuNode("r1-b", "r1", 8), gpuNode("r2-a", "r2", 8), gpuNode("r2-b", "r2", 8)
			r1a.CPU, r1b.CPU = 16000, 16000
			r2a.CPU, r2b.CPU = 20000, 20000
			addNodes(t, s, r1a, r1b, r2a, r2b)
			// "rack" is known: its pods come later.
			addGroups(t, s, PodGroup{Name: "small", MinCount: 2}, PodGroup{Name: "rack", MinCount: 4, TopologyKey: "rack"})
			running := gangPod("running", "", 8)
			running.NodeName, running.Phase = "r1-a", PhaseRunning
			addPods(t, s, running, gangPod("small-0", "small", 2), gangPod("small-1", "small", 2))
			placed, us := schedule(t, s)
			if len(placed) != 2 {
				t.Fatalf("small: placed %v, unschedulable %v", placed, us)
			}
			inR2 := false
			for _, n := range placed {
				inR2 = inR2 || n == "r2-a" || n == "r2-b"
			}
			var rack []Pod
			for i := 0; i < 4; i++ {
				rack = append(rack, gangPod(fmt.Sprintf("rack-%d", i), "rack", 4))
			}
			addPods(t, s, rack...)
			placedRack, _ := schedule(t, s)
			t.Logf("small on %v, rack on %v", placed, placedRack)
			if on && (inR2 || len(placedRack) != 4) {
				t.Errorf("N5 on: small on %v, rack gang on %v: want small in r1 and the rack gang placed in r2", placed, placedRack)
			}
			if !on && (!inR2 || len(placedRack) != 0) {
				t.Errorf("N5 off: small on %v, rack gang on %v: the balancing scores should put small in r2 and strand the rack gang (the case no longer tests N5)", placed, placedRack)
			}
		})
	}
}

// wholeDomainCost is N5's per-node cost restated in Go (whole_domain_cost,
// every node sampled): for each scalar resource a pod of a PodGroup in
// batch requests, of which some node has some, the node's room (what its
// bound pods leave, at least 0) in percent of the largest node's
// allocatable, plus for each topology key of a known PodGroup that the
// node carries the room of its domain (the allocatable of its nodes that
// list the resource minus what the bound pods on its nodes request, at
// least 0) in percent of the largest domain's allocatable (integer
// percents, as SQL divides).
func wholeDomainCost(nodes []Node, pods []Pod, groups []PodGroup, batch map[string]bool) map[string]int64 {
	resources := map[string]bool{}
	for _, p := range pods {
		if batch[p.Name] && p.PodGroup != "" {
			for r, v := range p.Resources {
				if v > 0 {
					resources[r] = true
				}
			}
		}
	}
	keys := map[string]bool{}
	if len(resources) > 0 {
		for _, g := range groups {
			if g.TopologyKey != "" {
				keys[g.TopologyKey] = true
			}
		}
	}
	used := map[string]map[string]int64{}
	for _, p := range pods {
		if p.NodeName != "" && !batch[p.Name] && live(&p) {
			if used[p.NodeName] == nil {
				used[p.NodeName] = map[string]int64{}
			}
			for r, v := range p.Resources {
				used[p.NodeName][r] += v
			}
		}
	}
	free := func(n Node, r string) int64 { return max(n.Resources[r]-used[n.Name][r], 0) }
	cost := map[string]int64{}
	for r := range resources {
		var most int64
		for _, n := range nodes {
			most = max(most, n.Resources[r])
		}
		if most == 0 {
			continue
		}
		for _, n := range nodes {
			cost[n.Name] += free(n, r) * 100 / most
		}
		for k := range keys {
			alloc, room := map[string]int64{}, map[string]int64{}
			for _, n := range nodes {
				if v, ok := n.Labels[k]; ok {
					if _, listed := n.Resources[r]; listed {
						alloc[v] += n.Resources[r]
					}
					room[v] -= used[n.Name][r]
				}
			}
			for v := range room {
				room[v] = max(room[v]+alloc[v], 0)
			}
			var largest int64
			for _, a := range alloc {
				largest = max(largest, a)
			}
			if largest == 0 {
				continue
			}
			for _, n := range nodes {
				if v, ok := n.Labels[k]; ok {
					if _, in := alloc[v]; in {
						cost[n.Name] += room[v] * 100 / largest
					}
				}
			}
		}
	}
	return cost
}

// TestWholeDomainCostAgreesWithGo: the per-node cost N5 reads, evaluated by
// each state database over random clusters (two topology keys, nodes
// without a label or without GPUs, bound pods filling nodes unevenly and
// some past their GPUs, pods of PodGroups and plain pods in the batch,
// GPUs and a second resource), is the Go restatement's.
func TestWholeDomainCostAgreesWithGo(t *testing.T) {
	t.Parallel()
	const other = "example.com/fpga"
	for _, d := range raceDBs(stateDBs()) {
		t.Run(d.name, func(t *testing.T) {
			s := newOn(t, d, Config{})
			ctx := context.Background()
			rng := rand.New(rand.NewSource(11))
			var groups []PodGroup
			for trial := 0; trial < 30; trial++ {
				emptyState(t, s)
				for _, g := range groups { // the keys are the known groups'
					if err := s.DeletePodGroup(ctx, g.Name); err != nil {
						t.Fatal(err)
					}
				}
				groups = nil
				var nodes []Node
				for i := 0; i < 2+rng.Intn(10); i++ {
					n := Node{Name: fmt.Sprintf("t%d-n%d", trial, i), CPU: 64000, Memory: 64000, Labels: map[string]string{},
						Resources: map[string]int64{}}
					if rng.Intn(5) > 0 {
						n.Resources[gpu] = []int64{1, 2, 4, 8}[rng.Intn(4)]
					}
					if rng.Intn(3) == 0 {
						n.Resources[other] = 1 + rng.Int63n(3)
					}
					if rng.Intn(4) > 0 {
						n.Labels["rack"] = fmt.Sprintf("r%d", rng.Intn(3))
					}
					if rng.Intn(2) == 0 {
						n.Labels["zone"] = fmt.Sprintf("z%d", rng.Intn(2))
					}
					nodes = append(nodes, n)
				}
				addNodes(t, s, nodes...)
				for g := 0; g < 3; g++ {
					pg := PodGroup{Name: fmt.Sprintf("t%d-g%d", trial, g), MinCount: 1}
					switch rng.Intn(3) {
					case 1:
						pg.TopologyKey = "rack"
					case 2:
						pg.TopologyKey = "zone"
					}
					groups = append(groups, pg)
				}
				addGroups(t, s, groups...)
				var pods []Pod
				batch := map[string]bool{}
				var batchPods []*Pod
				for i := 0; i < 4+rng.Intn(12); i++ {
					p := Pod{Name: fmt.Sprintf("t%d-p%d", trial, i), CPU: 100, Memory: 100, Resources: map[string]int64{}}
					if rng.Intn(3) > 0 {
						p.Resources[gpu] = 1 + rng.Int63n(4)
					}
					if rng.Intn(4) == 0 {
						p.Resources[other] = 1
					}
					if rng.Intn(2) == 0 {
						p.NodeName, p.Phase = nodes[rng.Intn(len(nodes))].Name, PhaseRunning
					} else {
						p.Phase = PhasePending
						if rng.Intn(3) > 0 {
							p.PodGroup = groups[rng.Intn(len(groups))].Name
						}
					}
					pods = append(pods, p)
				}
				addPods(t, s, pods...)
				for i := range pods {
					if pods[i].NodeName == "" {
						batch[pods[i].Name] = true
						batchPods = append(batchPods, &pods[i])
					}
				}
				if err := s.exec(ctx, wholeRing.write()); err != nil {
					t.Fatal(err)
				}
				if err := s.exec(ctx, loadModelPods(batchPods, nil, nil)); err != nil {
					t.Fatal(err)
				}
				want := wholeDomainCost(nodes, pods, groups, batch)
				got := map[string]int64{}
				rows, err := s.DB().Query("select node_name, cost from whole_domain_cost")
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var n string
					var c sql.NullInt64 // NULL: a resource no pod of a PodGroup requests, skipped by the sum
					if err := rows.Scan(&n, &c); err != nil {
						t.Fatal(err)
					}
					got[n] += c.Int64 // a row per resource and domain
				}
				rows.Close()
				for _, n := range nodes {
					if got[n.Name] != want[n.Name] {
						t.Errorf("trial %d: node %s (%v, %v): whole_domain_cost %d, want %d", trial, n.Name, n.Labels, n.Resources, got[n.Name], want[n.Name])
					}
				}
			}
		})
	}
}
