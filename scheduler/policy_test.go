package scheduler

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"
	"time"
)

// feasibleBySolver asks the placement model which nodes one pod may take:
// it pins the pod to each node in turn (spec.nodeName, H7) and solves; the
// node is feasible when the pod gets it rather than no node.
func feasibleBySolver(t *testing.T, s *Scheduler, p Pod) []string {
	t.Helper()
	var out []string
	st := s.State()
	for name := range st.Nodes {
		if p.RequestedNode != "" && p.RequestedNode != name {
			continue // pinning is spec.nodeName itself
		}
		q := p
		q.RequestedNode = name
		q.Name = p.Name
		if err := s.UpsertPod(context.Background(), q); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		placed, _, err := s.solve(context.Background(), s.placement, []*Pod{s.state.Pods[q.Name]}, nil, nil, s.cfg.Timeout)
		s.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		if placed[q.Name] == name {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

type pluginCase struct {
	name  string
	nodes []Node
	bound []Pod
	pod   Pod
	vols  map[string]string
	want  []string // nil: only compare with the Go filter
}

func node(name, zone string, f ...func(*Node)) Node {
	n := Node{Name: name, Zone: zone, CPU: 4000, Memory: 4000, Storage: 10000, Pods: 10}
	for _, g := range f {
		g(&n)
	}
	return n
}

func pluginCases() []pluginCase {
	nodes := []Node{
		node("a1", "za", func(n *Node) { n.Labels = map[string]string{"disk": "ssd", "gpu": "yes"} }),
		node("a2", "za", func(n *Node) { n.Taints = []Taint{{"dedicated", "db", "NoSchedule"}} }),
		node("b1", "zb", func(n *Node) { n.Labels = map[string]string{"disk": "hdd"}; n.Images = map[string]int64{"nginx": 200} }),
		node("b2", "zb", func(n *Node) { n.Taints = []Taint{{"evict", "", "NoExecute"}}; n.CPU = 1000 }),
		node("c1", "zc", func(n *Node) { n.Unschedulable = true }),
		node("c2", "zc", func(n *Node) { n.NotReady = true }),
		node("c3", "zc", func(n *Node) { n.MemoryPressure = true; n.Pods = 1 }),
	}
	web := map[string]string{"app": "web"}
	g := map[string]string{"app": "g"}
	return []pluginCase{
		{name: "NodeResourcesFit/fits everywhere ready", nodes: nodes, pod: Pod{Name: "p", CPU: 500, Memory: 500}, want: []string{"a1", "b1", "c3"}},
		{name: "NodeResourcesFit/too much cpu", nodes: nodes, pod: Pod{Name: "p", CPU: 3500, Memory: 100}, bound: []Pod{{Name: "r", CPU: 1000, Memory: 100, NodeName: "a1"}}, want: []string{"b1", "c3"}},
		{name: "NodeResourcesFit/pod count", nodes: nodes, pod: Pod{Name: "p", CPU: 10}, bound: []Pod{{Name: "r", CPU: 10, NodeName: "c3"}}, want: []string{"a1", "b1"}},
		{name: "NodeResourcesFit/storage", nodes: nodes, pod: Pod{Name: "p", Storage: 20000}, want: []string{}},
		{name: "CheckNodeMemoryPressure/best effort", nodes: nodes, pod: Pod{Name: "p"}, want: []string{"a1", "b1"}},
		{name: "NodeUnschedulable/tolerated", nodes: nodes, pod: Pod{Name: "p", CPU: 1, Tolerations: []Toleration{{Key: "node.kubernetes.io/unschedulable", Operator: "Exists"}}}, want: []string{"a1", "b1", "c1", "c3"}},
		{name: "NodeName", nodes: nodes, pod: Pod{Name: "p", CPU: 1, RequestedNode: "b1"}},
		{name: "TaintToleration/NoSchedule tolerated", nodes: nodes, pod: Pod{Name: "p", CPU: 1, Tolerations: []Toleration{{Key: "dedicated", Operator: "Equal", Value: "db"}}}, want: []string{"a1", "a2", "b1", "c3"}},
		{name: "TaintToleration/wrong value", nodes: nodes, pod: Pod{Name: "p", CPU: 1, Tolerations: []Toleration{{Key: "dedicated", Operator: "Equal", Value: "web"}}}, want: []string{"a1", "b1", "c3"}},
		{name: "TaintToleration/NoExecute exists", nodes: nodes, pod: Pod{Name: "p", CPU: 1, Tolerations: []Toleration{{Key: "evict", Operator: "Exists", Effect: "NoExecute"}}}, want: []string{"a1", "b1", "b2", "c3"}},
		{name: "TaintToleration/tolerate everything", nodes: nodes, pod: Pod{Name: "p", CPU: 1, Tolerations: []Toleration{{Operator: "Exists"}}}},
		{name: "NodeAffinity/nodeSelector", nodes: nodes, pod: Pod{Name: "p", CPU: 1, NodeSelector: map[string]string{"disk": "ssd"}}, want: []string{"a1"}},
		{name: "NodeAffinity/selector no match", nodes: nodes, pod: Pod{Name: "p", CPU: 1, NodeSelector: map[string]string{"disk": "nvme"}}, want: []string{}},
		{name: "NodeAffinity/In two values", nodes: nodes, pod: Pod{Name: "p", CPU: 1, RequiredNodeAffinity: [][]NodeRequirement{{{Key: "disk", Operator: "In", Values: []string{"ssd", "hdd"}}}}}, want: []string{"a1", "b1"}},
		{name: "NodeAffinity/NotIn", nodes: nodes, pod: Pod{Name: "p", CPU: 1, RequiredNodeAffinity: [][]NodeRequirement{{{Key: "disk", Operator: "NotIn", Values: []string{"ssd"}}}}}, want: []string{"b1", "c3"}},
		{name: "NodeAffinity/Exists and DoesNotExist", nodes: nodes, pod: Pod{Name: "p", CPU: 1, RequiredNodeAffinity: [][]NodeRequirement{{{Key: "disk", Operator: "Exists"}, {Key: "gpu", Operator: "DoesNotExist"}}}}, want: []string{"b1"}},
		{name: "NodeAffinity/two terms ORed", nodes: nodes, pod: Pod{Name: "p", CPU: 1, RequiredNodeAffinity: [][]NodeRequirement{{{Key: "gpu", Operator: "Exists"}}, {{Key: "topology.kubernetes.io/zone", Operator: "In", Values: []string{"zc"}}}}}, want: []string{"a1", "c3"}},
		{name: "InterPodAffinity/anti hostname", nodes: nodes, bound: []Pod{{Name: "r", Labels: web, NodeName: "a1"}}, pod: Pod{Name: "p", CPU: 1, Labels: web, Affinity: []PodAffinityTerm{{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"app": "web"}), TopologyKey: LabelHostname}}}, want: []string{"b1", "c3"}},
		{name: "InterPodAffinity/anti zone", nodes: nodes, bound: []Pod{{Name: "r", Labels: web, NodeName: "b1"}}, pod: Pod{Name: "p", CPU: 1, Affinity: []PodAffinityTerm{{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"app": "web"}), TopologyKey: LabelZone}}}, want: []string{"a1", "c3"}},
		{name: "InterPodAffinity/anti zone, another node of the zone", nodes: nodes, bound: []Pod{{Name: "r", Labels: web, NodeName: "b2"}}, pod: Pod{Name: "p", CPU: 1, Affinity: []PodAffinityTerm{{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"app": "web"}), TopologyKey: LabelZone}}}, want: []string{"a1", "c3"}},
		{name: "InterPodAffinity/affinity, a replica is not exempt once one is bound", nodes: nodes, bound: []Pod{{Name: "r", Labels: web, NodeName: "b1"}}, pod: Pod{Name: "p", CPU: 1, Labels: web, Affinity: []PodAffinityTerm{{Required: true, Selector: SelectLabels(map[string]string{"app": "web"}), TopologyKey: LabelZone}}}, want: []string{"b1"}},
		{name: "InterPodAffinity/existing pod anti", nodes: nodes, bound: []Pod{{Name: "r", NodeName: "b1", Affinity: []PodAffinityTerm{{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"app": "web"}), TopologyKey: LabelZone}}}}, pod: Pod{Name: "p", CPU: 1, Labels: web}, want: []string{"a1", "c3"}},
		{name: "InterPodAffinity/existing pod anti, other namespace", nodes: nodes, bound: []Pod{{Name: "r", Namespace: "other", NodeName: "b1", Affinity: []PodAffinityTerm{{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"app": "web"}), TopologyKey: LabelZone}}}}, pod: Pod{Name: "p", CPU: 1, Labels: web}, want: []string{"a1", "b1", "c3"}},
		{name: "InterPodAffinity/affinity zone", nodes: nodes, bound: []Pod{{Name: "r", Labels: web, NodeName: "b1"}}, pod: Pod{Name: "p", CPU: 1, Affinity: []PodAffinityTerm{{Required: true, Selector: SelectLabels(map[string]string{"app": "web"}), TopologyKey: LabelZone}}}, want: []string{"b1"}},
		{name: "InterPodAffinity/affinity unmet", nodes: nodes, pod: Pod{Name: "p", CPU: 1, Affinity: []PodAffinityTerm{{Required: true, Selector: SelectLabels(map[string]string{"app": "db"}), TopologyKey: LabelHostname}}}, want: []string{}},
		{name: "InterPodAffinity/first replica exempt", nodes: nodes, pod: Pod{Name: "p", CPU: 1, Labels: web, Affinity: []PodAffinityTerm{{Required: true, Selector: SelectLabels(map[string]string{"app": "web"}), TopologyKey: LabelHostname}}}, want: []string{"a1", "b1", "c3"}},
		{name: "InterPodAffinity/other namespace ignored", nodes: nodes, bound: []Pod{{Name: "r", Namespace: "other", Labels: web, NodeName: "a1"}}, pod: Pod{Name: "p", CPU: 1, Affinity: []PodAffinityTerm{{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"app": "web"}), TopologyKey: LabelHostname}}}, want: []string{"a1", "b1", "c3"}},
		{name: "NodePorts/conflict", nodes: nodes, bound: []Pod{{Name: "r", NodeName: "a1", HostPorts: []HostPort{{Protocol: "TCP", Port: 80}}}}, pod: Pod{Name: "p", CPU: 1, HostPorts: []HostPort{{Protocol: "TCP", Port: 80}}}, want: []string{"b1", "c3"}},
		{name: "NodePorts/other protocol", nodes: nodes, bound: []Pod{{Name: "r", NodeName: "a1", HostPorts: []HostPort{{Protocol: "UDP", Port: 80}}}}, pod: Pod{Name: "p", CPU: 1, HostPorts: []HostPort{{Protocol: "TCP", Port: 80}}}, want: []string{"a1", "b1", "c3"}},
		{name: "VolumeZone", nodes: nodes, vols: map[string]string{"pv": "zb", "any": ""}, pod: Pod{Name: "p", CPU: 1, Volumes: []string{"pv", "any"}}, want: []string{"b1"}},
		{name: "ServiceAffinity", nodes: nodes, bound: []Pod{{Name: "r", Service: "svc", NodeName: "c3"}}, pod: Pod{Name: "p", CPU: 1, Service: "svc"}, want: []string{}},
		{name: "ServiceAffinity/zone a", nodes: nodes, bound: []Pod{{Name: "r", Service: "svc", NodeName: "a1"}}, pod: Pod{Name: "p", CPU: 1, Service: "svc"}, want: []string{"a1"}},
		{name: "MaxPerNode", nodes: nodes, bound: []Pod{{Name: "r", Group: "g", NodeName: "a1"}}, pod: Pod{Name: "p", CPU: 1, Group: "g", MaxPerNode: 1}, want: []string{"b1", "c3"}},
		// PodTopologySpread counts every node (c1 unschedulable, c2 not
		// ready: each zone a domain), the pods its selector selects.
		{name: "PodTopologySpread/maxSkew zone", nodes: nodes, bound: []Pod{{Name: "r", Labels: g, NodeName: "a1"}}, pod: Pod{Name: "p", CPU: 1, Labels: g, Spread: []SpreadConstraint{{TopologyKey: LabelZone, MaxSkew: 1, Hard: true, Selector: SelectLabels(g)}}}, want: []string{"b1", "c3"}},
		{name: "PodTopologySpread/maxSkew zone, bound in two zones", nodes: nodes, bound: []Pod{{Name: "r1", Labels: g, NodeName: "a1"}, {Name: "r2", Labels: g, NodeName: "a2"}, {Name: "r3", Labels: g, NodeName: "b1"}, {Name: "o", Labels: web, NodeName: "c3"}}, pod: Pod{Name: "p", CPU: 1, Labels: g, Spread: []SpreadConstraint{{TopologyKey: LabelZone, MaxSkew: 1, Hard: true, Selector: SelectLabels(g)}}}, want: []string{}},
		{name: "PodTopologySpread/maxSkew 2 zone, bound in two zones", nodes: nodes, bound: []Pod{{Name: "r1", Labels: g, NodeName: "a1"}, {Name: "r2", Labels: g, NodeName: "a2"}, {Name: "r3", Labels: g, NodeName: "b1"}}, pod: Pod{Name: "p", CPU: 1, Labels: g, Spread: []SpreadConstraint{{TopologyKey: LabelZone, MaxSkew: 2, Hard: true, Selector: SelectLabels(g)}}}, want: []string{"b1", "c3"}},
		{name: "PodTopologySpread/maxSkew hostname", nodes: nodes, bound: []Pod{{Name: "r1", Labels: g, NodeName: "a1"}}, pod: Pod{Name: "p", CPU: 1, Labels: g, Spread: []SpreadConstraint{{TopologyKey: LabelHostname, MaxSkew: 1, Hard: true, Selector: SelectLabels(g)}}}, want: []string{"b1", "c3"}},
		{name: "PodTopologySpread/the pod is not selected", nodes: nodes, bound: []Pod{{Name: "r1", Labels: g, NodeName: "a1"}}, pod: Pod{Name: "p", CPU: 1, Labels: web, Spread: []SpreadConstraint{{TopologyKey: LabelZone, MaxSkew: 1, Hard: true, Selector: SelectLabels(g)}}}, want: []string{"a1", "b1", "c3"}},
		{name: "PodTopologySpread/minDomains above the zones", nodes: nodes, bound: []Pod{{Name: "r1", Labels: g, NodeName: "b1"}}, pod: Pod{Name: "p", CPU: 1, Labels: g, Spread: []SpreadConstraint{{TopologyKey: LabelZone, MaxSkew: 1, Hard: true, MinDomains: 4, Selector: SelectLabels(g)}}}, want: []string{"a1", "c3"}},
		{name: "PodTopologySpread/node affinity honoured", nodes: nodes, bound: []Pod{{Name: "r1", Labels: g, NodeName: "a1"}}, pod: Pod{Name: "p", CPU: 1, Labels: g, NodeSelector: map[string]string{"disk": "ssd"}, Spread: []SpreadConstraint{{TopologyKey: LabelZone, MaxSkew: 1, Hard: true, Selector: SelectLabels(g)}}}, want: []string{"a1"}},
		{name: "PodTopologySpread/taints honoured", nodes: nodes, bound: []Pod{{Name: "r1", Labels: g, NodeName: "a1"}, {Name: "r2", Labels: g, NodeName: "b1"}}, pod: Pod{Name: "p", CPU: 1, Labels: g, Spread: []SpreadConstraint{{TopologyKey: LabelZone, MaxSkew: 1, Hard: true, NodeTaintsPolicy: "Honor", Selector: SelectLabels(g)}}}, want: []string{"c3"}},
		{name: "PodTopologySpread/empty selector counts no pod", nodes: nodes, bound: []Pod{{Name: "r1", Labels: g, NodeName: "a1"}}, pod: Pod{Name: "p", CPU: 1, Labels: g, Spread: []SpreadConstraint{{TopologyKey: LabelZone, MaxSkew: 1, Hard: true, Selector: &LabelSelector{}}}}, want: []string{"a1", "b1", "c3"}},
		{name: "ImageLocality/no filter", nodes: nodes, pod: Pod{Name: "p", CPU: 1, Images: []string{"nginx"}}, want: []string{"a1", "b1", "c3"}},
	}
}

