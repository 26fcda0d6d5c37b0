package scheduler

import (
	"fmt"
	"maps"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func diagState(nodes ...Node) *State {
	st := NewState()
	for _, n := range nodes {
		if n.CPU == 0 {
			n.CPU, n.Memory, n.Storage, n.Pods = 4000, 8000, 100000, 110
		}
		n = normalizeNode(n)
		st.Nodes[n.Name] = &n
	}
	return st
}

func (s *State) bind(p Pod, node string) {
	p.NodeName, p.Phase = node, PhaseRunning
	if p.Namespace == "" {
		p.Namespace = "w"
	}
	s.Pods[p.Name] = &p
}

// TestDiagnoseMessage: one node per kube-scheduler plugin that rejects the pod, and the message built as
// kube-scheduler v1.37.2's FitError builds it (the sorted "count reason" histogram, two reasons for the node
// short of both CPU and memory), then Weave's addition naming the pods at fault per policy.
func TestDiagnoseMessage(t *testing.T) {
	a := map[string]string{"pool": "a"}
	st := diagState(
		Node{Name: "n-unsched", Labels: a, Unschedulable: true},
		Node{Name: "n-taint", Labels: a, Taints: []Taint{{Key: "dedicated", Value: "x", Effect: "NoSchedule"}}},
		Node{Name: "n-pool", Labels: map[string]string{"pool": "b"}},
		Node{Name: "n-small", Labels: a, CPU: 500, Memory: 500, Storage: 100000, Pods: 110},
		Node{Name: "n-port", Labels: a},
		Node{Name: "n-anti", Labels: a},
	)
	st.bind(Pod{Name: "w/holder", HostPorts: []HostPort{{Protocol: "TCP", Port: 8080}}}, "n-port")
	st.bind(Pod{Name: "w/db", Labels: map[string]string{"app": "db"}}, "n-anti")
	p := &Pod{Name: "w/web", Namespace: "w", Phase: PhasePending, CPU: 1000, Memory: 1000, NodeSelector: a,
		HostPorts: []HostPort{{Protocol: "TCP", Port: 8080}},
		Affinity:  []PodAffinityTerm{{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"app": "db"}), TopologyKey: LabelHostname}}}
	st.Pods[p.Name] = p
	before := len(st.Pods)
	d := st.Diagnose(p)
	want := "0/6 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, " +
		"1 node(s) didn't have free ports for the requested pod ports, 1 node(s) didn't match Pod's node affinity/selector, " +
		"1 node(s) didn't match pod anti-affinity rules, 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable. " +
		"Weave: H14 pod anti-affinity with w/db on n-anti; H6 host ports with w/holder on n-port."
	if got := d.Message(); got != want {
		t.Errorf("message\n%s\nwant\n%s", got, want)
	}
	if len(st.Pods) != before || st.Pods[p.Name] != p || p.NodeName != "" {
		t.Error("Diagnose changed the state")
	}
	if len(d.Fit) != 0 || len(st.FeasibleNodes(p)) != 0 {
		t.Errorf("fits %v, FeasibleNodes %v: want none", d.Fit, st.FeasibleNodes(p))
	}
	detail := d.Detail()
	for _, line := range []string{"node n-small: Insufficient cpu; Insufficient memory\n", "node n-pool: node(s) didn't match Pod's node affinity/selector\n",
		"H6 host ports (on 1 node(s)): w/holder on n-port\n"} {
		if !strings.Contains(detail, line) {
			t.Errorf("detail lacks %q:\n%s", line, detail)
		}
	}
	// The room freed: n-small takes it once big enough, and the message counts one node less.
	st.Nodes["n-small"].CPU, st.Nodes["n-small"].Memory = 4000, 8000
	d = st.Diagnose(p)
	if !reflect.DeepEqual(d.Fit, []string{"n-small"}) {
		t.Errorf("fits %v, want [n-small]", d.Fit)
	}
	if got := d.FitMessage(); !strings.HasPrefix(got, "0/6 nodes are available: 1 node(s) didn't have free ports") {
		t.Errorf("message %s", got)
	}
}

