package gen

import (
	"context"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/weavesql/weave/e2e/internal/oracle"
)

func TestASeedGivesTheSameCase(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		a, b := Generate(seed, Options{}), Generate(seed, Options{})
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d: two different cases", seed)
		}
	}
	if reflect.DeepEqual(Generate(1, Options{}), Generate(2, Options{})) {
		t.Fatal("seeds 1 and 2 give the same case")
	}
}

func TestCasesHaveTheSizesAsked(t *testing.T) {
	for seed := int64(1); seed <= 300; seed++ {
		c := Generate(seed, Options{})
		ours := 0
		for _, p := range c.Pending {
			if p.Spec.NodeName != "" {
				t.Fatalf("seed %d: pending pod %s has nodeName", seed, p.Name)
			}
			if p.Spec.SchedulerName == SchedulerName {
				ours++
			}
		}
		if len(c.Nodes) < 3 || len(c.Nodes) > 12 || len(c.Bound) > 30 || ours < 1 || ours > 25 {
			t.Fatalf("seed %d: %d nodes, %d bound, %d pending of %s", seed, len(c.Nodes), len(c.Bound), ours, SchedulerName)
		}
		names := map[string]bool{}
		for _, p := range c.Pods() {
			k := p.Namespace + "/" + p.Name
			if names[k] || p.UID == "" {
				t.Fatalf("seed %d: pod %s repeated or without UID", seed, k)
			}
			names[k] = true
		}
		for _, p := range c.Bound {
			if p.Spec.NodeName == "" {
				t.Fatalf("seed %d: bound pod %s without nodeName", seed, p.Name)
			}
		}
	}
}

// Nodes are Ready without pressure, and no pod tolerates a condition taint by its key: kube-scheduler leaves
// such nodes to the taints, weave-scheduler also excludes them, and the random states keep out of that.
func TestNoConditionTaintsOrTheirTolerations(t *testing.T) {
	conditions := []string{v1.TaintNodeNotReady, v1.TaintNodeUnreachable, v1.TaintNodeMemoryPressure, v1.TaintNodeDiskPressure,
		v1.TaintNodePIDPressure, v1.TaintNodeNetworkUnavailable}
	for seed := int64(1); seed <= 200; seed++ {
		c := Generate(seed, Options{})
		for _, n := range c.Nodes {
			for _, cond := range n.Status.Conditions {
				if (cond.Type == v1.NodeReady) != (cond.Status == v1.ConditionTrue) {
					t.Fatalf("seed %d: node %s condition %s=%s", seed, n.Name, cond.Type, cond.Status)
				}
			}
			for _, tn := range n.Spec.Taints {
				for _, k := range conditions {
					if tn.Key == k {
						t.Fatalf("seed %d: node %s has taint %s", seed, n.Name, k)
					}
				}
			}
		}
		for _, p := range c.Pods() {
			for _, tl := range p.Spec.Tolerations {
				for _, k := range conditions {
					if tl.Key == k {
						t.Fatalf("seed %d: pod %s tolerates %s", seed, p.Name, k)
					}
				}
			}
		}
	}
}

