package oracle

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/weavesql/weave/e2e/internal/oracle/gen"
)

var (
	shared     *Oracle
	sharedErr  error
	sharedOnce sync.Once
)

func oracle(t *testing.T) *Oracle {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = New() })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

func node(name string, alloc v1.ResourceList, mod ...func(*v1.Node)) *v1.Node {
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status: v1.NodeStatus{Capacity: alloc, Allocatable: alloc,
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
	}
	for _, m := range mod {
		m(n)
	}
	return n
}

func res(kv ...string) v1.ResourceList {
	l := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func std() v1.ResourceList { return res("cpu", "4", "memory", "8Gi", "pods", "110") }

func pod(name string, mod ...func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), Labels: map[string]string{}},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "busybox"}}},
		Status:     v1.PodStatus{Phase: v1.PodPending},
	}
	for _, m := range mod {
		m(p)
	}
	return p
}

func on(n string) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Spec.NodeName = n; p.Status.Phase = v1.PodRunning }
}

func labels(kv ...string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		for i := 0; i < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func requests(kv ...string) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = res(kv...) }
}

func judge(t *testing.T, c Cluster, p *v1.Pod) Verdict {
	t.Helper()
	v, err := oracle(t).Judge(context.Background(), c, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Nodes) != len(c.Nodes) {
		t.Fatalf("verdict covers %d nodes, the cluster has %d", len(v.Nodes), len(c.Nodes))
	}
	return v
}

// wantRejected checks that node rejects the pod through plugin, with a reason containing reason.
func wantRejected(t *testing.T, v Verdict, node, plugin, reason string) {
	t.Helper()
	r := v.Nodes[node]
	if r == nil {
		t.Fatalf("%s: the pod passes; want %s to reject it (%q)", node, plugin, reason)
	}
	if r.Plugin != plugin || !strings.Contains(strings.Join(r.Reasons, "; "), reason) {
		t.Fatalf("%s: got %v; want %s: %q", node, r, plugin, reason)
	}
}

func wantFeasible(t *testing.T, v Verdict, nodes ...string) {
	t.Helper()
	if got := v.Feasible(); !slices.Equal(got, nodes) {
		t.Fatalf("feasible nodes %v, want %v (verdict: %v)", got, nodes, v.Nodes)
	}
}

func TestTheDefaultProfileRunsWhatV1_37Enables(t *testing.T) {
	pe, pf, f := oracle(t).Plugins()
	if !slices.Equal(pe, []string{"SchedulingGates"}) {
		t.Errorf("PreEnqueue plugins %v", pe)
	}
	for _, want := range []string{"NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits",
		"VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity", "NodeDeclaredFeatures"} {
		if !slices.Contains(pf, want) {
			t.Errorf("PreFilter plugins %v lack %s", pf, want)
		}
	}
	wantFilter := []string{"NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
		"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity", "NodeDeclaredFeatures"}
	if !slices.Equal(f, wantFilter) {
		t.Errorf("Filter plugins\n got %v\nwant %v", f, wantFilter)
	}
	for _, p := range slices.Concat(pe, pf, f) {
		if _, out := Excluded[p]; out {
			t.Errorf("excluded plugin %s runs", p)
		}
	}
}

func TestAntiAffinityWithTwoLabelsRejectsOnlyPodsWithBoth(t *testing.T) {
	c := Cluster{
		Nodes: []*v1.Node{node("a", std()), node("b", std()), node("c", std())},
		Pods: []*v1.Pod{
			pod("nginx-0", on("a"), labels("app", "x", "role", "nginx")),
			pod("redis-0", on("b"), labels("app", "x", "role", "redis")),
		},
	}
	p := pod("nginx-1", labels("app", "x", "role", "nginx"), func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x", "role": "nginx"}},
			TopologyKey:   v1.LabelHostname,
		}}}}
	})
	v := judge(t, c, p)
	wantRejected(t, v, "a", "InterPodAffinity", "didn't match pod anti-affinity rules")
	wantFeasible(t, v, "b", "c") // redis-0 carries app=x but not role=nginx
}

