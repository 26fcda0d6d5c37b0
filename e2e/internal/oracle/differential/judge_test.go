package differential

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/weavesql/weave/cmd/weave-scheduler/app"
	"github.com/weavesql/weave/e2e/internal/oracle"
	"github.com/weavesql/weave/e2e/internal/oracle/gen"
)

var (
	sharedOracle *oracle.Oracle
	sharedErr    error
	sharedOnce   sync.Once
)

func judgeOracle(t *testing.T) *oracle.Oracle {
	t.Helper()
	sharedOnce.Do(func() { sharedOracle, sharedErr = oracle.New() })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedOracle
}

func tnode(name, zone, cpu string) *v1.Node {
	alloc := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110")}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name, v1.LabelTopologyZone: zone}},
		Status:     v1.NodeStatus{Allocatable: alloc, Capacity: alloc, Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
	}
}

func tpod(name, cpu string, labels map[string]string, mod ...func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("u-" + name), Labels: labels},
		Spec: v1.PodSpec{SchedulerName: gen.SchedulerName, Containers: []v1.Container{{Name: "c",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}}},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
	for _, m := range mod {
		m(p)
	}
	return p
}

func requiredAffinity(k, v string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}, TopologyKey: v1.LabelHostname}}}}
	}
}

func kinds(r Result) map[Kind][]string {
	out := map[Kind][]string{}
	for _, f := range r.Findings {
		out[f.Kind] = append(out[f.Kind], f.Pod)
	}
	return out
}

func judgeCase(t *testing.T, c *gen.Case, d app.Decision) Result {
	t.Helper()
	if d.Bindings == nil {
		d.Bindings = map[string]string{}
	}
	r, err := Judge(context.Background(), judgeOracle(t), c, d)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Two pods that together overcommit a node: each fails in the final state (the node's total does not depend
// on the order), and a third on another node is right.
func TestBindingsOverCapacityAreWrong(t *testing.T) {
	c := &gen.Case{Nodes: []*v1.Node{tnode("n1", "z1", "1"), tnode("n2", "z1", "1")},
		Pending: []*v1.Pod{tpod("a", "600m", nil), tpod("b", "600m", nil), tpod("c", "600m", nil)}}
	r := judgeCase(t, c, app.Decision{Bindings: map[string]string{"default/a": "n1", "default/b": "n1", "default/c": "n2"}})
	if got := kinds(r); len(r.Findings) != 2 || strings.Join(got[WrongBinding], ",") != "default/a,default/b" {
		t.Fatalf("findings %+v, want a and b wrong", r.Findings)
	}
	for _, f := range r.Findings {
		if f.Rejection.Plugin != "NodeResourcesFit" {
			t.Fatalf("rejection %v", f.Rejection)
		}
	}
}

// A pod requiring affinity to its own label, bound beside no peer while a peer is bound elsewhere: in the
// final state its term has a match in another domain, but placed first it is its term's first pod.
func TestSelfAffinityFirstPodByOrder(t *testing.T) {
	x := map[string]string{"app": "x"}
	c := &gen.Case{Nodes: []*v1.Node{tnode("n1", "z1", "4"), tnode("n2", "z2", "4")},
		// "b" (no constraint) comes first by name; replay must try "c" first.
		Pending: []*v1.Pod{tpod("b", "100m", x), tpod("c", "100m", x, requiredAffinity("app", "x"))}}
	r := judgeCase(t, c, app.Decision{Bindings: map[string]string{"default/b": "n2", "default/c": "n1"}})
	if len(r.Findings) != 0 {
		t.Fatalf("findings %+v, want none", r.Findings)
	}
}

// Two pods each requiring the other's label, bound together: each passes once the other is there, but
// kube-scheduler, one pod at a time, can make neither first.
func TestMutualAffinityBoundTogetherHasNoOrder(t *testing.T) {
	c := &gen.Case{Nodes: []*v1.Node{tnode("n1", "z1", "4")},
		Pending: []*v1.Pod{
			tpod("a", "100m", map[string]string{"app": "a"}, requiredAffinity("app", "b")),
			tpod("b", "100m", map[string]string{"app": "b"}, requiredAffinity("app", "a")),
		}}
	r := judgeCase(t, c, app.Decision{Bindings: map[string]string{"default/a": "n1", "default/b": "n1"}})
	if got := kinds(r)[WrongBinding]; len(got) != 2 {
		t.Fatalf("findings %+v, want both bindings wrong", r.Findings)
	}
	for _, f := range r.Findings {
		if f.Rejection.Plugin != "InterPodAffinity" || !strings.Contains(f.Detail, "no order") {
			t.Errorf("finding %+v", f)
		}
	}
}

// A pod with a spread constraint and one it counts but that carries none, on one zone of two: the state
// fails the constrained pod's check once both are there, but kube-scheduler placing it first makes both.
func TestSpreadCheckedInSomeOrder(t *testing.T) {
	spread := func(p *v1.Pod) {
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone,
			WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "w"}}}}
	}
	w := map[string]string{"app": "w"}
	c := &gen.Case{Nodes: []*v1.Node{tnode("n1", "z1", "4"), tnode("n2", "z2", "4")},
		// "a" without the constraint comes first by name; replay must try "b" first.
		Pending: []*v1.Pod{tpod("a", "100m", w), tpod("b", "100m", w, spread)}}
	r := judgeCase(t, c, app.Decision{Bindings: map[string]string{"default/a": "n1", "default/b": "n1"}})
	if len(r.Findings) != 0 {
		t.Fatalf("findings %+v, want none", r.Findings)
	}
	// Two constrained pods in one zone: no order works.
	c.Pending[0] = tpod("a", "100m", w, spread)
	r = judgeCase(t, c, app.Decision{Bindings: map[string]string{"default/a": "n1", "default/b": "n1"}})
	if got := kinds(r)[WrongBinding]; len(got) != 1 || r.Findings[0].Rejection.Plugin != "PodTopologySpread" {
		t.Fatalf("findings %+v, want one PodTopologySpread rejection", r.Findings)
	}
}