// TestPluginsDifferential: for each plugin situation, the nodes the
// placement model accepts for a single pod are the ones the Go filter
// accepts (and the expected ones when given).
func TestPluginsDifferential(t *testing.T) {
	for _, c := range raceShare(pluginCases()) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each case has its own scheduler and database
			s := newTest(t, Config{Timeout: 5 * time.Second})
			addNodes(t, s, c.nodes...)
			for v, z := range c.vols {
				s.UpsertVolume(context.Background(), v, z)
			}
			for _, b := range c.bound {
				b.Phase = PhaseRunning
				addPods(t, s, b)
			}
			st := s.State()
			p := normalizePod(c.pod)
			ref := st.FeasibleNodes(&p)
			got := feasibleBySolver(t, s, c.pod)
			if !reflect.DeepEqual(got, ref) {
				t.Errorf("solver %v, Go filter %v", got, ref)
			}
			if c.want != nil && !reflect.DeepEqual(ref, c.want) && !(len(ref) == 0 && len(c.want) == 0) {
				t.Errorf("Go filter %v, want %v", ref, c.want)
			}
		})
	}
}

// TestRandomBatchesChecked: random clusters and batches mixing every
// policy; each batch is solved with Verify and the Go check (inside
// ScheduleBatch), and the pods left unplaced are unplaceable alone or
// blocked by the batch.
func TestRandomBatchesChecked(t *testing.T) {
	t.Parallel()
	seeds := int64(6)
	if raceDetector {
		seeds = 2
	}
	for seed := int64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			s := newTest(t, Config{BatchSize: 12, Timeout: 2 * time.Second, Seed: seed})
			cases := pluginCases()
			addNodes(t, s, cases[0].nodes...)
			s.UpsertVolume(context.Background(), "pv", "zb")
			for i := 0; i < 24; i++ {
				c := cases[rng.Intn(len(cases))]
				p := c.pod
				p.Name = fmt.Sprintf("p%02d", i)
				p.Group = fmt.Sprintf("g%d", rng.Intn(3))
				p.Labels = map[string]string{"app": []string{"web", "db"}[rng.Intn(2)]}
				if rng.Intn(3) == 0 {
					p.Affinity = []PodAffinityTerm{{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"app": p.Labels["app"]}), TopologyKey: []string{LabelHostname, LabelZone}[rng.Intn(2)]}}
				}
				p.CPU = int64(100 + rng.Intn(1500))
				addPods(t, s, p)
			}
			for len(s.Pending()) > 0 {
				placed, us := schedule(t, s)
				if len(placed) == 0 {
					break
				}
				_ = us
			}
			if err := s.State().Check(nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}
