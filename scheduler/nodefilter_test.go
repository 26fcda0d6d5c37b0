package scheduler

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// nodeFilterCases exercise the per-node filters as kube-scheduler v1.37's
// plugins define them: NodeAffinity's Gt, Lt, matchFields and unparsable
// or empty terms, TaintToleration's and NodeUnschedulable's toleration
// matching, NodePorts' host addresses and NodeDeclaredFeatures.
func nodeFilterCases() []pluginCase {
	nodes := []Node{
		node("a1", "za", func(n *Node) {
			n.Labels = map[string]string{"cores": "8", "disk": "ssd"}
			n.Features = []string{"FeatureA", "FeatureB"}
		}),
		node("b1", "zb", func(n *Node) {
			n.Labels = map[string]string{"cores": "16", "disk": "hdd"}
			n.Features = []string{"FeatureA"}
		}),
		node("c1", "zc", func(n *Node) { n.Labels = map[string]string{"cores": "x16"}; n.Unschedulable = true }),
		node("c2", "zc", func(n *Node) { n.Taints = []Taint{{"dedicated", "", "NoSchedule"}} }),
	}
	req := func(terms ...[]NodeRequirement) [][]NodeRequirement { return terms }
	ports := func(ps ...HostPort) []HostPort { return ps }
	return []pluginCase{
		{name: "NodeAffinity/Gt compares integers", nodes: nodes, pod: Pod{Name: "p", CPU: 1, RequiredNodeAffinity: req([]NodeRequirement{{Key: "cores", Operator: OpGt, Values: []string{"10"}}})}, want: []string{"b1"}},
		{name: "NodeAffinity/Lt skips a value that is not an integer", nodes: nodes, pod: Pod{Name: "p", CPU: 1, RequiredNodeAffinity: req([]NodeRequirement{{Key: "cores", Operator: OpLt, Values: []string{"100"}}})}, want: []string{"a1", "b1"}},
		{name: "NodeAffinity/Gt with a value that is not an integer matches no node", nodes: nodes, pod: Pod{Name: "p", CPU: 1, RequiredNodeAffinity: req([]NodeRequirement{{Key: "cores", Operator: OpGt, Values: []string{"ten"}}})}, want: []string{}},
		{name: "NodeAffinity/matchFields In the node's name", nodes: nodes, pod: Pod{Name: "p", CPU: 1, RequiredNodeAffinity: req([]NodeRequirement{{Key: "metadata.name", Operator: "In", Values: []string{"b1"}, Field: true}})}, want: []string{"b1"}},
		{name: "NodeAffinity/matchFields NotIn and a label requirement in one term", nodes: nodes, pod: Pod{Name: "p", CPU: 1, RequiredNodeAffinity: req([]NodeRequirement{{Key: "metadata.name", Operator: "NotIn", Values: []string{"a1"}, Field: true}, {Key: "disk", Operator: "Exists"}})}, want: []string{"b1"}},
		{name: "NodeAffinity/an empty term matches no node", nodes: nodes, pod: Pod{Name: "p", CPU: 1, RequiredNodeAffinity: req([]NodeRequirement{})}, want: []string{}},
		{name: "NodeAffinity/an empty term beside one that matches", nodes: nodes, pod: Pod{Name: "p", CPU: 1, RequiredNodeAffinity: req([]NodeRequirement{}, []NodeRequirement{{Key: "disk", Operator: "In", Values: []string{"hdd"}}})}, want: []string{"b1"}},
		{name: "NodeAffinity/an unparsable term matches no node", nodes: nodes, pod: Pod{Name: "p", CPU: 1, RequiredNodeAffinity: req([]NodeRequirement{{Key: "disk", Operator: OpNever}})}, want: []string{}},
		{name: "NodeAffinity/two In requirements on one key intersect", nodes: nodes, pod: Pod{Name: "p", CPU: 1, RequiredNodeAffinity: req([]NodeRequirement{{Key: "disk", Operator: "In", Values: []string{"ssd", "hdd"}}, {Key: "disk", Operator: "In", Values: []string{"hdd", "nvme"}}})}, want: []string{"b1"}},
		{name: "NodeAffinity/nodeSelector with an empty value needs the label", nodes: nodes, pod: Pod{Name: "p", CPU: 1, NodeSelector: map[string]string{"gpu": ""}}, want: []string{}},
		{name: "NodeUnschedulable/a NoExecute toleration of the key does not tolerate it", nodes: nodes, pod: Pod{Name: "p", CPU: 1, Tolerations: []Toleration{{Key: "node.kubernetes.io/unschedulable", Operator: "Exists", Effect: "NoExecute"}}}, want: []string{"a1", "b1"}},
		{name: "NodeUnschedulable/an Equal toleration needs the empty value", nodes: nodes, pod: Pod{Name: "p", CPU: 1, Tolerations: []Toleration{{Key: "node.kubernetes.io/unschedulable", Operator: "Equal", Value: "yes"}}}, want: []string{"a1", "b1"}},
		{name: "NodeUnschedulable/any key with Exists and NoSchedule", nodes: nodes, pod: Pod{Name: "p", CPU: 1, Tolerations: []Toleration{{Operator: "Exists", Effect: "NoSchedule"}}}, want: []string{"a1", "b1", "c1", "c2"}},
		{name: "TaintToleration/an empty operator means Equal", nodes: nodes, pod: Pod{Name: "p", CPU: 1, Tolerations: []Toleration{{Key: "dedicated"}}}, want: []string{"a1", "b1", "c2"}},
		{name: "TaintToleration/Gt tolerates nothing while its gate is off", nodes: nodes, pod: Pod{Name: "p", CPU: 1, Tolerations: []Toleration{{Key: "dedicated", Operator: "Gt", Value: "1"}}}, want: []string{"a1", "b1"}},
		{name: "NodePorts/another address of the same port", nodes: nodes, bound: []Pod{{Name: "r", NodeName: "a1", HostPorts: ports(HostPort{Protocol: "TCP", Port: 80, HostIP: "10.0.0.1"})}}, pod: Pod{Name: "p", CPU: 1, HostPorts: ports(HostPort{Protocol: "TCP", Port: 80, HostIP: "10.0.0.2"})}, want: []string{"a1", "b1"}},
		{name: "NodePorts/every address against one address", nodes: nodes, bound: []Pod{{Name: "r", NodeName: "a1", HostPorts: ports(HostPort{Protocol: "TCP", Port: 80, HostIP: "10.0.0.1"})}}, pod: Pod{Name: "p", CPU: 1, HostPorts: ports(HostPort{Port: 80})}, want: []string{"b1"}},
		{name: "NodePorts/one address against every address", nodes: nodes, bound: []Pod{{Name: "r", NodeName: "b1", HostPorts: ports(HostPort{Port: 80})}}, pod: Pod{Name: "p", CPU: 1, HostPorts: ports(HostPort{Protocol: "TCP", Port: 80, HostIP: "10.0.0.2"})}, want: []string{"a1"}},
		{name: "NodeDeclaredFeatures/the node declares every feature", nodes: nodes, pod: Pod{Name: "p", CPU: 1, Features: []string{"FeatureA", "FeatureB"}}, want: []string{"a1"}},
	}
}

