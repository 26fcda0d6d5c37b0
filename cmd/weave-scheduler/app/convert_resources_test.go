package app

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func rl(kv ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func ctr(name string, req v1.ResourceList) v1.Container {
	return v1.Container{Name: name, Resources: v1.ResourceRequirements{Requests: req}}
}

func sidecar(name string, req v1.ResourceList) v1.Container {
	c := ctr(name, req)
	always := v1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

// TestPodRequestsAsNodeResourcesFitCounts: requests computed by hand from the
// sidecar-container rule (restartable init containers run beside the
// containers and beside every later init container), pod-level resources,
// overhead and a resize in progress, in the state's units.
func TestPodRequestsAsNodeResourcesFitCounts(t *testing.T) {
	type want struct {
		cpu, mem, sto int64
		res           map[string]int64
	}
	cases := []struct {
		name string
		pod  *v1.Pod
		want want
	}{{
		// containers: cpu 3, memory 100M, gpu 1, foo 3, hugepages 10Mi, storage 1Gi
		// sidecar (2nd init container): cpu 500m, memory 256Mi, gpu 1 — added to the containers
		// init 1: cpu 2, memory 1Gi; init 2 (after the sidecar): cpu 1 + 500m, memory 2Gi + 256Mi, hugepages 20Mi
		// cpu: max(3 + 0.5, 2, 1.5) = 3.5, + overhead 100m = 3600m
		//   (the sidecar counted as an init container: max(3, 2, 0.5, 1) + 0.1 = 3100m)
		// memory: max(100M + 256Mi, 1Gi, 2Gi + 256Mi) = 2,415,919,104 B, + overhead 64M = 2,479,919,104 B
		//   = 2365.03 MiB → 2366 (each container rounded up alone: 2048 + 62 = 2110)
		// gpu: 1 + 1 = 2 (the sidecar's beside the container's); hugepages-2Mi: max(10Mi, 20Mi) = 10 pages
		name: "sidecar, init containers, containers and overhead",
		pod: &v1.Pod{Spec: v1.PodSpec{
			InitContainers: []v1.Container{
				ctr("init-1", rl("cpu", "2", "memory", "1Gi")),
				sidecar("proxy", rl("cpu", "500m", "memory", "256Mi", "nvidia.com/gpu", "1")),
				ctr("init-2", rl("cpu", "1", "memory", "2Gi", "hugepages-2Mi", "20Mi")),
			},
			Containers: []v1.Container{
				ctr("main", rl("cpu", "2", "memory", "100M", "nvidia.com/gpu", "1", "hugepages-2Mi", "10Mi", "ephemeral-storage", "1Gi")),
				ctr("helper", rl("cpu", "1", "example.com/foo", "3")),
			},
			Overhead: rl("cpu", "100m", "memory", "64M"),
		}},
		want: want{3600, 2366, 1024, map[string]int64{"nvidia.com/gpu": 2, "example.com/foo": 3, "hugepages-2Mi": 10}},
	}, {
		// spec.resources names cpu, memory and hugepages-1Gi: they replace the containers' sum (cpu 1,
		// memory 512Mi); the GPU is a container's.
		name: "pod-level resources",
		pod: &v1.Pod{Spec: v1.PodSpec{
			Resources:  &v1.ResourceRequirements{Requests: rl("cpu", "4", "memory", "1Gi", "hugepages-1Gi", "2Gi")},
			Containers: []v1.Container{ctr("main", rl("cpu", "1", "memory", "512Mi", "nvidia.com/gpu", "1"))},
		}},
		want: want{4000, 1024, 0, map[string]int64{"nvidia.com/gpu": 1, "hugepages-1Gi": 2}},
	}, {
		// Bound, scaling down from 2 CPUs to 1: allocated and actual are still 2, and the node holds 2.
		name: "a bound pod's resize in progress",
		pod: &v1.Pod{Spec: v1.PodSpec{NodeName: "n1", Containers: []v1.Container{ctr("main", rl("cpu", "1", "memory", "1Gi"))}},
			Status: v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "main", AllocatedResources: rl("cpu", "2", "memory", "1Gi"),
				Resources: &v1.ResourceRequirements{Requests: rl("cpu", "2", "memory", "1Gi")}}}}},
		want: want{2000, 1024, 0, nil},
	}, {
		// Bound, asking for 4 CPUs the node cannot give (Infeasible): the node holds what is allocated.
		name: "a bound pod's infeasible resize",
		pod: &v1.Pod{Spec: v1.PodSpec{NodeName: "n1", Containers: []v1.Container{ctr("main", rl("cpu", "4"))}},
			Status: v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonInfeasible}},
				ContainerStatuses: []v1.ContainerStatus{{Name: "main", AllocatedResources: rl("cpu", "1"), Resources: &v1.ResourceRequirements{Requests: rl("cpu", "1")}}}}},
		want: want{1000, 0, 0, nil},
	}, {
		// Bound with pod-level resources being resized: status.allocatedResources and status.resources hold 3.
		name: "a bound pod's pod-level resize in progress",
		pod: &v1.Pod{Spec: v1.PodSpec{NodeName: "n1", Resources: &v1.ResourceRequirements{Requests: rl("cpu", "2")},
			Containers: []v1.Container{ctr("main", nil)}},
			Status: v1.PodStatus{AllocatedResources: rl("cpu", "3"), Resources: &v1.ResourceRequirements{Requests: rl("cpu", "3")}}},
		want: want{3000, 0, 0, nil},
	}, {
		// Not bound: a pod to place is its spec (NodeResourcesFit's PreFilter reads no status).
		name: "a pending pod reads no status",
		pod: &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{ctr("main", rl("cpu", "1"))}},
			Status: v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "main", AllocatedResources: rl("cpu", "2")}}}},
		want: want{1000, 0, 0, nil},
	}, {
		// Requests of 0 and resources the plugin does not count (pods) leave nothing.
		name: "requests of 0",
		pod:  &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{ctr("main", rl("nvidia.com/gpu", "0", "cpu", "0", "pods", "1"))}}},
		want: want{0, 0, 0, nil},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.pod.Name, c.pod.Namespace = "p", "ns"
			sp := toPod(c.pod)
			got := want{sp.CPU, sp.Memory, sp.Storage, sp.Resources}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestNodeAllocatableAsNodeResourcesFitCounts: scalar resources in the
