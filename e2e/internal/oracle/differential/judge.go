// Package differential judges weave-scheduler's decisions (app.Decide) on generated cluster states with
// kube-scheduler v1.37.2's own plugins (package oracle): every binding must pass every Filter plugin on its
// node in the final state, every pod called unschedulable must fit no node of it, every refusal must name
// the field, and a gated pod must be neither bound nor refused.
package differential

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/weavesql/weave/cmd/weave-scheduler/app"
	"github.com/weavesql/weave/e2e/internal/oracle"
	"github.com/weavesql/weave/e2e/internal/oracle/gen"
)

// Kind is what a finding says is wrong.
type Kind string

// The kinds of findings.
const (
	// WrongBinding: a pod bound where a Filter plugin (or PreEnqueue plugin) rejects it.
	WrongBinding Kind = "wrong binding"
	// MissedPlacement: a pod called unschedulable that fits a node of the final state.
	MissedPlacement Kind = "missed placement"
	// BadRefusal: a refusal whose message names no spec field, or a refused pod that is also decided otherwise.
	BadRefusal Kind = "refusal not naming a field"
	// GatedDecided: a pod with spec.schedulingGates bound, refused or called unschedulable, or a pod
	// reported gated that has no gates.
	GatedDecided Kind = "gated pod decided"
	// Undecided: a pending pod of weave-scheduler with no outcome, or with two.
	Undecided Kind = "pod without exactly one outcome"
	// Foreign: a decision about a pod that is not a pending pod of weave-scheduler.
	Foreign Kind = "decision about another pod"
	// DecideError: app.Decide failed on the case (weave's model placed what its own check rejects, say).
	DecideError Kind = "app.Decide failed"
)

// Finding is one wrong decision.
type Finding struct {
	Kind Kind
	Pod  string // namespace/name
	// Node is the node of a wrong binding.
	Node string
	// Rejection is the oracle's rejection of a wrong binding.
	Rejection *oracle.Rejection
	// Feasible lists the nodes a missed placement fits.
	Feasible []string
	// Detail is what weave said (its reason or message), or what is wrong.
	Detail string
}

var braces = regexp.MustCompile(`\{[^}]*\}`)

// Categories group findings of the same cause: the kind and, for a wrong binding, the plugin and one of its
// reasons (a rejection for several reasons, as NodeResourcesFit's for two resources, is in one category per
// reason), taints and such ({...}) elided.
func (f Finding) Categories() []string {
	if f.Kind == WrongBinding {
		var out []string
		for _, r := range f.Rejection.Reasons {
			out = append(out, fmt.Sprintf("%s: %s: %s", f.Kind, f.Rejection.Plugin, braces.ReplaceAllString(r, "{…}")))
		}
		if len(out) == 0 {
			out = append(out, fmt.Sprintf("%s: %s", f.Kind, f.Rejection.Plugin))
		}
		return out
	}
	return []string{f.category()}
}

func (f Finding) category() string {
	switch f.Kind {
	case MissedPlacement:
		return fmt.Sprintf("%s: weave says %q", f.Kind, normaliseReason(f.Detail))
	case GatedDecided:
		return fmt.Sprintf("%s: %s", f.Kind, f.Detail)
	case DecideError:
		return fmt.Sprintf("%s: %s", f.Kind, decideErrorClass(f.Detail))
	}
	return string(f.Kind)
}

var (
	digits  = regexp.MustCompile(`[0-9]+`)
	checkID = regexp.MustCompile(`\b[HNS][0-9]+[a-z]?\b`)
)

// decideErrorClass keeps what identifies a failure of app.Decide: for a solution its independent check
// rejected, the policies named.
func decideErrorClass(msg string) string {
	const rejected = "solution rejected by the independent check"
	if strings.Contains(msg, rejected) {
		ids := checkID.FindAllString(msg[strings.Index(msg, rejected):], -1)
		slices.Sort(ids)
		return rejected + ": " + strings.Join(slices.Compact(ids), ", ")
	}
	return normaliseReason(msg)
}

func normaliseReason(s string) string { return digits.ReplaceAllString(s, "N") }

// Outcome counts a case's decisions.
type Outcome struct {
	Bound, Unschedulable, Refused, Gated int
}

// Result is the judgement of one case.
type Result struct {
	Case     *gen.Case
	Decision app.Decision
	Findings []Finding
	Outcome  Outcome
}

// fieldInMessage is how a refusal names the field: spec.something.
var fieldInMessage = regexp.MustCompile(`\bspec\.[A-Za-z]`)

