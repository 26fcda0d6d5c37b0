// Package oracle judges weave-scheduler's decisions with kube-scheduler's own Filter plugins (v1.37.2), run
// in-process on the same objects: no API server.
package oracle

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"

	"github.com/weavesql/weave/cmd/weave-scheduler/app"
)

// fitOptions are NodeResourcesFit's Filter options under v1.37.2's default feature gates (PodLevelResources on,
// DRAExtendedResource GA; no DRA manager: no DeviceClass maps an extended resource).
var fitOptions = noderesources.ResourceRequestsOptions{EnablePodLevelResources: true, EnableDRAExtendedResource: true}

// TestNodeResourcesFitOracle: on random clusters (nodes with and without GPUs, hugepages, example.com/foo and
// ephemeral storage, some overcommitted by their bound pods; pods with containers, init containers, sidecars,
// pod-level resources, overhead, requests of 0, and bound pods in the middle of an in-place resize), every binding
// weave-scheduler decides passes kube-scheduler's NodeResourcesFit Filter on its node with every other pod there
// (those bound before and those the decision places), and every pod it leaves unschedulable fails that Filter on
// every node. Quantities are whole MiB and pages, so the state's rounding changes nothing.
func TestNodeResourcesFitOracle(t *testing.T) {
	rng := rand.New(rand.NewSource(37))
	placed, refusedNone, unplaced := 0, 0, 0
	for trial := 0; trial < 80; trial++ {
		snap := randomCluster(rng, trial)
		d, err := app.Decide(context.Background(), app.DefaultConfig(), snap)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if len(d.Refused) > 0 {
			t.Fatalf("trial %d: refused %v", trial, d.Refused)
		}
		refusedNone++
		nodes := map[string]*v1.Node{}
		for _, n := range snap.Nodes {
			nodes[n.Name] = n
		}
		// The cluster as the decision leaves it: every pod on its node.
		on := map[string][]*v1.Pod{}
		var pending []*v1.Pod
		for _, p := range snap.Pods {
			if p.Spec.NodeName != "" {
				on[p.Spec.NodeName] = append(on[p.Spec.NodeName], p)
				continue
			}
			pending = append(pending, p)
			if n, ok := d.Bindings[key(p)]; ok {
				q := p.DeepCopy()
				q.Spec.NodeName = n
				on[n] = append(on[n], q)
			}
		}
		nodeInfo := func(node string, without *v1.Pod) *framework.NodeInfo {
			var others []*v1.Pod
			for _, q := range on[node] {
				if without == nil || q.UID != without.UID {
					others = append(others, q)
				}
			}
			ni := framework.NewNodeInfo(others...)
			ni.SetNode(nodes[node])
			return ni
		}
		for _, p := range pending {
			if n, ok := d.Bindings[key(p)]; ok {
				placed++
				if r := noderesources.Fits(p, nodeInfo(n, p), nil, fitOptions); len(r) > 0 {
					t.Errorf("trial %d: %s bound to %s, which NodeResourcesFit rejects: %s", trial, key(p), n, reasons(r))
				}
				continue
			}
			if _, ok := d.Unschedulable[key(p)]; !ok {
				t.Errorf("trial %d: %s neither bound nor unschedulable", trial, key(p))
				continue
			}
			unplaced++
			for _, n := range snap.Nodes {
				if r := noderesources.Fits(p, nodeInfo(n.Name, nil), nil, fitOptions); len(r) == 0 {
					t.Errorf("trial %d: %s left unschedulable, but NodeResourcesFit lets it on %s", trial, key(p), n.Name)
				}
			}
		}
	}
	t.Logf("%d pods bound, %d left unschedulable, over %d trials", placed, unplaced, refusedNone)
	if placed < 100 || unplaced < 50 {
		t.Errorf("%d pods bound and %d unschedulable: the clusters should exercise both", placed, unplaced)
	}
}