// TestDiagnoseReasons: each reason alone, worded as its kube-scheduler plugin words it, and the first failing
// plugin in kube-scheduler's order winning on a node that several reject.
func TestDiagnoseReasons(t *testing.T) {
	zoned := func(name, zone string) Node { return Node{Name: name, Zone: zone} }
	for _, c := range []struct {
		name  string
		nodes []Node
		bound []Pod // on the first node
		pod   Pod
		want  map[string]int
		pre   string
	}{
		{name: "unschedulable before taints and size",
			nodes: []Node{{Name: "n1", Unschedulable: true, CPU: 100, Memory: 100, Pods: 10, Taints: []Taint{{Key: "k", Effect: "NoExecute"}}}},
			pod:   Pod{CPU: 1000}, want: map[string]int{reasonUnschedulable: 1}},
		{name: "tolerated unschedulable, then too many pods",
			nodes: []Node{{Name: "n1", Unschedulable: true, CPU: 4000, Memory: 4000, Pods: 1}},
			bound: []Pod{{Name: "w/b"}},
			pod:   Pod{Tolerations: []Toleration{{Key: "node.kubernetes.io/unschedulable", Operator: "Exists"}}}, want: map[string]int{reasonTooManyPods: 1}},
		{name: "scalar resource",
			nodes: []Node{{Name: "n1"}},
			pod:   Pod{Resources: map[string]int64{"example.com/gpu": 1}}, want: map[string]int{"Insufficient example.com/gpu": 1}},
		{name: "pod affinity",
			nodes: []Node{{Name: "n1"}, {Name: "n2"}},
			bound: []Pod{{Name: "w/other", Labels: map[string]string{"app": "other"}}},
			pod: Pod{Labels: map[string]string{"app": "x"}, Affinity: []PodAffinityTerm{{Required: true, Selector: SelectLabels(map[string]string{"app": "cache"}), TopologyKey: LabelHostname}},
				NodeSelector: nil},
			want: map[string]int{reasonAffinity: 2}},
		{name: "existing pod's anti-affinity",
			nodes: []Node{zoned("n1", "z1"), zoned("n2", "z1"), zoned("n3", "z2")},
			bound: []Pod{{Name: "w/loner", Affinity: []PodAffinityTerm{{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"app": "x"}), TopologyKey: LabelZone}}}},
			pod:   Pod{Labels: map[string]string{"app": "x"}, NodeSelector: map[string]string{LabelZone: "z1"}},
			want:  map[string]int{reasonExistingAntiAffinity: 2, reasonNodeAffinity: 1}},
		{name: "topology spread",
			nodes: []Node{zoned("n1", "z1"), zoned("n2", "z2"), {Name: "n3"}},
			bound: []Pod{{Name: "w/s1", Labels: map[string]string{"app": "s"}}, {Name: "w/s2", Labels: map[string]string{"app": "s"}}},
			pod: Pod{Labels: map[string]string{"app": "s"}, NodeSelector: map[string]string{LabelZone: "z1"},
				Spread: []SpreadConstraint{{TopologyKey: LabelZone, MaxSkew: 1, Hard: true, Selector: SelectLabels(map[string]string{"app": "s"}), NodeAffinityPolicy: "Ignore"}}},
			want: map[string]int{reasonSpread: 1, reasonNodeAffinity: 2}},
		{name: "topology spread without the label",
			nodes: []Node{{Name: "n1"}, {Name: "n2"}},
			pod:   Pod{Spread: []SpreadConstraint{{TopologyKey: "rack", MaxSkew: 1, Hard: true, Selector: SelectLabels(nil)}}},
			want:  map[string]int{reasonSpreadLabel: 2}},
		{name: "node name PreFilter",
			nodes: []Node{{Name: "n1"}, {Name: "n2"}, {Name: "n3", Unschedulable: true}},
			pod:   Pod{RequiredNodeAffinity: [][]NodeRequirement{{{Key: "metadata.name", Operator: "In", Values: []string{"n3", "gone"}, Field: true}}}},
			want:  map[string]int{reasonNodeAffinityPreFilter: 2, reasonUnschedulable: 1}},
		{name: "node name terms in conflict",
			nodes: []Node{{Name: "n1"}},
			pod: Pod{RequiredNodeAffinity: [][]NodeRequirement{{{Key: "metadata.name", Operator: "In", Values: []string{"n1"}, Field: true},
				{Key: "metadata.name", Operator: "In", Values: []string{"n2"}, Field: true}}}},
			want: map[string]int{}, pre: reasonNodeAffinityConflict},
		{name: "volume zone",
			nodes: []Node{zoned("n1", "z1"), zoned("n2", "z2")},
			pod:   Pod{Volumes: []string{"pv-z2"}}, want: map[string]int{reasonVolumeZone: 1}},
		{name: "Weave's own policy: at most one pod of the group per node",
			nodes: []Node{{Name: "n1"}},
			bound: []Pod{{Name: "w/g1", Group: "g"}},
			pod:   Pod{Group: "g", MaxPerNode: 1}, want: map[string]int{reasonWeavePolicy("N1"): 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := diagState(c.nodes...)
			st.Volumes["pv-z2"] = "z2"
			for _, b := range c.bound {
				st.bind(b, c.nodes[0].Name)
			}
			p := c.pod
			p.Name, p.Namespace, p.Phase = "w/p", "w", PhasePending
			st.Pods[p.Name] = &p
			d := st.Diagnose(&p)
			if got := d.Histogram(); !maps.Equal(got, c.want) || d.PreFilter != c.pre {
				t.Errorf("histogram %v prefilter %q, want %v %q (%s)", got, d.PreFilter, c.want, c.pre, d.Message())
			}
			if fits, ref := d.Fit, st.FeasibleNodes(&p); !slices.Equal(fits, ref) {
				t.Errorf("fits %v, FeasibleNodes %v", fits, ref)
			}
		})
	}
}

