package app

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/weavesql/weave/scheduler"
)

// TestAffinityTermsAreConvertedWhole: every pair and requirement of a label
// selector, the namespaces and the namespace selector of each term, and the
// difference between a nil and an empty selector reach the scheduler
// package as they are.
func TestAffinityTermsAreConvertedWhole(t *testing.T) {
	twoLabels := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x", "role": "redis"}}
	expressions := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}, MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "role", Operator: metav1.LabelSelectorOpIn, Values: []string{"redis", "cache"}},
		{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"test"}},
		{Key: "track", Operator: metav1.LabelSelectorOpExists},
		{Key: "canary", Operator: metav1.LabelSelectorOpDoesNotExist}}}
	p := testPod("p", "100m", 0, "")
	p.Spec.Affinity = &v1.Affinity{
		PodAffinity: &v1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
				{LabelSelector: twoLabels, TopologyKey: v1.LabelHostname},
				{LabelSelector: expressions, TopologyKey: v1.LabelTopologyZone, Namespaces: []string{"a", "b"}}},
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 7, PodAffinityTerm: v1.PodAffinityTerm{
				LabelSelector: twoLabels, TopologyKey: v1.LabelHostname, NamespaceSelector: &metav1.LabelSelector{}}}}},
		PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
				{LabelSelector: nil, TopologyKey: v1.LabelHostname},
				{LabelSelector: &metav1.LabelSelector{}, TopologyKey: v1.LabelHostname,
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
					MatchLabelKeys:    []string{"pod-template-hash"}}}},
	}
	got := toPod(p).Affinity
	want := []scheduler.PodAffinityTerm{
		{Required: true, Selector: scheduler.SelectLabels(map[string]string{"app": "x", "role": "redis"}), Namespaces: []string{}, TopologyKey: v1.LabelHostname},
		{Required: true, Selector: &scheduler.LabelSelector{MatchLabels: map[string]string{"app": "x"}, MatchExpressions: []scheduler.LabelRequirement{
			{Key: "role", Operator: "In", Values: []string{"redis", "cache"}}, {Key: "tier", Operator: "NotIn", Values: []string{"test"}},
			{Key: "track", Operator: "Exists", Values: []string{}}, {Key: "canary", Operator: "DoesNotExist", Values: []string{}}}},
			Namespaces: []string{"a", "b"}, TopologyKey: v1.LabelTopologyZone},
		{Weight: 7, Selector: scheduler.SelectLabels(map[string]string{"app": "x", "role": "redis"}), Namespaces: []string{},
			NamespaceSelector: &scheduler.LabelSelector{}, TopologyKey: v1.LabelHostname},
		{Anti: true, Required: true, Selector: nil, Namespaces: []string{}, TopologyKey: v1.LabelHostname},
		{Anti: true, Required: true, Selector: &scheduler.LabelSelector{}, Namespaces: []string{},
			NamespaceSelector: scheduler.SelectLabels(map[string]string{"team": "a"}), TopologyKey: v1.LabelHostname},
	}
	// Compare through the selectors' meaning-bearing parts (nil slices and
	// empty ones are alike).
	norm := func(ts []scheduler.PodAffinityTerm) []scheduler.PodAffinityTerm {
		out := append([]scheduler.PodAffinityTerm(nil), ts...)
		for i := range out {
			if len(out[i].Namespaces) == 0 {
				out[i].Namespaces = nil
			}
			for _, s := range []*scheduler.LabelSelector{out[i].Selector, out[i].NamespaceSelector} {
				if s == nil {
					continue
				}
				for j := range s.MatchExpressions {
					if len(s.MatchExpressions[j].Values) == 0 {
						s.MatchExpressions[j].Values = nil
					}
				}
			}
		}
		return out
	}
	if g, w := norm(got), norm(want); !reflect.DeepEqual(g, w) {
		t.Fatalf("terms\n%#v\nwant\n%#v", g, w)
	}
	if got[3].Selector != nil || got[4].Selector == nil || !got[4].Selector.Empty() {
		t.Error("a nil selector must stay nil (nothing) and an empty one empty (everything)")
	}
}

// TestSpreadConstraintsAreConvertedWhole: the label selector with the pod's
// values of matchLabelKeys (the keys it has), minDomains, the node-inclusion
// policies, and a nil selector kept nil.
func TestSpreadConstraintsAreConvertedWhole(t *testing.T) {
	p := testPod("p", "100m", 0, "")
	p.Labels = map[string]string{"app": "web", "pod-template-hash": "abc"}
	honor, ignore := v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore
	p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{
		{MaxSkew: 2, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector:  &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			MatchLabelKeys: []string{"pod-template-hash", "absent"}, MinDomains: ptr.To[int32](3),
			NodeAffinityPolicy: &ignore, NodeTaintsPolicy: &honor},
		{MaxSkew: 1, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, MatchLabelKeys: []string{"app"}},
	}
	now := metav1.Now()
	p.DeletionTimestamp = &now
	sp := toPod(p)
	want := []scheduler.SpreadConstraint{
		{TopologyKey: v1.LabelTopologyZone, MaxSkew: 2, Hard: true, MinDomains: 3, NodeAffinityPolicy: "Ignore", NodeTaintsPolicy: "Honor",
			Selector: &scheduler.LabelSelector{MatchLabels: map[string]string{"app": "web"},
				MatchExpressions: []scheduler.LabelRequirement{{Key: "pod-template-hash", Operator: "In", Values: []string{"abc"}}}}},
		{TopologyKey: v1.LabelHostname, MaxSkew: 1, MinDomains: 1},
	}
	if !reflect.DeepEqual(sp.Spread, want) {
		t.Fatalf("spread\n%#v\nwant\n%#v", sp.Spread, want)
	}
	if !sp.Terminating {
		t.Error("a pod with a deletion timestamp is terminating")
	}
	other := map[string]string{"app": "web", "pod-template-hash": "def"}
	if sp.Spread[0].Selector.Matches(other) || !sp.Spread[0].Selector.Matches(p.Labels) {
		t.Error("matchLabelKeys must select the pods of the same template only")
	}
}

