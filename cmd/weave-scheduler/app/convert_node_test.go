package app

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/weavesql/weave/scheduler"
)

// Node affinity is converted requirement by requirement; what Kubernetes cannot parse becomes Never (the term
// matches no node), matchFields become field requirements, and a required affinity without a usable term is
// kept (non-nil) so that it matches no node.
func TestNodeAffinityConversion(t *testing.T) {
	sel := func(terms ...v1.NodeSelectorTerm) *v1.Pod {
		p := testPod("p", "100m", 0, "")
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms}}}
		return p
	}
	expr := func(key string, op v1.NodeSelectorOperator, vals ...string) v1.NodeSelectorRequirement {
		return v1.NodeSelectorRequirement{Key: key, Operator: op, Values: vals}
	}
	never := func(key string) scheduler.NodeRequirement {
		return scheduler.NodeRequirement{Key: key, Operator: scheduler.OpNever}
	}
	for _, c := range []struct {
		name string
		pod  *v1.Pod
		want [][]scheduler.NodeRequirement
	}{
		{"Gt with one integer", sel(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{expr("cores", v1.NodeSelectorOpGt, "4")}}),
			[][]scheduler.NodeRequirement{{{Key: "cores", Operator: "Gt", Values: []string{"4"}}}}},
		{"Lt with two values cannot be parsed", sel(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{expr("cores", v1.NodeSelectorOpLt, "4", "5")}}),
			[][]scheduler.NodeRequirement{{never("cores")}}},
		{"an unknown operator cannot be parsed", sel(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{expr("disk", "Matches", "ssd")}}),
			[][]scheduler.NodeRequirement{{never("disk")}}},
		{"an invalid label value cannot be parsed", sel(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{expr("disk", v1.NodeSelectorOpIn, "not a value")}}),
			[][]scheduler.NodeRequirement{{never("disk")}}},
		{"matchFields on the node's name beside an expression", sel(v1.NodeSelectorTerm{
			MatchExpressions: []v1.NodeSelectorRequirement{expr("disk", v1.NodeSelectorOpExists)},
			MatchFields:      []v1.NodeSelectorRequirement{expr("metadata.name", v1.NodeSelectorOpNotIn, "n1")}}),
			[][]scheduler.NodeRequirement{{{Key: "disk", Operator: "Exists", Values: []string{}}, {Key: "metadata.name", Operator: "NotIn", Values: []string{"n1"}, Field: true}}}},
		{"matchFields on another field cannot be parsed", sel(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{expr("spec.unschedulable", v1.NodeSelectorOpIn, "true")}}),
			[][]scheduler.NodeRequirement{{never("spec.unschedulable")}}},
		{"an empty term stays, matching nothing", sel(v1.NodeSelectorTerm{}), [][]scheduler.NodeRequirement{nil}},
		{"no terms at all", sel(), [][]scheduler.NodeRequirement{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := toPod(c.pod).RequiredNodeAffinity
			for _, term := range got {
				for i := range term {
					if term[i].Values == nil {
						term[i].Values = []string{}
					}
				}
			}
			for _, term := range c.want {
				for i := range term {
					if term[i].Values == nil && term[i].Operator != scheduler.OpNever {
						term[i].Values = []string{}
					}
				}
			}
			if got == nil || !reflect.DeepEqual(normalizeNever(got), c.want) {
				t.Errorf("got %#v\nwant %#v", got, c.want)
			}
		})
	}
}

// normalizeNever drops the values of Never requirements (they are not read).
func normalizeNever(terms [][]scheduler.NodeRequirement) [][]scheduler.NodeRequirement {
	for _, term := range terms {
		for i := range term {
			if term[i].Operator == scheduler.OpNever {
				term[i].Values = nil
			}
		}
	}
	return terms
}

// Host ports keep their address and protocol, a sidecar's count, an ordinary init container's do not;
// preemptionPolicy Never and the node's declared features are carried over.
func TestPortsPreemptionPolicyAndFeaturesConversion(t *testing.T) {
	p := testPod("p", "100m", 0, "")
	p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080, HostIP: "10.0.0.1", Protocol: v1.ProtocolUDP}, {ContainerPort: 81}}
	p.Spec.InitContainers = []v1.Container{
		{Name: "init", Ports: []v1.ContainerPort{{ContainerPort: 1, HostPort: 9001}}},
		{Name: "sidecar", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways), Ports: []v1.ContainerPort{{ContainerPort: 2, HostPort: 9002}}},
	}
	p.Spec.PreemptionPolicy = ptr.To(v1.PreemptNever)
	p.Spec.HostNetwork, p.Spec.HostUsers = true, ptr.To(false)
	sp := toPod(p)
	want := []scheduler.HostPort{{Protocol: "TCP", Port: 9002, HostIP: "0.0.0.0"}, {Protocol: "UDP", Port: 8080, HostIP: "10.0.0.1"}}
	if !reflect.DeepEqual(sp.HostPorts, want) {
		t.Errorf("host ports %+v, want %+v", sp.HostPorts, want)
	}
	if !sp.NeverPreempts {
		t.Error("preemptionPolicy Never lost")
	}
	if len(sp.Features) != 1 {
		t.Errorf("features %v: want the one a host-network pod in a user namespace needs", sp.Features)
	}
	n := testNode("n1", "4", "")
	n.Status.DeclaredFeatures = []string{"X", "Y"}
	if got := toNode(n).Features; !reflect.DeepEqual(got, []string{"X", "Y"}) {
		t.Errorf("node features %v", got)
	}
}