func TestRequiredAffinityToTwoLabelsNeedsAPodWithBoth(t *testing.T) {
	c := Cluster{
		Nodes: []*v1.Node{node("a", std()), node("b", std())},
		Pods: []*v1.Pod{
			pod("web-0", on("a"), labels("app", "x", "role", "nginx")),
			pod("redis-0", on("b"), labels("app", "x", "role", "redis")),
		},
	}
	p := pod("nginx-1", labels("app", "x", "role", "nginx"), func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "role", Operator: metav1.LabelSelectorOpIn, Values: []string{"redis"}}}},
			TopologyKey: v1.LabelHostname,
		}}}}
	})
	v := judge(t, c, p)
	wantRejected(t, v, "a", "InterPodAffinity", "didn't match pod affinity rules")
	wantFeasible(t, v, "b")
}

func TestNamespaceSelectorReadsNamespaceLabels(t *testing.T) {
	prod := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod", Labels: map[string]string{"env": "prod"}}}
	dev := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev", Labels: map[string]string{"env": "dev"}}}
	inNS := func(ns string) func(*v1.Pod) { return func(p *v1.Pod) { p.Namespace = ns } }
	c := Cluster{
		Nodes:      []*v1.Node{node("a", std()), node("b", std())},
		Pods:       []*v1.Pod{pod("db-prod", on("a"), inNS("prod"), labels("app", "db")), pod("db-dev", on("b"), inNS("dev"), labels("app", "db"))},
		Namespaces: []*v1.Namespace{prod, dev, {ObjectMeta: metav1.ObjectMeta{Name: "default"}}},
	}
	p := pod("api", func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			TopologyKey:       v1.LabelHostname,
		}}}}
	})
	v := judge(t, c, p)
	wantRejected(t, v, "a", "InterPodAffinity", "anti-affinity")
	wantFeasible(t, v, "b")
}

func TestAnExtendedResourceTheNodeLacksRejects(t *testing.T) {
	c := Cluster{Nodes: []*v1.Node{
		node("a", res("cpu", "4", "memory", "8Gi", "pods", "110", "example.com/foo", "2")),
		node("b", std()),
	}}
	v := judge(t, c, pod("p", requests("cpu", "1", "example.com/foo", "1")))
	wantRejected(t, v, "b", "NodeResourcesFit", "Insufficient example.com/foo")
	wantFeasible(t, v, "a")
}

func TestASidecarsRequestsAddToTheContainers(t *testing.T) {
	c := Cluster{Nodes: []*v1.Node{node("a", res("cpu", "1", "memory", "8Gi", "pods", "110"))}}
	withInit := func(restart *v1.ContainerRestartPolicy) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "init", Image: "busybox", RestartPolicy: restart,
				Resources: v1.ResourceRequirements{Requests: res("cpu", "600m")}}}
		}
	}
	// A sidecar runs beside the containers: 600m + 500m > 1 CPU.
	v := judge(t, c, pod("sidecar", requests("cpu", "500m"), withInit(ptr.To(v1.ContainerRestartPolicyAlways))))
	wantRejected(t, v, "a", "NodeResourcesFit", "Insufficient cpu")
	// A plain init container runs before them: max(600m, 500m).
	v = judge(t, c, pod("init", requests("cpu", "500m"), withInit(nil)))
	wantFeasible(t, v, "a")
}

func TestPodLevelResourcesOverrideTheContainers(t *testing.T) {
	c := Cluster{Nodes: []*v1.Node{node("a", res("cpu", "1", "memory", "8Gi", "pods", "110"))}}
	v := judge(t, c, pod("p", requests("cpu", "100m"), func(p *v1.Pod) {
		p.Spec.Resources = &v1.ResourceRequirements{Requests: res("cpu", "1500m")}
	}))
	wantRejected(t, v, "a", "NodeResourcesFit", "Insufficient cpu")
}

