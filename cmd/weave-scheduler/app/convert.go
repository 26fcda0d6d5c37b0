package app

import (
	v1 "k8s.io/api/core/v1"

	"github.com/weavesql/weave/scheduler"
)

// Conversions from the Kubernetes API objects the informers deliver to the scheduler package's view.
// Quantities become integers: CPU in millicores, memory and ephemeral storage in MiB (requests rounded up,
// capacities rounded down, so a placement the model accepts fits in bytes too).

func milli(l v1.ResourceList, r v1.ResourceName) int64 {
	q, ok := l[r]
	if !ok {
		return 0
	}
	return q.MilliValue()
}

func mib(l v1.ResourceList, r v1.ResourceName, up bool) int64 {
	q, ok := l[r]
	if !ok {
		return 0
	}
	b := q.Value()
	if up {
		return (b + (1<<20 - 1)) >> 20
	}
	return b >> 20
}

func count(l v1.ResourceList, r v1.ResourceName) int64 {
	q, ok := l[r]
	if !ok {
		return 0
	}
	return q.Value()
}

func conditionTrue(n *v1.Node, t v1.NodeConditionType) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == t {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// podKey is the scheduler package's pod name: namespace/name.
func podKey(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// toNode converts a node.
func toNode(n *v1.Node) scheduler.Node {
	a := n.Status.Allocatable
	out := scheduler.Node{
		Name:               n.Name,
		Zone:               n.Labels[v1.LabelTopologyZone],
		CPU:                milli(a, v1.ResourceCPU),
		Memory:             mib(a, v1.ResourceMemory, false),
		Storage:            mib(a, v1.ResourceEphemeralStorage, false),
		Pods:               count(a, v1.ResourcePods),
		Unschedulable:      n.Spec.Unschedulable,
		NotReady:           !conditionTrue(n, v1.NodeReady),
		NetworkUnavailable: conditionTrue(n, v1.NodeNetworkUnavailable),
		MemoryPressure:     conditionTrue(n, v1.NodeMemoryPressure),
		DiskPressure:       conditionTrue(n, v1.NodeDiskPressure),
		PIDPressure:        conditionTrue(n, v1.NodePIDPressure),
		Labels:             map[string]string{},
	}
	if _, ok := a[v1.ResourceEphemeralStorage]; !ok {
		out.Storage = 1 << 40 // not reported: no limit
	}
	for k, v := range n.Labels {
		out.Labels[k] = v
	}
	for _, t := range n.Spec.Taints {
		out.Taints = append(out.Taints, scheduler.Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
	}
	if len(n.Status.Images) > 0 {
		out.Images = map[string]int64{}
		for _, im := range n.Status.Images {
			for _, name := range im.Names {
				out.Images[name] = im.SizeBytes >> 20
			}
		}
	}
	return out
}

func requirements(rs []v1.NodeSelectorRequirement) []scheduler.NodeRequirement {
	var out []scheduler.NodeRequirement
	for _, r := range rs {
		out = append(out, scheduler.NodeRequirement{Key: r.Key, Operator: string(r.Operator), Values: append([]string(nil), r.Values...)})
	}
	return out
}

// toPod converts a pod.
func toPod(p *v1.Pod) scheduler.Pod {
	out := scheduler.Pod{
		Name:          podKey(p),
		Namespace:     p.Namespace,
		SchedulerName: p.Spec.SchedulerName,
		Phase:         string(p.Status.Phase),
		NodeName:      p.Spec.NodeName,
		Labels:        p.Labels,
		NodeSelector:  p.Spec.NodeSelector,
	}
	if out.Phase == "" {
		out.Phase = scheduler.PhasePending
	}
	if p.Spec.Priority != nil {
		out.Priority = int64(*p.Spec.Priority)
	}
	for _, o := range p.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			out.Group = o.Kind + "/" + o.Name
		}
	}
	for _, c := range p.Spec.Containers {
		out.CPU += milli(c.Resources.Requests, v1.ResourceCPU)
		out.Memory += mib(c.Resources.Requests, v1.ResourceMemory, true)
		out.Storage += mib(c.Resources.Requests, v1.ResourceEphemeralStorage, true)
		out.CPULimit += milli(c.Resources.Limits, v1.ResourceCPU)
		out.MemoryLimit += mib(c.Resources.Limits, v1.ResourceMemory, true)
		for _, port := range c.Ports {
			if port.HostPort > 0 {
				proto := string(port.Protocol)
				if proto == "" {
					proto = "TCP"
				}
				out.HostPorts = append(out.HostPorts, scheduler.HostPort{Protocol: proto, Port: int64(port.HostPort)})
			}
		}
		if c.Image != "" {
			out.Images = append(out.Images, c.Image)
		}
	}
	for _, c := range p.Spec.InitContainers {
		out.CPU = max(out.CPU, milli(c.Resources.Requests, v1.ResourceCPU))
		out.Memory = max(out.Memory, mib(c.Resources.Requests, v1.ResourceMemory, true))
		out.Storage = max(out.Storage, mib(c.Resources.Requests, v1.ResourceEphemeralStorage, true))
	}
	if p.Spec.Overhead != nil {
		out.CPU += milli(p.Spec.Overhead, v1.ResourceCPU)
		out.Memory += mib(p.Spec.Overhead, v1.ResourceMemory, true)
	}
	for _, t := range p.Spec.Tolerations {
		op := string(t.Operator)
		if op == "" {
			op = string(v1.TolerationOpEqual)
		}
		out.Tolerations = append(out.Tolerations, scheduler.Toleration{Key: t.Key, Operator: op, Value: t.Value, Effect: string(t.Effect)})
	}
	if a := p.Spec.Affinity; a != nil {
		if na := a.NodeAffinity; na != nil {
			if r := na.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
				for _, term := range r.NodeSelectorTerms {
					out.RequiredNodeAffinity = append(out.RequiredNodeAffinity, requirements(term.MatchExpressions))
				}
			}
			for _, pt := range na.PreferredDuringSchedulingIgnoredDuringExecution {
				out.PreferredNodeAffinity = append(out.PreferredNodeAffinity, scheduler.PreferredNodeTerm{Weight: int64(pt.Weight), Requirements: requirements(pt.Preference.MatchExpressions)})
			}
		}
	}
	out.Affinity = podAffinityTerms(p.Spec.Affinity)
	out.Spread = spreadConstraints(p)
	out.Terminating = p.DeletionTimestamp != nil
	// Volumes (H9): the claims, whose zones the PV/PVC informers write (volumes.go).
	out.Volumes = podClaims(p)
	return out
}
