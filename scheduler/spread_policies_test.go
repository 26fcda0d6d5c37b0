package scheduler

import (
	"testing"
)

// TestSpreadConstraintReadsItsOwnInclusionPolicies: each DoNotSchedule
// constraint of a pod counts on the nodes its own nodeAffinityPolicy and
// nodeTaintsPolicy let in (matchNodeInclusionPolicies is per constraint),
// not those of the pod's other constraints. The pod's zone constraint
// ignores the policy at hand, so the bound replica on the node the policy
// would leave out (a1) counts in zone za: on a2 the pod's skew is 2, and
// zb has no room, so the pod waits. A model that let the hostname
// constraint's Honor narrow the zone constraint's nodes saw za empty,
// placed the pod on a2, and the Go check rejected the batch (e2e
// differential seeds 71, 362 and 828).
func TestSpreadConstraintReadsItsOwnInclusionPolicies(t *testing.T) {
	t.Parallel()
	x := map[string]string{"app": "x"}
	cases := []struct {
		name       string
		a1         func(*Node) // what the hostname constraint's Honor leaves out
		zone, host SpreadConstraint
		pod        func(*Pod)
	}{
		{
			name: "nodeTaintsPolicy Honor on one constraint, Ignore on the other",
			a1:   func(n *Node) { n.Taints = []Taint{{Key: "dedicated", Value: "db", Effect: "NoSchedule"}} },
			zone: SpreadConstraint{TopologyKey: LabelZone, MaxSkew: 1, Hard: true, Selector: SelectLabels(x)},
			host: SpreadConstraint{TopologyKey: LabelHostname, MaxSkew: 1, Hard: true, Selector: SelectLabels(x), NodeTaintsPolicy: "Honor"},
		},
		{
			name: "nodeAffinityPolicy Ignore on one constraint, Honor on the other",
			a1:   func(n *Node) { n.Labels = map[string]string{"pool": "old"} },
			zone: SpreadConstraint{TopologyKey: LabelZone, MaxSkew: 1, Hard: true, Selector: SelectLabels(x), NodeAffinityPolicy: "Ignore"},
			host: SpreadConstraint{TopologyKey: LabelHostname, MaxSkew: 1, Hard: true, Selector: SelectLabels(x)},
			pod:  func(p *Pod) { p.NodeSelector = map[string]string{"pool": "new"} },
		},
	}
	for _, d := range raceDBs(stateDBs()) {
		for _, c := range cases {
			t.Run(d.name+"/"+c.name, func(t *testing.T) {
				s := newOn(t, d, Config{})
				a1 := Node{Name: "a1", Zone: "za", CPU: 4000, Memory: 4000}
				c.a1(&a1)
				addNodes(t, s, a1,
					Node{Name: "a2", Zone: "za", CPU: 4000, Memory: 4000, Labels: map[string]string{"pool": "new"}},
					Node{Name: "b1", Zone: "zb", CPU: 50, Memory: 4000, Labels: map[string]string{"pool": "new"}})
				addPods(t, s, Pod{Name: "x-0", Labels: x, NodeName: "a1", Phase: PhaseRunning, CPU: 100})
				p := Pod{Name: "x-1", Labels: x, CPU: 100, Spread: []SpreadConstraint{c.zone, c.host}}
				if c.pod != nil {
					c.pod(&p)
				}
				addPods(t, s, p)
				placed, us := schedule(t, s)
				if len(placed) != 0 || len(us) != 1 {
					t.Fatalf("placed %v, unschedulable %v; want x-1 unschedulable (skew 2 in za on a2, no room in zb)", placed, us)
				}
				// With room in zb, the pod goes there.
				addNodes(t, s, Node{Name: "b2", Zone: "zb", CPU: 4000, Memory: 4000, Labels: map[string]string{"pool": "new"}})
				if placed, us = schedule(t, s); placed["x-1"] != "b2" {
					t.Fatalf("placed %v, unschedulable %v; want x-1 on b2", placed, us)
				}
			})
		}
	}
}
