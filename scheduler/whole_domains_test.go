package scheduler

import (
	"fmt"
	"testing"
)

// N5 on the Kueue #4474 stranding case with the jobs in separate batches:
// nodes of 2, 1 and 1 GPUs, job A (2 pods × 1 GPU) alone in the first
// batch, job B (1 pod × 2 GPUs) in the next. The 2-GPU node has the most
// CPU, so the balancing scores (S2–S5) put A there; N5 keeps it whole and
// B fits. With N5 disabled (the mutation) B is stranded. With and without
// a rack constraint on both jobs.
func TestWholeDomainsKeepTheLargeNodeForALaterGang(t *testing.T) {
	for _, topo := range []string{"", "rack"} {
		for _, on := range []bool{true, false} {
			t.Run(fmt.Sprintf("topology=%q/N5=%v", topo, on), func(t *testing.T) {
				cfg := Config{}
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
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("N5=%v", on), func(t *testing.T) {
			cfg := Config{}
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
