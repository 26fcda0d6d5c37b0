package differential

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weavesql/weave/cmd/weave-scheduler/app"
	"github.com/weavesql/weave/e2e/internal/oracle/gen"
)

// Describe prints a finding with what it takes to read it: the pod's scheduling-relevant spec, the node (its
// labels, allocatable, taints, the pods on it in the final state) and the oracle's or weave's reason.
func (r Result) Describe(f Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %s", r.Case.Seed, f.Kind)
	if f.Pod != "" {
		fmt.Fprintf(&b, ": pod %s", f.Pod)
	}
	switch f.Kind {
	case WrongBinding:
		fmt.Fprintf(&b, " bound to %s, rejected by %s (%s): %s\n", f.Node, f.Rejection.Plugin, f.Rejection.Code, strings.Join(f.Rejection.Reasons, "; "))
		if f.Detail != "" {
			fmt.Fprintf(&b, "  (%s)\n", f.Detail)
		}
	case MissedPlacement:
		fmt.Fprintf(&b, " called unschedulable (%q) but fits %v\n", f.Detail, f.Feasible)
		if f.Why != "" {
			fmt.Fprintf(&b, "  why: %s\n", f.Why)
		}
	default:
		fmt.Fprintf(&b, ": %s\n", f.Detail)
	}
	p := r.pod(f.Pod)
	if p == nil {
		return b.String()
	}
	b.WriteString("  pod:\n")
	b.WriteString(indent(DescribePod(p), "    "))
	node := f.Node
	if f.Kind == MissedPlacement && len(f.Feasible) > 0 {
		node = f.Feasible[0]
	}
	if n := r.node(node); n != nil {
		fmt.Fprintf(&b, "  node:\n")
		b.WriteString(indent(DescribeNode(n), "    "))
		b.WriteString("    pods on it (final state):\n")
		for _, q := range r.finalPodsOn(node, f.Pod) {
			fmt.Fprintf(&b, "      %s\n", oneLine(q))
		}
	}
	return b.String()
}

func (r Result) pod(k string) *v1.Pod {
	for _, p := range r.Case.Pods() {
		if key(p) == k {
			return p
		}
	}
	return nil
}