// Over a few hundred cases, every field the brief names appears in some pending pod of weave-scheduler.
func TestTheCasesCoverEveryField(t *testing.T) {
	seen := map[string]int{}
	for seed := int64(1); seed <= 300; seed++ {
		for _, p := range Generate(seed, Options{}).Pending {
			if p.Spec.SchedulerName != SchedulerName {
				continue
			}
			for _, f := range Features(p) {
				seen[f]++
			}
		}
	}
	want := []string{
		"spec.podAffinity.required", "spec.podAffinity.preferred", "spec.podAntiAffinity.required", "spec.podAntiAffinity.preferred",
		"spec.podAntiAffinity.required.labelSelector.matchLabels:several", "spec.podAffinity.required.labelSelector:several-requirements",
		"spec.podAntiAffinity.required.labelSelector.matchExpressions:In", "spec.podAntiAffinity.required.labelSelector.matchExpressions:NotIn",
		"spec.podAntiAffinity.required.labelSelector.matchExpressions:Exists", "spec.podAntiAffinity.required.labelSelector.matchExpressions:DoesNotExist",
		"spec.podAffinity.required.namespaces", "spec.podAffinity.required.namespaceSelector", "spec.podAntiAffinity.required.namespaceSelector:all",
		"spec.podAntiAffinity.required.matchLabelKeys", "spec.podAntiAffinity.required.mismatchLabelKeys",
		"spec.podAntiAffinity.required.topologyKey=kubernetes.io/hostname", "spec.podAffinity.required.topologyKey=topology.kubernetes.io/zone",
		"spec.podAffinity.required.topologyKey=example.com/rack",
		"spec.topologySpreadConstraints.DoNotSchedule", "spec.topologySpreadConstraints.ScheduleAnyway", "spec.topologySpreadConstraints.minDomains",
		"spec.topologySpreadConstraints.nodeAffinityPolicy=Honor", "spec.topologySpreadConstraints.nodeAffinityPolicy=Ignore",
		"spec.topologySpreadConstraints.nodeTaintsPolicy=Honor", "spec.topologySpreadConstraints.nodeTaintsPolicy=Ignore",
		"spec.topologySpreadConstraints.matchLabelKeys", "spec.topologySpreadConstraints.labelSelector:several-requirements",
		"spec.containers.resources.requests:cpu", "spec.containers.resources.requests:memory", "spec.containers.resources.requests:ephemeral-storage",
		"spec.containers.resources.requests:nvidia.com/gpu", "spec.containers.resources.requests:example.com/foo", "spec.containers.resources.requests:hugepages-2Mi",
		"spec.initContainers", "spec.initContainers:sidecar", "spec.resources (pod-level)", "spec.overhead", "spec.runtimeClassName",
		"spec.nodeAffinity.required.matchExpressions:In", "spec.nodeAffinity.required.matchExpressions:NotIn", "spec.nodeAffinity.required.matchExpressions:Exists",
		"spec.nodeAffinity.required.matchExpressions:DoesNotExist", "spec.nodeAffinity.required.matchExpressions:Gt", "spec.nodeAffinity.required.matchExpressions:Lt",
		"spec.nodeAffinity.required.matchFields", "spec.nodeAffinity.preferred", "spec.nodeSelector",
		"spec.tolerations.effect:NoSchedule", "spec.tolerations.effect:PreferNoSchedule", "spec.tolerations.effect:NoExecute",
		"spec.tolerations.operator:Exists", "spec.tolerations.operator:Equal", "spec.tolerations:emptyKey+Exists", "spec.tolerations:unschedulable",
		"spec.hostPort", "spec.hostPort.hostIP=10.0.0.1", "spec.hostPort.protocol=UDP", "spec.hostPort.protocol=SCTP", "spec.hostNetwork",
		"spec.schedulingGates", "spec.priority", "spec.preemptionPolicy=Never", "spec.resourceClaims",
		"spec.containers.restartPolicyRules", "spec.hostUsers=false",
	}
	for _, f := range want {
		if seen[f] == 0 {
			t.Errorf("no pending pod uses %s", f)
		}
	}
	for f := range seen {
		if !strings.HasPrefix(f, "spec.") {
			t.Errorf("feature %q is not named as a field", f)
		}
	}
}

// Plain cases hold nothing but CPU, memory and pod counts.
func TestPlainCasesArePlain(t *testing.T) {
	for seed := int64(1); seed <= 100; seed++ {
		c := Generate(seed, Options{Plain: true})
		for _, n := range c.Nodes {
			if len(n.Spec.Taints) > 0 || n.Spec.Unschedulable || len(n.Status.Allocatable) != 3 {
				t.Fatalf("seed %d: node %s is not plain", seed, n.Name)
			}
		}
		for _, p := range c.Pods() {
			for _, f := range Features(p) {
				if f != "spec.containers.resources.requests:cpu" && f != "spec.containers.resources.requests:memory" {
					t.Fatalf("seed %d: pod %s uses %s", seed, p.Name, f)
				}
			}
		}
	}
}

// The bound pods that hold their node are as the kubelet admits them: NodePorts, the real plugin, finds no
// host port of theirs taken by another.
func TestBoundPodsHoldNoTakenHostPort(t *testing.T) {
	o, err := oracle.New()
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	for seed := int64(1); seed <= 80; seed++ {
		c := Generate(seed, Options{})
		cl := oracle.Cluster{Nodes: c.Nodes, Pods: c.Bound, Namespaces: c.Namespaces}
		for _, p := range c.Bound {
			if p.Status.Phase == v1.PodFailed || p.Status.Phase == v1.PodSucceeded || len(Features(p)) == 0 {
				continue
			}
			v, err := o.Judge(context.Background(), cl, p)
			if err != nil {
				t.Fatal(err)
			}
			if r := v.Nodes[p.Spec.NodeName]; r != nil && r.Plugin == "NodePorts" {
				t.Fatalf("seed %d: bound pod %s: %v", seed, p.Name, r)
			}
		}
	}
}