// state's units (rounded down), nothing reported is 0, and amounts beyond
// maxUnits count as maxUnits.
func TestNodeAllocatableAsNodeResourcesFitCounts(t *testing.T) {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: v1.NodeStatus{Allocatable: rl(
		"cpu", "8", "memory", "16Gi", "pods", "110", "nvidia.com/gpu", "4", "hugepages-2Mi", "1Gi", "hugepages-1Gi", "2560Mi",
		"example.com/foo", "1T", "example.com/none", "0", "attachable-volumes-aws-ebs", "39")}}
	sn := toNode(n)
	want := map[string]int64{"nvidia.com/gpu": 4, "hugepages-2Mi": 512, "hugepages-1Gi": 2, "example.com/foo": math.MaxInt32,
		"attachable-volumes-aws-ebs": 39}
	if sn.CPU != 8000 || sn.Memory != 16384 || sn.Pods != 110 || sn.Storage != 0 || !reflect.DeepEqual(sn.Resources, want) {
		t.Errorf("cpu %d memory %d pods %d storage %d resources %v; want 8000 16384 110 0 %v", sn.CPU, sn.Memory, sn.Pods, sn.Storage, sn.Resources, want)
	}
}

// TestRequestsBeyondTheStateAreRefused: a pending pod requesting more of a
// resource than the state counts is refused, naming the resource; a bound
// pod's such request counts as maxUnits.
func TestRequestsBeyondTheStateAreRefused(t *testing.T) {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: v1.PodSpec{
		Containers: []v1.Container{ctr("main", rl("cpu", "1", "example.com/foo", "3G", "memory", "3Pi"))}}}
	fs := unsupported(p)
	msg := refusalMessage(fs)
	if len(fs) != 2 || !strings.Contains(msg, "resources.requests[example.com/foo]") || !strings.Contains(msg, "resources.requests[memory]") {
		t.Fatalf("refusal %q", msg)
	}
	p.Spec.Containers[0].Resources.Requests = rl("cpu", "1", "example.com/foo", "2G", "memory", "1Gi")
	if fs := unsupported(p); len(fs) != 0 {
		t.Fatalf("refused %v", fs)
	}
	p.Spec.NodeName = "n"
	p.Spec.Containers[0].Resources.Requests = rl("example.com/foo", "3G")
	if got := toPod(p).Resources["example.com/foo"]; got != math.MaxInt32 {
		t.Errorf("a bound pod's 3G example.com/foo counts %d", got)
	}
}

// TestDecideCountsResourcesAsNodeResourcesFit: through the informers' conversion, a GPU pod never lands on a
// node without a free GPU (a bound pod's sidecar holds one too), and hugepages are counted per node.
func TestDecideCountsResourcesAsNodeResourcesFit(t *testing.T) {
	withAlloc := func(n *v1.Node, kv ...string) *v1.Node {
		for k, q := range rl(kv...) {
			n.Status.Allocatable[k], n.Status.Capacity[k] = q, q
		}
		return n
	}
	asking := func(p *v1.Pod, kv ...string) *v1.Pod {
		for k, q := range rl(kv...) {
			p.Spec.Containers[0].Resources.Requests[k] = q
		}
		return p
	}
	holder := asking(testPod("holder", "100m", 0, "full"), "nvidia.com/gpu", "1")
	holder.Spec.InitContainers = []v1.Container{sidecar("agent", rl("nvidia.com/gpu", "1"))}
	d, err := Decide(context.Background(), DefaultConfig(), Snapshot{
		Nodes: []*v1.Node{testNode("cpu-only", "16", ""), withAlloc(testNode("full", "16", ""), "nvidia.com/gpu", "2"),
			withAlloc(testNode("g1", "16", ""), "nvidia.com/gpu", "1", "hugepages-2Mi", "1Gi")},
		Pods: []*v1.Pod{holder, asking(testPod("one", "100m", 0, ""), "nvidia.com/gpu", "1"),
			asking(testPod("one-more", "100m", 0, ""), "nvidia.com/gpu", "1"),
			asking(testPod("huge-a", "100m", 0, ""), "hugepages-2Mi", "600Mi"), asking(testPod("huge-b", "100m", 0, ""), "hugepages-2Mi", "600Mi")},
	})
	if err != nil {
		t.Fatal(err)
	}
	gpus := d.Bindings["w/one"] + d.Bindings["w/one-more"]
	_, a := d.Bindings["w/huge-a"]
	_, b := d.Bindings["w/huge-b"]
	if gpus != "g1" || a == b || d.Bindings["w/huge-a"]+d.Bindings["w/huge-b"] != "g1" || len(d.Unschedulable) != 2 {
		t.Errorf("bindings %v unschedulable %v; want one GPU pod and one hugepages pod on g1, the others unschedulable", d.Bindings, d.Unschedulable)
	}
}