func (r Result) node(name string) *v1.Node {
	for _, n := range r.Case.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// finalPodsOn lists the pods holding node in the final state (bound, not terminal, or bound by weave), but the
// pod judged.
func (r Result) finalPodsOn(node, except string) []*v1.Pod {
	var out []*v1.Pod
	for _, p := range r.Case.Bound {
		if p.Spec.NodeName == node && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed && key(p) != except {
			out = append(out, p)
		}
	}
	for _, p := range r.Case.Pending {
		if r.Decision.Bindings[key(p)] == node && key(p) != except {
			q := p.DeepCopy()
			q.Spec.NodeName = node
			out = append(out, q)
		}
	}
	return out
}

func indent(s, pre string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return pre + strings.Join(lines, "\n"+pre) + "\n"
}

func labelString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func resources(l v1.ResourceList) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		q := l[v1.ResourceName(k)]
		parts[i] = k + ":" + q.String()
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// Selector prints a label selector compactly: {k=v,k2=v2; k3 In [a b]; k4 Exists}.
func Selector(s *metav1.LabelSelector) string {
	if s == nil {
		return "nil"
	}
	var parts []string
	if len(s.MatchLabels) > 0 {
		parts = append(parts, strings.Trim(labelString(s.MatchLabels), "{}"))
	}
	for _, e := range s.MatchExpressions {
		if len(e.Values) > 0 {
			parts = append(parts, fmt.Sprintf("%s %s %v", e.Key, e.Operator, e.Values))
		} else {
			parts = append(parts, fmt.Sprintf("%s %s", e.Key, e.Operator))
		}
	}
	return "{" + strings.Join(parts, "; ") + "}"
}

func term(kind string, t v1.PodAffinityTerm) string {
	s := fmt.Sprintf("%s %s topologyKey=%s", kind, Selector(t.LabelSelector), t.TopologyKey)
	if len(t.Namespaces) > 0 {
		s += fmt.Sprintf(" namespaces=%v", t.Namespaces)
	}
	if t.NamespaceSelector != nil {
		s += " namespaceSelector=" + Selector(t.NamespaceSelector)
	}
	if len(t.MatchLabelKeys) > 0 {
		s += fmt.Sprintf(" matchLabelKeys=%v", t.MatchLabelKeys)
	}
	if len(t.MismatchLabelKeys) > 0 {
		s += fmt.Sprintf(" mismatchLabelKeys=%v", t.MismatchLabelKeys)
	}
	return s
}

func nodeTerm(t v1.NodeSelectorTerm) string {
	var parts []string
	for _, e := range t.MatchExpressions {
		parts = append(parts, fmt.Sprintf("%s %s %v", e.Key, e.Operator, e.Values))
	}
	for _, e := range t.MatchFields {
		parts = append(parts, fmt.Sprintf("field %s %s %v", e.Key, e.Operator, e.Values))
	}
	return "{" + strings.Join(parts, "; ") + "}"
}

// DescribePod prints the scheduling-relevant parts of a pod's spec, one per line.
func DescribePod(p *v1.Pod) string {
	var b strings.Builder
	s := &p.Spec
	fmt.Fprintf(&b, "%s/%s labels=%s phase=%s scheduler=%s", p.Namespace, p.Name, labelString(p.Labels), p.Status.Phase, s.SchedulerName)
	if s.NodeName != "" {
		fmt.Fprintf(&b, " nodeName=%s", s.NodeName)
	}
	if s.Priority != nil && *s.Priority != 0 {
		fmt.Fprintf(&b, " priority=%d", *s.Priority)
	}
	if s.PreemptionPolicy != nil && *s.PreemptionPolicy == v1.PreemptNever {
		b.WriteString(" preemptionPolicy=Never")
	}
	b.WriteString("\n")
	for _, c := range s.InitContainers {
		kind := "init container"
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			kind = "sidecar"
		}
		fmt.Fprintf(&b, "%s %s requests=%s%s\n", kind, c.Name, resources(c.Resources.Requests), ports(c))
	}
	for _, c := range s.Containers {
		fmt.Fprintf(&b, "container %s requests=%s%s", c.Name, resources(c.Resources.Requests), ports(c))
		if len(c.RestartPolicyRules) > 0 {
			fmt.Fprintf(&b, " restartPolicyRules=%s", c.RestartPolicyRules[0].Action)
		}
		b.WriteString("\n")
	}
	if s.Resources != nil {
		fmt.Fprintf(&b, "pod-level resources requests=%s limits=%s\n", resources(s.Resources.Requests), resources(s.Resources.Limits))
	}
	if len(s.Overhead) > 0 {
		fmt.Fprintf(&b, "overhead=%s runtimeClassName=%s\n", resources(s.Overhead), ptrString(s.RuntimeClassName))
	}
	if s.HostNetwork {
		fmt.Fprintf(&b, "hostNetwork hostUsers=%v\n", s.HostUsers != nil && *s.HostUsers)
	}
	if len(s.NodeSelector) > 0 {
		fmt.Fprintf(&b, "nodeSelector=%s\n", labelString(s.NodeSelector))
	}
	if a := s.Affinity; a != nil {
		if na := a.NodeAffinity; na != nil {
			if r := na.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
				var ts []string
				for _, t := range r.NodeSelectorTerms {
					ts = append(ts, nodeTerm(t))
				}
				fmt.Fprintf(&b, "nodeAffinity required (any of) %s\n", strings.Join(ts, " OR "))
			}
			for _, t := range na.PreferredDuringSchedulingIgnoredDuringExecution {
				fmt.Fprintf(&b, "nodeAffinity preferred weight=%d %s\n", t.Weight, nodeTerm(t.Preference))
			}
		}
		if pa := a.PodAffinity; pa != nil {
			for _, t := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				b.WriteString(term("podAffinity required", t) + "\n")
			}
			for _, t := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
				b.WriteString(term(fmt.Sprintf("podAffinity preferred weight=%d", t.Weight), t.PodAffinityTerm) + "\n")
			}
		}
		if pa := a.PodAntiAffinity; pa != nil {
			for _, t := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				b.WriteString(term("podAntiAffinity required", t) + "\n")
			}
			for _, t := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
				b.WriteString(term(fmt.Sprintf("podAntiAffinity preferred weight=%d", t.Weight), t.PodAffinityTerm) + "\n")
			}
		}
	}
	for _, c := range s.TopologySpreadConstraints {
		fmt.Fprintf(&b, "topologySpread %s maxSkew=%d topologyKey=%s selector=%s", c.WhenUnsatisfiable, c.MaxSkew, c.TopologyKey, Selector(c.LabelSelector))
		if c.MinDomains != nil {
			fmt.Fprintf(&b, " minDomains=%d", *c.MinDomains)
		}
		if c.NodeAffinityPolicy != nil {
			fmt.Fprintf(&b, " nodeAffinityPolicy=%s", *c.NodeAffinityPolicy)
		}
		if c.NodeTaintsPolicy != nil {
			fmt.Fprintf(&b, " nodeTaintsPolicy=%s", *c.NodeTaintsPolicy)
		}
		if len(c.MatchLabelKeys) > 0 {
			fmt.Fprintf(&b, " matchLabelKeys=%v", c.MatchLabelKeys)
		}
		b.WriteString("\n")
	}
	if len(s.Tolerations) > 0 {
		var ts []string
		for _, t := range s.Tolerations {
			ts = append(ts, fmt.Sprintf("{%s %s %s %s}", t.Key, t.Operator, t.Value, t.Effect))
		}
		fmt.Fprintf(&b, "tolerations %s\n", strings.Join(ts, " "))
	}
	if len(s.SchedulingGates) > 0 {
		fmt.Fprintf(&b, "schedulingGates %v\n", s.SchedulingGates)
	}
	if len(s.ResourceClaims) > 0 {
		fmt.Fprintf(&b, "resourceClaims %d\n", len(s.ResourceClaims))
	}
	return b.String()
}

