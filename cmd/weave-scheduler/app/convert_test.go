package app

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weavesql/weave/scheduler"
)

func TestToPodAndNode(t *testing.T) {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{
			SchedulerName: "weave-scheduler",
			Containers: []v1.Container{
				{Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("100M")}},
					Ports: []v1.ContainerPort{{HostPort: 8080}}},
				{Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}},
			},
			InitContainers: []v1.Container{{Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}}}},
			Tolerations:    []v1.Toleration{{Key: "k", Operator: v1.TolerationOpExists}},
			Affinity: &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, TopologyKey: "kubernetes.io/hostname"}}}},
		},
	}
	sp := toPod(p)
	if sp.Name != "ns/p" || sp.CPU != 2000 || sp.Memory != 96 || sp.Phase != "Pending" || len(sp.HostPorts) != 1 || sp.HostPorts[0].Protocol != "TCP" {
		t.Fatalf("%+v", sp)
	}
	if len(sp.Affinity) != 1 || !sp.Affinity[0].Anti || !sp.Affinity[0].Required || !reflect.DeepEqual(sp.Affinity[0].Selector, scheduler.SelectLabels(map[string]string{"app": "web"})) {
		t.Fatalf("affinity %+v", sp.Affinity)
	}
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{v1.LabelTopologyZone: "z1"}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("1Gi"), v1.ResourcePods: resource.MustParse("110")},
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}}
	sn := toNode(n)
	if sn.CPU != 4000 || sn.Memory != 1024 || sn.Pods != 110 || sn.NotReady || sn.Zone != "z1" {
		t.Fatalf("%+v", sn)
	}
}