// TestNodeFiltersDifferential: for each case the placement model and the
// Go filter accept the same nodes, the expected ones.
func TestNodeFiltersDifferential(t *testing.T) {
	for _, c := range raceShare(nodeFilterCases()) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each case has its own scheduler and database
			s := newTest(t, Config{Timeout: 5 * time.Second})
			addNodes(t, s, c.nodes...)
			for _, b := range c.bound {
				b.Phase = PhaseRunning
				addPods(t, s, b)
			}
			p := normalizePod(c.pod)
			ref := s.State().FeasibleNodes(&p)
			got := feasibleBySolver(t, s, c.pod)
			if !reflect.DeepEqual(got, ref) {
				t.Errorf("solver %v, Go filter %v", got, ref)
			}
			if !reflect.DeepEqual(ref, c.want) && !(len(ref) == 0 && len(c.want) == 0) {
				t.Errorf("Go filter %v, want %v", ref, c.want)
			}
		})
	}
}

// Pods placed together clash on a host port as bound pods do: one on every
// address keeps the other off its node, two on distinct addresses share it.
func TestHostPortsWithinTheBatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		a, b   string
		placed int
	}{
		{"every address and one address", "", "10.0.0.1", 1},
		{"one address twice", "10.0.0.1", "10.0.0.1", 1},
		{"two addresses", "10.0.0.1", "10.0.0.2", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, d := range raceDBs(stateDBs()) {
				t.Run(d.name, func(t *testing.T) {
					s := newOn(t, d, Config{})
					addNodes(t, s, node("n1", "z"))
					addPods(t, s,
						Pod{Name: "a", CPU: 1, HostPorts: []HostPort{{Port: 80, HostIP: c.a}}},
						Pod{Name: "b", CPU: 1, HostPorts: []HostPort{{Protocol: "TCP", Port: 80, HostIP: c.b}}})
					bs, _, err := s.ScheduleBatch(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					if len(bs) != c.placed {
						t.Errorf("placed %v, want %d pods", bs, c.placed)
					}
				})
			}
		})
	}
}