// TestInvalidSelectorsAreRefused: a selector LabelSelectorAsSelector rejects
// makes the pod unsupported, the message naming the field.
func TestInvalidSelectorsAreRefused(t *testing.T) {
	p := testPod("p", "100m", 0, "")
	p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
		{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "In"}}}, TopologyKey: v1.LabelHostname}}}}
	p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 0, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}}}
	msg := refusalMessage(unsupported(p))
	for _, field := range []string{"spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector",
		"spec.topologySpreadConstraints[0].labelSelector", "spec.topologySpreadConstraints[0].maxSkew"} {
		if !strings.Contains(msg, field) {
			t.Errorf("message %q does not name %s", msg, field)
		}
	}
	ok := testPod("ok", "100m", 0, "")
	ok.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
		{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x", "role": "y"}}, TopologyKey: v1.LabelHostname}}}}
	if fs := unsupported(ok); len(fs) != 0 {
		t.Errorf("a valid two-label term is refused: %v", fs)
	}
}

// nsObject is a Namespace with labels.
func nsObject(name string, labels map[string]string) *v1.Namespace {
	return &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// TestDecideHonoursNamespaceSelectors: a pod's anti-affinity term that
// selects namespaces by label keeps it off the node of a matching pod of a
// namespace whose labels match, and not off one whose namespace's labels do
// not; a term with neither namespaces nor a selector covers its own
// namespace only.
func TestDecideHonoursNamespaceSelectors(t *testing.T) {
	db := func(ns, node string) *v1.Pod {
		p := testPod("db", "100m", 0, node)
		p.Namespace, p.Labels = ns, map[string]string{"app": "db", "tier": "data"}
		return p
	}
	web := func(nsSel *metav1.LabelSelector) *v1.Pod {
		p := testPod("web", "100m", 0, "")
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db", "tier": "data"}}, TopologyKey: v1.LabelHostname,
			NamespaceSelector: nsSel}}}}
		return p
	}
	prod := &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	for _, c := range []struct {
		name     string
		nsLabels map[string]string
		sel      *metav1.LabelSelector
		avoid    bool
	}{
		{"matching namespace labels", map[string]string{"env": "prod"}, prod, true},
		{"other namespace labels", map[string]string{"env": "dev"}, prod, false},
		{"empty namespace selector: every namespace", nil, &metav1.LabelSelector{}, true},
		{"no namespace selector: its own namespace", map[string]string{"env": "prod"}, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := Decide(context.Background(), DefaultConfig(), Snapshot{
				Nodes:      []*v1.Node{testNode("n1", "4", "")},
				Pods:       []*v1.Pod{db("data", "n1"), web(c.sel)},
				Namespaces: []*v1.Namespace{nsObject("w", nil), nsObject("data", c.nsLabels)},
			})
			if err != nil {
				t.Fatal(err)
			}
			// n1, where db runs, is the only node.
			got := d.Bindings["w/web"]
			if c.avoid && got != "" || !c.avoid && got != "n1" {
				t.Fatalf("web bound to %q (unschedulable %v); should avoid db's node: %v", got, d.Unschedulable, c.avoid)
			}
		})
	}
}

// TestNamespaceLabelsFollowTheInformer: a replica sees a namespace's new
// labels: the pods its terms select change with them.
func TestNamespaceLabelsFollowTheInformer(t *testing.T) {
	f := newFakeAPI(t, testNode("n1", "4", ""), nsObject("w", map[string]string{"env": "dev"}))
	s := startFake(t, f, nil)
	eventually(t, "the namespace in the state", 5*time.Second, func() bool {
		return s.brain.State().Namespaces["w"]["env"] == "dev"
	})
	ns, err := f.CoreV1().Namespaces().Get(context.Background(), "w", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns = ns.DeepCopy()
	ns.Labels = map[string]string{"env": "prod"}
	if _, err := f.CoreV1().Namespaces().Update(context.Background(), ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new labels in the state", 5*time.Second, func() bool {
		return s.brain.State().Namespaces["w"]["env"] == "prod"
	})
	if err := f.CoreV1().Namespaces().Delete(context.Background(), "w", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the namespace gone from the state", 5*time.Second, func() bool {
		_, ok := s.brain.State().Namespaces["w"]
		return !ok
	})
}