func TestOverheadCounts(t *testing.T) {
	c := Cluster{Nodes: []*v1.Node{node("a", res("cpu", "1", "memory", "8Gi", "pods", "110"))}}
	v := judge(t, c, pod("p", requests("cpu", "900m"), func(p *v1.Pod) {
		p.Spec.RuntimeClassName = ptr.To("kata")
		p.Spec.Overhead = res("cpu", "200m")
	}))
	wantRejected(t, v, "a", "NodeResourcesFit", "Insufficient cpu")
}

func TestAGatedPodIsNotTried(t *testing.T) {
	c := Cluster{Nodes: []*v1.Node{node("a", std())}}
	v := judge(t, c, pod("p", func(p *v1.Pod) { p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/wait"}} }))
	if v.PreEnqueue == nil || v.PreEnqueue.Plugin != "SchedulingGates" {
		t.Fatalf("PreEnqueue %v, want SchedulingGates", v.PreEnqueue)
	}
	wantFeasible(t, v)
}

func TestAPodWithResourceClaimsIsNotTriedWithoutTheClaims(t *testing.T) {
	c := Cluster{Nodes: []*v1.Node{node("a", std())}}
	v := judge(t, c, pod("p", func(p *v1.Pod) {
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("gpu-claim")}}
	}))
	if v.PreEnqueue == nil || v.PreEnqueue.Plugin != "DynamicResources" {
		t.Fatalf("PreEnqueue %v, want DynamicResources", v.PreEnqueue)
	}
	wantFeasible(t, v)
}

func TestANoExecuteTaintNeedsAToleration(t *testing.T) {
	tainted := node("a", std(), func(n *v1.Node) {
		n.Spec.Taints = []v1.Taint{{Key: "maintenance", Effect: v1.TaintEffectNoExecute}}
	})
	c := Cluster{Nodes: []*v1.Node{tainted, node("b", std())}}
	v := judge(t, c, pod("p"))
	wantRejected(t, v, "a", "TaintToleration", "untolerated taint")
	wantFeasible(t, v, "b")
	v = judge(t, c, pod("q", func(p *v1.Pod) {
		p.Spec.Tolerations = []v1.Toleration{{Key: "maintenance", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}}
	}))
	wantFeasible(t, v, "a", "b")
}

func TestPreferNoScheduleDoesNotFilter(t *testing.T) {
	c := Cluster{Nodes: []*v1.Node{node("a", std(), func(n *v1.Node) {
		n.Spec.Taints = []v1.Taint{{Key: "spot", Value: "true", Effect: v1.TaintEffectPreferNoSchedule}}
	})}}
	wantFeasible(t, judge(t, c, pod("p")), "a")
}

func TestAnUnschedulableNodeNeedsItsToleration(t *testing.T) {
	c := Cluster{Nodes: []*v1.Node{node("a", std(), func(n *v1.Node) { n.Spec.Unschedulable = true })}}
	wantRejected(t, judge(t, c, pod("p")), "a", "NodeUnschedulable", "unschedulable")
	wantFeasible(t, judge(t, c, pod("q", func(p *v1.Pod) {
		p.Spec.Tolerations = []v1.Toleration{{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
	})), "a")
}

func TestMatchFieldsNarrowsTheNodesInPreFilter(t *testing.T) {
	c := Cluster{Nodes: []*v1.Node{node("a", std()), node("b", std())}}
	v := judge(t, c, pod("p", func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"b"}}}}},
		}}}
	}))
	wantRejected(t, v, "a", "NodeAffinity", "didn't satisfy plugin(s) [NodeAffinity]")
	wantFeasible(t, v, "b")
}

func TestNodeDeclaredFeaturesFilters(t *testing.T) {
	declares := node("a", std(), func(n *v1.Node) { n.Status.DeclaredFeatures = []string{"RestartAllContainersOnContainerExits"} })
	c := Cluster{Nodes: []*v1.Node{declares, node("b", std())}}
	v := judge(t, c, pod("p", func(p *v1.Pod) {
		p.Spec.Containers[0].RestartPolicy = ptr.To(v1.ContainerRestartPolicyNever)
		p.Spec.Containers[0].RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers,
			ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
	}))
	wantRejected(t, v, "b", "NodeDeclaredFeatures", "didn't match Pod's required features")
	wantFeasible(t, v, "a")
}