// The node constraints of a pod's volumes (H17) hold each, beside its own
// node affinity: a local volume pinned to b1 and a zone selector.
func TestVolumeNodeSelectorsDifferential(t *testing.T) {
	t.Parallel()
	nodes := []Node{node("a1", "za"), node("b1", "zb"), node("b2", "zb")}
	pin := [][]NodeRequirement{{{Key: LabelHostname, Operator: "In", Values: []string{"b1", "a1"}}}}
	zone := [][]NodeRequirement{{{Key: LabelZone, Operator: "In", Values: []string{"zb"}}}, {{Key: "region", Operator: "Exists"}}}
	for _, c := range []pluginCase{
		{name: "two volumes, both hold on b1 only", nodes: nodes, pod: Pod{Name: "p", CPU: 1, VolumeNodeSelectors: [][][]NodeRequirement{pin, zone}}, want: []string{"b1"}},
		{name: "a volume selector without a usable term", nodes: nodes, pod: Pod{Name: "p", CPU: 1, VolumeNodeSelectors: [][][]NodeRequirement{{{}}}}, want: []string{}},
		{name: "the pod's own affinity and a volume's", nodes: nodes, pod: Pod{Name: "p", CPU: 1, RequiredNodeAffinity: [][]NodeRequirement{{{Key: LabelHostname, Operator: "NotIn", Values: []string{"b1"}}}}, VolumeNodeSelectors: [][][]NodeRequirement{zone}}, want: []string{"b2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newTest(t, Config{Timeout: 5 * time.Second})
			addNodes(t, s, c.nodes...)
			p := normalizePod(c.pod)
			ref := s.State().FeasibleNodes(&p)
			got := feasibleBySolver(t, s, c.pod)
			if !reflect.DeepEqual(got, ref) {
				t.Errorf("solver %v, Go filter %v", got, ref)
			}
			if !reflect.DeepEqual(ref, c.want) && !(len(ref) == 0 && len(c.want) == 0) {
				t.Errorf("Go filter %v, want %v", ref, c.want)
			}
		})
	}
}

// A pod may repeat a required anti-affinity term (the API allows it; a
// mismatchLabelKeys key the pod lacks leaves a copy of another term): the
// copies are one constraint, not a pod kept apart from itself.
func TestRepeatedAntiAffinityTerm(t *testing.T) {
	t.Parallel()
	for _, d := range raceDBs(stateDBs()) {
		t.Run(d.name, func(t *testing.T) {
			s := newOn(t, d, Config{})
			addNodes(t, s, node("n1", "z"), node("n2", "z"))
			term := PodAffinityTerm{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"role": "nginx"}), TopologyKey: LabelHostname}
			zone := term
			zone.TopologyKey = LabelZone
			nginx := map[string]string{"role": "nginx"}
			addPods(t, s,
				Pod{Name: "a", CPU: 1, Labels: nginx, Affinity: []PodAffinityTerm{term, term}},
				Pod{Name: "b", CPU: 1, Labels: nginx, Affinity: []PodAffinityTerm{term, term}},
				Pod{Name: "z", Namespace: "other", CPU: 1, Labels: nginx, Affinity: []PodAffinityTerm{zone, zone}})
			placed, _ := schedule(t, s)
			if len(placed) != 3 || placed["a"] == placed["b"] {
				t.Errorf("placed %v: want all three, a and b on different nodes", placed)
			}
		})
	}
}
