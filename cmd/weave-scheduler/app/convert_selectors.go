package app

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/weavesql/weave/scheduler"
)

// Inter-pod (anti-)affinity and topology spread constraints, as kube-scheduler v1.37.2's InterPodAffinity and
// PodTopologySpread read them (framework.GetAffinityTerms, podtopologyspread's filterTopologySpreadConstraints):
// every requirement of a label selector, the namespaces a term covers, and each constraint's minDomains and
// node-inclusion policies. Nothing is narrowed: a selector the scheduler package could not hold exactly is
// refused (selectorFieldsUnsupported).

// labelSelector converts a label selector whole: nil stays nil (selects nothing), empty selects everything.
func labelSelector(s *metav1.LabelSelector) *scheduler.LabelSelector {
	if s == nil {
		return nil
	}
	out := &scheduler.LabelSelector{}
	if len(s.MatchLabels) > 0 {
		out.MatchLabels = make(map[string]string, len(s.MatchLabels))
		for k, v := range s.MatchLabels {
			out.MatchLabels[k] = v
		}
	}
	for _, e := range s.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, scheduler.LabelRequirement{
			Key: e.Key, Operator: string(e.Operator), Values: append([]string(nil), e.Values...)})
	}
	return out
}

// affinityTerm converts a pod (anti-)affinity term. matchLabelKeys and mismatchLabelKeys are not read: the API
// server merges them into the label selector when it creates the pod (MatchLabelKeysInPodAffinity, GA), and
// the InterPodAffinity plugin reads the label selector alone.
func affinityTerm(t v1.PodAffinityTerm, anti, required bool, weight int64) scheduler.PodAffinityTerm {
	return scheduler.PodAffinityTerm{Anti: anti, Required: required, Weight: weight, TopologyKey: t.TopologyKey,
		Selector: labelSelector(t.LabelSelector), Namespaces: append([]string(nil), t.Namespaces...),
		NamespaceSelector: labelSelector(t.NamespaceSelector)}
}

// podAffinityTerms converts the pod's inter-pod affinity and anti-affinity, required and preferred.
func podAffinityTerms(a *v1.Affinity) []scheduler.PodAffinityTerm {
	if a == nil {
		return nil
	}
	var out []scheduler.PodAffinityTerm
	if pa := a.PodAffinity; pa != nil {
		for _, t := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			out = append(out, affinityTerm(t, false, true, 0))
		}
		for _, t := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			out = append(out, affinityTerm(t.PodAffinityTerm, false, false, int64(t.Weight)))
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		for _, t := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			out = append(out, affinityTerm(t, true, true, 0))
		}
		for _, t := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			out = append(out, affinityTerm(t.PodAffinityTerm, true, false, int64(t.Weight)))
		}
	}
	return out
}

// spreadConstraints converts spec.topologySpreadConstraints. The label selector gets the pod's values of
// matchLabelKeys (those it carries), as PodTopologySpread merges them (MatchLabelKeysInPodTopologySpread, on by
// default; the API server's merge at creation, MatchLabelKeysInPodTopologySpreadSelectorMerge, adds the same
// requirements). A nil label selector stays nil: it counts no pod, merged or not.
func spreadConstraints(p *v1.Pod) []scheduler.SpreadConstraint {
	var out []scheduler.SpreadConstraint
	for _, c := range p.Spec.TopologySpreadConstraints {
		sel := labelSelector(c.LabelSelector)
		if sel != nil {
			for _, k := range c.MatchLabelKeys {
				if v, ok := p.Labels[k]; ok {
					sel.MatchExpressions = append(sel.MatchExpressions, scheduler.LabelRequirement{Key: k, Operator: "In", Values: []string{v}})
				}
			}
		}
		sc := scheduler.SpreadConstraint{TopologyKey: c.TopologyKey, MaxSkew: int64(c.MaxSkew),
			Hard: c.WhenUnsatisfiable == v1.DoNotSchedule, Selector: sel, MinDomains: 1}
		if c.MinDomains != nil {
			sc.MinDomains = int64(*c.MinDomains)
		}
		if c.NodeAffinityPolicy != nil {
			sc.NodeAffinityPolicy = string(*c.NodeAffinityPolicy)
		}
		if c.NodeTaintsPolicy != nil {
			sc.NodeTaintsPolicy = string(*c.NodeTaintsPolicy)
		}
		out = append(out, sc)
	}
	return out
}