func TestHostPortsConflictByIPAndProtocol(t *testing.T) {
	port := func(hostIP string, proto v1.Protocol) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 8080, HostPort: 80, HostIP: hostIP, Protocol: proto}}
		}
	}
	c := Cluster{
		Nodes: []*v1.Node{node("a", std()), node("b", std())},
		Pods:  []*v1.Pod{pod("x", on("a"), port("10.0.0.1", v1.ProtocolTCP)), pod("y", on("b"), port("", v1.ProtocolUDP))},
	}
	v := judge(t, c, pod("p", port("10.0.0.2", v1.ProtocolTCP)))
	wantFeasible(t, v, "a", "b") // another IP on a; another protocol on b
	v = judge(t, c, pod("q", port("0.0.0.0", v1.ProtocolTCP)))
	wantRejected(t, v, "a", "NodePorts", "free ports")
	wantFeasible(t, v, "b")
}

func TestTopologySpreadCountsMatchingPods(t *testing.T) {
	zone := func(z string) func(*v1.Node) { return func(n *v1.Node) { n.Labels[v1.LabelTopologyZone] = z } }
	c := Cluster{
		Nodes: []*v1.Node{node("a", std(), zone("z1")), node("b", std(), zone("z2"))},
		Pods: []*v1.Pod{
			pod("w0", on("a"), labels("app", "w", "tier", "front")),
			pod("w1", on("a"), labels("app", "w", "tier", "back")), // not selected: tier=back
		},
	}
	spread := func(p *v1.Pod) {
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone,
			WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "w", "tier": "front"}}}}
	}
	v := judge(t, c, pod("w2", labels("app", "w", "tier", "front"), spread))
	wantRejected(t, v, "a", "PodTopologySpread", "didn't match pod topology spread constraints")
	wantFeasible(t, v, "b")
}

func TestABoundPodIsJudgedWithoutItself(t *testing.T) {
	small := res("cpu", "1", "memory", "1Gi", "pods", "110")
	p := pod("p", on("a"), requests("cpu", "800m"), labels("app", "solo"), func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "solo"}}, TopologyKey: v1.LabelHostname,
		}}}}
	})
	c := Cluster{Nodes: []*v1.Node{node("a", small)}, Pods: []*v1.Pod{p}}
	wantFeasible(t, judge(t, c, p), "a")
	// Another such pod is kept off by both.
	q := p.DeepCopy()
	q.Name, q.UID, q.Spec.NodeName = "q", "uid-q", ""
	v := judge(t, c, q)
	if v.Passes("a") {
		t.Fatalf("q passes on a beside p: %v", v.Nodes)
	}
}

func TestTerminalPodsHoldNothing(t *testing.T) {
	small := res("cpu", "1", "memory", "1Gi", "pods", "110")
	done := pod("done", on("a"), requests("cpu", "900m"), func(p *v1.Pod) { p.Status.Phase = v1.PodSucceeded })
	c := Cluster{Nodes: []*v1.Node{node("a", small)}, Pods: []*v1.Pod{done}}
	wantFeasible(t, judge(t, c, pod("p", requests("cpu", "900m"))), "a")
}

func TestTooManyPods(t *testing.T) {
	c := Cluster{Nodes: []*v1.Node{node("a", res("cpu", "4", "memory", "8Gi", "pods", "1"))}, Pods: []*v1.Pod{pod("x", on("a"))}}
	wantRejected(t, judge(t, c, pod("p")), "a", "NodeResourcesFit", "Too many pods")
}

// BenchmarkJudge: one pending pod of a generated case judged on every node.
func BenchmarkJudge(b *testing.B) {
	o, err := New()
	if err != nil {
		b.Fatal(err)
	}
	defer o.Close()
	c := gen.Generate(7, gen.Options{})
	cl := Cluster{Nodes: c.Nodes, Pods: c.Pods(), Namespaces: c.Namespaces}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := o.Judge(context.Background(), cl, c.Pending[i%len(c.Pending)]); err != nil {
			b.Fatal(err)
		}
	}
}
