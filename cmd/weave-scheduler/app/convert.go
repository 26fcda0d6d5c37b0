package app

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/weavesql/weave/scheduler"
)

// Conversions from the Kubernetes API objects the informers deliver to the scheduler package's view.
// Quantities become integers: CPU in millicores, memory and ephemeral storage in MiB (requests rounded up,
// capacities rounded down, so a placement the model accepts fits in bytes too); requests and allocatable are
// counted as NodeResourcesFit counts them (convert_resources.go).

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
	out := scheduler.Node{
		Name:               n.Name,
		Zone:               n.Labels[v1.LabelTopologyZone],
		Unschedulable:      n.Spec.Unschedulable,
		NotReady:           !conditionTrue(n, v1.NodeReady),
		NetworkUnavailable: conditionTrue(n, v1.NodeNetworkUnavailable),
		MemoryPressure:     conditionTrue(n, v1.NodeMemoryPressure),
		DiskPressure:       conditionTrue(n, v1.NodeDiskPressure),
		PIDPressure:        conditionTrue(n, v1.NodePIDPressure),
		Labels:             map[string]string{},
		Features:           append([]string(nil), n.Status.DeclaredFeatures...),
	}
	setNodeResources(&out, n) // allocatable (convert_resources.go)
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

// requirements converts the requirements of a node-selector term: matchExpressions (field false) or
// matchFields. One that Kubernetes cannot parse (nodeaffinity's nodeSelectorRequirementsAsSelector and
// ...AsFieldSelector: an invalid key or value, an unknown operator, a Gt or Lt without exactly one integer)
// makes the term match no node: it becomes a Never requirement.
func requirements(rs []v1.NodeSelectorRequirement, field bool) []scheduler.NodeRequirement {
	var out []scheduler.NodeRequirement
	for _, r := range rs {
		out = append(out, requirement(r, field))
	}
	return out
}

var selectionOps = map[v1.NodeSelectorOperator]selection.Operator{
	v1.NodeSelectorOpIn: selection.In, v1.NodeSelectorOpNotIn: selection.NotIn,
	v1.NodeSelectorOpExists: selection.Exists, v1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	v1.NodeSelectorOpGt: selection.GreaterThan, v1.NodeSelectorOpLt: selection.LessThan,
}

func requirement(r v1.NodeSelectorRequirement, field bool) scheduler.NodeRequirement {
	out := scheduler.NodeRequirement{Key: r.Key, Operator: string(r.Operator), Values: append([]string(nil), r.Values...), Field: field}
	never := scheduler.NodeRequirement{Key: r.Key, Operator: scheduler.OpNever}
	if field {
		// fields.OneTermEqualSelector / NotEqual on the node's fields, of which there is metadata.name only.
		if r.Key != metav1.ObjectNameField || len(r.Values) != 1 || (r.Operator != v1.NodeSelectorOpIn && r.Operator != v1.NodeSelectorOpNotIn) {
			return never
		}
		return out
	}
	op, ok := selectionOps[r.Operator]
	if !ok {
		return never
	}
	if _, err := labels.NewRequirement(r.Key, op, r.Values); err != nil {
		return never
	}
	return out
}

// nodeSelectorTerm converts one required or preferred term: its label and field requirements, ANDed.
func nodeSelectorTerm(t v1.NodeSelectorTerm) []scheduler.NodeRequirement {
	return append(requirements(t.MatchExpressions, false), requirements(t.MatchFields, true)...)
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
	setPodResources(&out, p) // requests and limits (convert_resources.go)
	for _, c := range p.Spec.Containers {
		if c.Image != "" {
			out.Images = append(out.Images, c.Image)
		}
	}
	out.HostPorts = hostPorts(p)
	out.Features = declaredFeatures(p)
	out.NeverPreempts = p.Spec.PreemptionPolicy != nil && *p.Spec.PreemptionPolicy == v1.PreemptNever
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
				// Non-nil even without terms: a required affinity whose terms are all empty matches no node.
				out.RequiredNodeAffinity = make([][]scheduler.NodeRequirement, 0, len(r.NodeSelectorTerms))
				for _, term := range r.NodeSelectorTerms {
					out.RequiredNodeAffinity = append(out.RequiredNodeAffinity, nodeSelectorTerm(term))
				}
			}
			for _, pt := range na.PreferredDuringSchedulingIgnoredDuringExecution {
				out.PreferredNodeAffinity = append(out.PreferredNodeAffinity, scheduler.PreferredNodeTerm{Weight: int64(pt.Weight), Requirements: nodeSelectorTerm(pt.Preference)})
			}
		}
	}
	out.Affinity = podAffinityTerms(p.Spec.Affinity)
	out.Spread = spreadConstraints(p)
	out.Terminating = p.DeletionTimestamp != nil
	out.PodGroup = podGroupOf(p) // podgroups.go
	return out
}