// selectorFieldsUnsupported lists the inter-pod affinity and topology spread fields of a pending pod that
// weave-scheduler does not schedule: a label or namespace selector that metav1.LabelSelectorAsSelector rejects
// (kube-scheduler fails such a pod's PreFilter too), a maxSkew below 1 (which the scheduler package reads as
// its own even spreading), and a node-inclusion policy other than Honor or Ignore.
func selectorFieldsUnsupported(p *v1.Pod) []unsupportedField {
	var out []unsupportedField
	check := func(field string, s *metav1.LabelSelector) {
		if _, err := metav1.LabelSelectorAsSelector(s); err != nil {
			out = append(out, unsupportedField{field, fmt.Sprintf("the selector is invalid: %v", err)})
		}
	}
	if a := p.Spec.Affinity; a != nil {
		terms := func(path string, ts []v1.PodAffinityTerm) {
			for i, t := range ts {
				check(fmt.Sprintf("%s[%d].labelSelector", path, i), t.LabelSelector)
				check(fmt.Sprintf("%s[%d].namespaceSelector", path, i), t.NamespaceSelector)
			}
		}
		weighted := func(path string, ts []v1.WeightedPodAffinityTerm) {
			for i, t := range ts {
				check(fmt.Sprintf("%s[%d].podAffinityTerm.labelSelector", path, i), t.PodAffinityTerm.LabelSelector)
				check(fmt.Sprintf("%s[%d].podAffinityTerm.namespaceSelector", path, i), t.PodAffinityTerm.NamespaceSelector)
			}
		}
		if pa := a.PodAffinity; pa != nil {
			terms("spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution", pa.RequiredDuringSchedulingIgnoredDuringExecution)
			weighted("spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution", pa.PreferredDuringSchedulingIgnoredDuringExecution)
		}
		if pa := a.PodAntiAffinity; pa != nil {
			terms("spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution", pa.RequiredDuringSchedulingIgnoredDuringExecution)
			weighted("spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution", pa.PreferredDuringSchedulingIgnoredDuringExecution)
		}
	}
	for i, c := range p.Spec.TopologySpreadConstraints {
		path := fmt.Sprintf("spec.topologySpreadConstraints[%d]", i)
		check(path+".labelSelector", c.LabelSelector)
		for _, k := range c.MatchLabelKeys {
			if v, ok := p.Labels[k]; ok {
				if _, err := labels.NewRequirement(k, "in", []string{v}); err != nil {
					out = append(out, unsupportedField{path + ".matchLabelKeys", fmt.Sprintf("the selector is invalid: %v", err)})
				}
			}
		}
		if c.MaxSkew < 1 {
			out = append(out, unsupportedField{path + ".maxSkew", fmt.Sprintf("maxSkew %d is below 1", c.MaxSkew)})
		}
		for _, pol := range []struct {
			name string
			p    *v1.NodeInclusionPolicy
		}{{"nodeAffinityPolicy", c.NodeAffinityPolicy}, {"nodeTaintsPolicy", c.NodeTaintsPolicy}} {
			if pol.p != nil && *pol.p != v1.NodeInclusionPolicyHonor && *pol.p != v1.NodeInclusionPolicyIgnore {
				out = append(out, unsupportedField{path + "." + pol.name, fmt.Sprintf("the policy %q is neither Honor nor Ignore", *pol.p)})
			}
		}
	}
	return out
}
