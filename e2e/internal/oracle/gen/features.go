package gen

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Features lists the scheduling-relevant fields a pod's spec uses, read from the spec itself (not from how it
// was generated), sorted, each as "spec.<field>[:<variant>]": the coverage of a differential run.
func Features(p *v1.Pod) []string {
	f := sets.New[string]()
	s := &p.Spec
	selector := func(prefix string, sel *metav1.LabelSelector) {
		if sel == nil {
			f.Insert(prefix + ".labelSelector=nil")
			return
		}
		n := len(sel.MatchLabels) + len(sel.MatchExpressions)
		if n > 1 {
			f.Insert(prefix + ".labelSelector:several-requirements")
		}
		if len(sel.MatchLabels) > 1 {
			f.Insert(prefix + ".labelSelector.matchLabels:several")
		}
		for _, e := range sel.MatchExpressions {
			op := string(e.Operator)
			if e.Operator == metav1.LabelSelectorOpIn && len(e.Values) > 1 {
				op += ":several-values"
			}
			f.Insert(prefix + ".labelSelector.matchExpressions:" + op)
		}
	}
	term := func(prefix string, t v1.PodAffinityTerm) {
		f.Insert(prefix)
		selector(prefix, t.LabelSelector)
		f.Insert(prefix + ".topologyKey=" + t.TopologyKey)
		if len(t.Namespaces) > 0 {
			f.Insert(prefix + ".namespaces")
		}
		if t.NamespaceSelector != nil {
			if len(t.NamespaceSelector.MatchLabels)+len(t.NamespaceSelector.MatchExpressions) == 0 {
				f.Insert(prefix + ".namespaceSelector:all")
			} else {
				f.Insert(prefix + ".namespaceSelector")
			}
		}
		if len(t.MatchLabelKeys) > 0 {
			f.Insert(prefix + ".matchLabelKeys")
		}
		if len(t.MismatchLabelKeys) > 0 {
			f.Insert(prefix + ".mismatchLabelKeys")
		}
	}
	if a := s.Affinity; a != nil {
		if pa := a.PodAffinity; pa != nil {
			for _, t := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				term("podAffinity.required", t)
			}
			for _, t := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
				term("podAffinity.preferred", t.PodAffinityTerm)
			}
		}
		if pa := a.PodAntiAffinity; pa != nil {
			for _, t := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				term("podAntiAffinity.required", t)
			}
			for _, t := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
				term("podAntiAffinity.preferred", t.PodAffinityTerm)
			}
		}
		if na := a.NodeAffinity; na != nil {
			nterm := func(prefix string, t v1.NodeSelectorTerm) {
				f.Insert(prefix)
				for _, e := range t.MatchExpressions {
					f.Insert(prefix + ".matchExpressions:" + string(e.Operator))
				}
				if len(t.MatchFields) > 0 {
					f.Insert(prefix + ".matchFields")
				}
			}
			if r := na.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
				if len(r.NodeSelectorTerms) > 1 {
					f.Insert("nodeAffinity.required:several-terms")
				}
				for _, t := range r.NodeSelectorTerms {
					nterm("nodeAffinity.required", t)
				}
			}
			for _, t := range na.PreferredDuringSchedulingIgnoredDuringExecution {
				nterm("nodeAffinity.preferred", t.Preference)
			}
		}
	}
	for _, c := range s.TopologySpreadConstraints {
		pre := "topologySpreadConstraints." + string(c.WhenUnsatisfiable)
		f.Insert(pre)
		selector("topologySpreadConstraints", c.LabelSelector)
		f.Insert("topologySpreadConstraints.topologyKey=" + c.TopologyKey)
		if c.MaxSkew > 1 {
			f.Insert("topologySpreadConstraints.maxSkew>1")
		}
		if c.MinDomains != nil {
			f.Insert("topologySpreadConstraints.minDomains")
		}
		if c.NodeAffinityPolicy != nil {
			f.Insert("topologySpreadConstraints.nodeAffinityPolicy=" + string(*c.NodeAffinityPolicy))
		}
		if c.NodeTaintsPolicy != nil {
			f.Insert("topologySpreadConstraints.nodeTaintsPolicy=" + string(*c.NodeTaintsPolicy))
		}
		if len(c.MatchLabelKeys) > 0 {
			f.Insert("topologySpreadConstraints.matchLabelKeys")
		}
	}
	if len(s.TopologySpreadConstraints) > 1 {
		f.Insert("topologySpreadConstraints:several")
	}
	if len(s.NodeSelector) > 0 {
		f.Insert("nodeSelector")
	}
	for _, t := range s.Tolerations {
		f.Insert("tolerations")
		switch {
		case t.Key == "" && t.Operator == v1.TolerationOpExists:
			f.Insert("tolerations:emptyKey+Exists")
		case t.Operator == "":
			f.Insert("tolerations.operator:empty")
		default:
			f.Insert("tolerations.operator:" + string(t.Operator))
		}
		if t.Effect == "" {
			f.Insert("tolerations.effect:any")
		} else {
			f.Insert("tolerations.effect:" + string(t.Effect))
		}
		if t.Key == v1.TaintNodeUnschedulable {
			f.Insert("tolerations:unschedulable")
		}
	}
	resources := func(prefix string, l v1.ResourceList) {
		for r, q := range l {
			if !q.IsZero() {
				f.Insert(prefix + ":" + string(r))
			}
		}
	}
	for _, c := range s.Containers {
		resources("containers.resources.requests", c.Resources.Requests)
		if len(c.RestartPolicyRules) > 0 {
			f.Insert("containers.restartPolicyRules")
		}
	}
	if len(s.Containers) > 1 {
		f.Insert("containers:several")
	}
	for _, c := range s.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			f.Insert("initContainers:sidecar")
			resources("initContainers:sidecar.resources.requests", c.Resources.Requests)
		} else {
			f.Insert("initContainers")
			resources("initContainers.resources.requests", c.Resources.Requests)
		}
	}
	if s.Resources != nil {
		f.Insert("resources (pod-level)")
	}
	if len(s.Overhead) > 0 {
		f.Insert("overhead")
	}
	if s.RuntimeClassName != nil {
		f.Insert("runtimeClassName")
	}
	for _, c := range append(append([]v1.Container{}, s.InitContainers...), s.Containers...) {
		for _, pt := range c.Ports {
			if pt.HostPort == 0 {
				continue
			}
			f.Insert("hostPort")
			if pt.HostIP != "" {
				f.Insert("hostPort.hostIP=" + pt.HostIP)
			}
			f.Insert("hostPort.protocol=" + string(pt.Protocol))
		}
	}
	if s.HostNetwork {
		f.Insert("hostNetwork")
	}
	if s.HostUsers != nil && !*s.HostUsers {
		f.Insert("hostUsers=false")
	}
	if len(s.SchedulingGates) > 0 {
		f.Insert("schedulingGates")
	}
	if len(s.ResourceClaims) > 0 {
		f.Insert("resourceClaims")
	}
	if s.Priority != nil && *s.Priority != 0 {
		f.Insert("priority")
	}
	if s.PreemptionPolicy != nil && *s.PreemptionPolicy == v1.PreemptNever {
		f.Insert("preemptionPolicy=Never")
	}
	out := sets.List(f)
	for i := range out {
		out[i] = "spec." + out[i]
	}
	sort.Strings(out)
	return out
}