// Judge checks weave's decision d on case c with the oracle.
func Judge(ctx context.Context, o *oracle.Oracle, c *gen.Case, d app.Decision) (Result, error) {
	res := Result{Case: c, Decision: d, Outcome: Outcome{len(d.Bindings), len(d.Unschedulable), len(d.Refused), len(d.Gated)}}
	add := func(f Finding) { res.Findings = append(res.Findings, f) }

	ours := map[string]*v1.Pod{}
	for _, p := range c.Pending {
		if p.Spec.SchedulerName == gen.SchedulerName && p.Spec.NodeName == "" {
			ours[key(p)] = p
		}
	}
	gated := map[string]bool{}
	for _, k := range d.Gated {
		gated[k] = true
	}
	// One outcome per pending pod of weave's, none for the others.
	outcomes := map[string][]string{}
	for k := range d.Bindings {
		outcomes[k] = append(outcomes[k], "bound")
	}
	for k := range d.Unschedulable {
		outcomes[k] = append(outcomes[k], "unschedulable")
	}
	for k := range d.Refused {
		outcomes[k] = append(outcomes[k], "refused")
	}
	for k := range gated {
		outcomes[k] = append(outcomes[k], "gated")
	}
	for _, k := range sortedKeys(outcomes) {
		if ours[k] == nil {
			add(Finding{Kind: Foreign, Pod: k, Detail: strings.Join(outcomes[k], ", ")})
		}
	}
	for _, k := range sortedKeys(ours) {
		p, out := ours[k], outcomes[k]
		hasGates := len(p.Spec.SchedulingGates) > 0
		switch {
		case hasGates && !slices.Equal(out, []string{"gated"}):
			add(Finding{Kind: GatedDecided, Pod: k, Detail: "a pod with spec.schedulingGates is " + orNone(out)})
		case !hasGates && gated[k]:
			add(Finding{Kind: GatedDecided, Pod: k, Detail: "a pod without spec.schedulingGates is reported gated"})
		case len(out) != 1:
			add(Finding{Kind: Undecided, Pod: k, Detail: orNone(out)})
		}
		if msg, ok := d.Refused[k]; ok && !fieldInMessage.MatchString(msg) {
			add(Finding{Kind: BadRefusal, Pod: k, Detail: msg})
		}
	}

	// The final state: every binding applied.
	final := oracle.Cluster{Nodes: c.Nodes, Namespaces: c.Namespaces, Pods: slices.Clone(c.Bound)}
	placed := map[string]*v1.Pod{}
	for _, k := range sortedKeys(d.Bindings) {
		p := ours[k]
		if p == nil {
			continue
		}
		b := p.DeepCopy()
		b.Spec.NodeName = d.Bindings[k]
		placed[k] = b
		final.Pods = append(final.Pods, b)
	}
	for _, p := range c.Pending {
		if placed[key(p)] == nil {
			final.Pods = append(final.Pods, p) // pending: the oracle leaves them out, as kube-scheduler's cache does
		}
	}
	for _, k := range sortedKeys(placed) {
		// The pod as it was pending, judged against the final state without it (Judge leaves out the
		// bound copy of the same name): as kube-scheduler would judge it last.
		node := d.Bindings[k]
		v, err := o.Judge(ctx, final, ours[k])
		if err != nil {
			return res, fmt.Errorf("seed %d: %s: %w", c.Seed, k, err)
		}
		if !v.Passes(node) {
			r := v.Nodes[node]
			if r == nil {
				r = &oracle.Rejection{Plugin: "(none)", Reasons: []string{"node " + node + " is not in the cluster"}}
			}
			add(Finding{Kind: WrongBinding, Pod: k, Node: node, Rejection: r})
		}
	}
	for _, k := range sortedKeys(d.Unschedulable) {
		p := ours[k]
		if p == nil {
			continue
		}
		v, err := o.Judge(ctx, final, p)
		if err != nil {
			return res, fmt.Errorf("seed %d: %s: %w", c.Seed, k, err)
		}
		if f := v.Feasible(); len(f) > 0 {
			add(Finding{Kind: MissedPlacement, Pod: k, Feasible: f, Detail: d.Unschedulable[k]})
		}
	}
	return res, nil
}

func key(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

func orNone(out []string) string {
	if len(out) == 0 {
		return "without outcome"
	}
	sort.Strings(out)
	return strings.Join(out, " and ")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