// One pod with a spread constraint and nine it counts that carry none, all on one zone of two: only the
// constrained pod first makes every binding. In name order it comes last, and the search for an order ran out
// of its budget among the orders of the nine (as in seed 87 of the differential run, with a minDomains
// constraint); the replay tries the constrained pod first.
func TestSpreadOrderFoundAmongManyPods(t *testing.T) {
	w := map[string]string{"app": "w"}
	c := &gen.Case{Nodes: []*v1.Node{tnode("n1", "z1", "4"), tnode("n2", "z2", "4")}}
	d := app.Decision{Bindings: map[string]string{}}
	for i := range 9 {
		p := tpod(fmt.Sprintf("a%d", i), "100m", w)
		c.Pending = append(c.Pending, p)
		d.Bindings["default/"+p.Name] = "n1"
	}
	c.Pending = append(c.Pending, tpod("z", "100m", w, func(p *v1.Pod) {
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone,
			WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: w}}}
	}))
	d.Bindings["default/z"] = "n1"
	r := judgeCase(t, c, d)
	if len(r.Findings) != 0 || r.ReplayExhausted {
		t.Fatalf("findings %+v (replay exhausted: %v), want none", r.Findings, r.ReplayExhausted)
	}
}

func TestOtherOutcomesAreChecked(t *testing.T) {
	gated := tpod("gated", "100m", nil, func(p *v1.Pod) { p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "g"}} })
	other := tpod("other", "100m", nil, func(p *v1.Pod) { p.Spec.SchedulerName = v1.DefaultSchedulerName })
	c := &gen.Case{Nodes: []*v1.Node{tnode("n1", "z1", "4")},
		Pending: []*v1.Pod{tpod("fits", "1", nil), gated, tpod("refused", "100m", nil), tpod("forgotten", "100m", nil), other}}
	r := judgeCase(t, c, app.Decision{
		Bindings:      map[string]string{"default/gated": "n1", "default/other": "n1"},
		Unschedulable: map[string]string{"default/fits": "no room"},
		Refused:       map[string]string{"default/refused": "weave-scheduler does not support this"},
	})
	got := kinds(r)
	want := map[Kind][]string{
		MissedPlacement: {"default/fits"},
		GatedDecided:    {"default/gated"},
		BadRefusal:      {"default/refused"},
		Undecided:       {"default/forgotten"},
		Foreign:         {"default/other"},
	}
	for k, pods := range want {
		if strings.Join(got[k], ",") != strings.Join(pods, ",") {
			t.Errorf("%s: got %v, want %v", k, got[k], pods)
		}
	}
	if len(got[WrongBinding]) != 0 {
		t.Errorf("wrong bindings %v: the gated pod's is a gated finding, the other scheduler's pod is not judged", got[WrongBinding])
	}
}