// TestDiagnoseAgreesWithCheck: on the check's random states (every policy, bound pods of every phase, nodes
// not ready or unschedulable, pods on nodes the state lacks), a node is free of reasons exactly where Check
// accepts the pod alone (FeasibleNodes), and Diagnose leaves the state as it was. The trials reach every
// reason the states can give.
func TestDiagnoseAgreesWithCheck(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(26))
	seen := map[string]int{}
	fits, fitsNot := 0, 0
	for trial := 0; trial < 1500; trial++ {
		st := randomCheckState(rng)
		p := randomCheckPod(rng, fmt.Sprintf("p%d", trial))
		st.Pods[p.Name] = p
		n := len(st.Pods)
		d := st.Diagnose(p)
		if len(st.Pods) != n || st.Pods[p.Name] != p || p.NodeName != "" {
			t.Fatalf("trial %d: Diagnose changed the state", trial)
		}
		want, got := st.FeasibleNodes(p), d.Fit
		if !slices.Equal(want, got) {
			t.Fatalf("trial %d: Diagnose fits %v, FeasibleNodes %v; reasons %v", trial, got, want, d.Reasons)
		}
		if len(want) > 0 {
			fits++
		} else {
			fitsNot++
		}
		for r, k := range d.Histogram() {
			seen[r] += k
		}
		if len(d.Reasons)+len(want) != len(st.Nodes) {
			t.Fatalf("trial %d: %d nodes with reasons and %d that fit, of %d", trial, len(d.Reasons), len(want), len(st.Nodes))
		}
	}
	t.Logf("%d fit, %d fit no node; reasons %v", fits, fitsNot, seen)
	if fits < 200 || fitsNot < 200 {
		t.Errorf("the trials do not exercise both answers: %d fit, %d fit no node", fits, fitsNot)
	}
	for _, r := range []string{reasonNotReady, reasonUnschedulable, reasonTaints, reasonNodeAffinity, reasonPorts, reasonTooManyPods,
		reasonInsufficient("cpu"), reasonInsufficient("memory"), reasonInsufficient("example.com/gpu"), reasonSpread, reasonSpreadLabel,
		reasonAffinity, reasonAntiAffinity, reasonExistingAntiAffinity, reasonWeavePolicy("N1"), reasonWeavePolicy("H15")} {
		if seen[r] < 5 {
			t.Errorf("the trials give %q %d times only", r, seen[r])
		}
	}
}

// BenchmarkTriage: the triage of pods that fit no node on 200 nodes running 2,000 pods, per batch of 10
// such pods (too big for any node; a node selector no node matches; anti-affinity to pods in every zone).
// "fits" is FitsSomewhere on each, the test weave-scheduler's loop runs after a batch; "diagnose" is
// Diagnose on each, which the loop leaves to the goroutine that reports the pod.
func BenchmarkTriage(b *testing.B) {
	st := NewState()
	var names []string
	for i := 0; i < 200; i++ {
		n := normalizeNode(Node{Name: fmt.Sprintf("n-%04d", i), Zone: fmt.Sprintf("z%d", i%3), CPU: 64000, Memory: 256000, Storage: 100000, Pods: 110,
			Labels: map[string]string{"pool": fmt.Sprint(i % 4)}})
		st.Nodes[n.Name] = &n
		names = append(names, n.Name)
	}
	for i := 0; i < 2000; i++ {
		st.bind(Pod{Name: fmt.Sprintf("w/r-%d", i), CPU: 100, Memory: 128, Labels: map[string]string{"app": fmt.Sprint("app-", i%50)}}, names[i%200])
	}
	var stuck []*Pod
	for i := 0; i < 10; i++ {
		p := &Pod{Name: fmt.Sprintf("w/p-%d", i), Namespace: "w", Phase: PhasePending, CPU: 100, Memory: 128}
		switch i % 3 {
		case 0:
			p.CPU = 128000
		case 1:
			p.NodeSelector = map[string]string{"pool": "9"}
		case 2:
			p.Affinity = []PodAffinityTerm{{Anti: true, Required: true, Selector: SelectLabels(map[string]string{"app": "app-7"}), TopologyKey: LabelZone}}
		}
		st.Pods[p.Name] = p
		stuck = append(stuck, p)
	}
	b.Run("fits", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			for _, p := range stuck {
				if st.FitsSomewhere(p) {
					b.Fatalf("%s fits", p.Name)
				}
			}
		}
	})
	b.Run("diagnose", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			for _, p := range stuck {
				if d := st.Diagnose(p); len(d.Reasons) != len(st.Nodes) {
					b.Fatalf("%s: a node without reasons", p.Name)
				}
			}
		}
	})
}