func ports(c v1.Container) string {
	var ps []string
	for _, p := range c.Ports {
		if p.HostPort > 0 {
			ps = append(ps, fmt.Sprintf("%s:%d/%s", p.HostIP, p.HostPort, p.Protocol))
		}
	}
	if len(ps) == 0 {
		return ""
	}
	return " hostPorts=" + strings.Join(ps, ",")
}

func ptrString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// DescribeNode prints a node's labels, allocatable, taints and declared features.
func DescribeNode(n *v1.Node) string {
	var b strings.Builder
	labels := map[string]string{}
	for k, v := range n.Labels {
		if k != v1.LabelOSStable && k != v1.LabelArchStable {
			labels[k] = v
		}
	}
	fmt.Fprintf(&b, "%s labels=%s\nallocatable=%s\n", n.Name, labelString(labels), resources(n.Status.Allocatable))
	if len(n.Spec.Taints) > 0 {
		var ts []string
		for _, t := range n.Spec.Taints {
			ts = append(ts, t.ToString())
		}
		fmt.Fprintf(&b, "taints %v\n", ts)
	}
	if n.Spec.Unschedulable {
		b.WriteString("unschedulable\n")
	}
	if len(n.Status.DeclaredFeatures) > 0 {
		fmt.Fprintf(&b, "declaredFeatures %v\n", n.Status.DeclaredFeatures)
	}
	return b.String()
}

// oneLine prints a pod on a node: its name, labels, requests and anti-affinity in one line.
func oneLine(p *v1.Pod) string {
	var req []string
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			req = append(req, "sidecar:"+resources(c.Resources.Requests))
		} else {
			req = append(req, "init:"+resources(c.Resources.Requests))
		}
	}
	for _, c := range p.Spec.Containers {
		req = append(req, resources(c.Resources.Requests))
	}
	s := fmt.Sprintf("%s/%s %s %s", p.Namespace, p.Name, labelString(p.Labels), strings.Join(req, "+"))
	if p.Spec.Resources != nil {
		s += " pod-level=" + resources(p.Spec.Resources.Requests)
	}
	if len(p.Spec.Overhead) > 0 {
		s += " overhead=" + resources(p.Spec.Overhead)
	}
	if a := p.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		for _, t := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			s += "; " + term("anti", t)
		}
	}
	for _, c := range slices.Concat(p.Spec.InitContainers, p.Spec.Containers) {
		s += ports(c)
	}
	return s
}

// DescribeCase prints a whole case and weave's decision: the nodes, the bound pods, the pending pods with
// their outcome.
func DescribeCase(c *gen.Case, d app.Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "case %d: %d nodes, %d bound pods, %d pending pods\n", c.Seed, len(c.Nodes), len(c.Bound), len(c.Pending))
	for _, n := range c.Nodes {
		b.WriteString(indent(DescribeNode(n), "  "))
	}
	b.WriteString("bound pods:\n")
	for _, p := range c.Bound {
		fmt.Fprintf(&b, "  %s on %s (%s)\n", oneLine(p), p.Spec.NodeName, p.Status.Phase)
	}
	b.WriteString("pending pods:\n")
	for _, p := range c.Pending {
		k := key(p)
		outcome := "no outcome"
		switch {
		case d.Bindings[k] != "":
			outcome = "bound to " + d.Bindings[k]
		case d.Unschedulable[k] != "":
			outcome = "unschedulable: " + d.Unschedulable[k]
		case d.Refused[k] != "":
			outcome = "refused: " + d.Refused[k]
		case slices.Contains(d.Gated, k):
			outcome = "gated"
		}
		fmt.Fprintf(&b, "  → %s\n", outcome)
		b.WriteString(indent(DescribePod(p), "    "))
	}
	return b.String()
}