func key(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

func reasons(r []noderesources.InsufficientResource) string {
	var out []string
	for _, x := range r {
		out = append(out, x.Reason)
	}
	sort.Strings(out)
	return fmt.Sprint(out)
}

var resourceNames = []v1.ResourceName{"nvidia.com/gpu", "example.com/foo", "hugepages-2Mi"}

// amount is a random quantity of a resource: whole millicores, MiB, units or 2Mi pages.
func amount(rng *rand.Rand, r v1.ResourceName, scale int) resource.Quantity {
	switch r {
	case v1.ResourceCPU:
		return *resource.NewMilliQuantity(int64(rng.Intn(scale*100)), resource.DecimalSI)
	case v1.ResourceMemory, v1.ResourceEphemeralStorage:
		return *resource.NewQuantity(int64(rng.Intn(scale*256))<<20, resource.BinarySI)
	case "hugepages-2Mi":
		return *resource.NewQuantity(int64(rng.Intn(scale))<<21, resource.BinarySI)
	}
	return *resource.NewQuantity(int64(rng.Intn(scale)), resource.DecimalSI)
}

// randomRequests is a container's (or a pod's) requests: cpu and memory mostly, the others now and then, 0 at
// times.
func randomRequests(rng *rand.Rand, names []v1.ResourceName, scale int) v1.ResourceList {
	out := v1.ResourceList{}
	for _, r := range names {
		if r == v1.ResourceCPU || r == v1.ResourceMemory {
			if rng.Intn(3) > 0 {
				out[r] = amount(rng, r, scale)
			}
		} else if rng.Intn(6) == 0 {
			out[r] = amount(rng, r, 3)
		}
	}
	return out
}

func randomCluster(rng *rand.Rand, trial int) app.Snapshot {
	var snap app.Snapshot
	all := append([]v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage}, resourceNames...)
	for i := 0; i < 1+rng.Intn(4); i++ {
		alloc := v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(int64(1000+rng.Intn(7000)), resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(int64(1024+rng.Intn(8192))<<20, resource.BinarySI),
			v1.ResourcePods:   *resource.NewQuantity(int64(2+rng.Intn(8)), resource.DecimalSI),
		}
		if rng.Intn(4) > 0 {
			alloc[v1.ResourceEphemeralStorage] = *resource.NewQuantity(int64(rng.Intn(8192))<<20, resource.BinarySI)
		}
		for _, r := range resourceNames {
			if rng.Intn(2) == 0 {
				alloc[r] = amount(rng, r, 8)
			}
		}
		name := fmt.Sprintf("n%d", i)
		snap.Nodes = append(snap.Nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
			Status: v1.NodeStatus{Capacity: alloc, Allocatable: alloc, Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}})
	}
	pod := func(name, node string) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "w", Name: name, UID: types.UID(fmt.Sprintf("t%d-%s", trial, name))},
			Spec: v1.PodSpec{SchedulerName: "weave-scheduler", NodeName: node}, Status: v1.PodStatus{Phase: v1.PodPending}}
		for c := 0; c < 1+rng.Intn(2); c++ {
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: fmt.Sprintf("c%d", c),
				Resources: v1.ResourceRequirements{Requests: randomRequests(rng, all, 10)}})
		}
		for c := 0; c < rng.Intn(3); c++ {
			ic := v1.Container{Name: fmt.Sprintf("i%d", c), Resources: v1.ResourceRequirements{Requests: randomRequests(rng, all, 10)}}
			if rng.Intn(2) == 0 {
				always := v1.ContainerRestartPolicyAlways
				ic.RestartPolicy = &always
			}
			p.Spec.InitContainers = append(p.Spec.InitContainers, ic)
		}
		if rng.Intn(4) == 0 {
			p.Spec.Resources = &v1.ResourceRequirements{Requests: randomRequests(rng, []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory}, 30)}
		}
		if rng.Intn(4) == 0 {
			p.Spec.Overhead = randomRequests(rng, []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory}, 3)
		}
		if node != "" {
			p.Status.Phase = v1.PodRunning
			if rng.Intn(3) == 0 { // resizing: the node holds more than the spec asks
				c := p.Spec.Containers[0]
				p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: c.Name, AllocatedResources: randomRequests(rng, []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory}, 20),
					Resources: &v1.ResourceRequirements{Requests: randomRequests(rng, []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory}, 20)}}}
			}
		}
		return p
	}
	for i := 0; i < rng.Intn(6); i++ {
		snap.Pods = append(snap.Pods, pod(fmt.Sprintf("b%d", i), snap.Nodes[rng.Intn(len(snap.Nodes))].Name))
	}
	for i := 0; i < 1+rng.Intn(8); i++ {
		snap.Pods = append(snap.Pods, pod(fmt.Sprintf("p%d", i), ""))
	}
	return snap
}
