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
	"github.com/weavesql/weave/scheduler"
)

// Kind is what a finding says is wrong.
type Kind string

// The kinds of findings.
const (
	// WrongBinding: a pod bound where a Filter plugin (or PreEnqueue plugin) rejects it.
	WrongBinding Kind = "wrong binding"
	// MissedPlacement: a pod called unschedulable that fits a node of the final state.
	MissedPlacement Kind = "missed placement"
	// BadRefusal: a refusal whose message names no spec field.
	BadRefusal Kind = "refusal not naming a field"
	// GatedDecided: a pod with spec.schedulingGates bound, refused or called unschedulable, or a pod
	// reported gated that has no gates.
	GatedDecided Kind = "gated pod decided"
	// Undecided: a pending pod of weave-scheduler with no outcome, or with two.
	Undecided Kind = "pod without exactly one outcome"
	// Foreign: a decision about a pod that is not a pending pod of weave-scheduler.
	Foreign Kind = "decision about another pod"
	// DecideError: app.Decide failed on the case.
	DecideError Kind = "app.Decide failed"
	// CheckRejected: weave's model placed a pod that its own independent check then rejected (the
	// scheduler leaves it for the next batch: Config.DropRejected); the two disagree.
	CheckRejected Kind = "placement rejected by weave's own check"
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
	// Why explains a missed placement, if Attribute was asked to (it names the policy to blame).
	Why string
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
		if f.Why != "" {
			return fmt.Sprintf("%s: %s", f.Kind, f.Why)
		}
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
	// ReplayExhausted says the search for an order of the bindings ran out of budget: they were judged in
	// the final state instead.
	ReplayExhausted bool
}

// fieldInMessage is how a refusal names the field: spec.something.
var fieldInMessage = regexp.MustCompile(`\bspec\.[A-Za-z]`)

// Judge checks weave's decision d on case c with the oracle. A binding is judged in the final state (every
// other binding made); where the verdict depends on the order in which kube-scheduler, one pod at a time,
// would have made them (required pod affinity, topology spread), it is right if some order lets
// kube-scheduler make it (replay). The pods called unschedulable are judged against the final state
// (kube-scheduler trying them last).
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
		final.Pods = append(final.Pods, b)
		if len(p.Spec.SchedulingGates) == 0 { // a gated pod bound is a GatedDecided finding, not judged again
			placed[k] = b
		}
	}
	for _, p := range c.Pending {
		if d.Bindings[key(p)] == "" || ours[key(p)] == nil {
			final.Pods = append(final.Pods, p) // pending: the oracle leaves them out, as kube-scheduler's cache does
		}
	}
	// Some order in which kube-scheduler, one pod at a time, lets every pod onto its node makes every binding
	// right: each pod is judged with the pods placed before it, and the last pod placed on a node with all of
	// them, so resources, ports and anti-affinity (checked both ways) are judged in full too. Found greedily,
	// it spares the judgements below, most of the cost of a judgement of many bindings (a live cluster's).
	ok, err := greedy(ctx, o, final, ours, placed, replayOrder(placed))
	if err != nil {
		return res, fmt.Errorf("seed %d: %w", c.Seed, err)
	}
	if ok {
		err := judgeUnschedulable(ctx, o, c, d, final, ours, add)
		return res, err
	}
	// Else each binding against the final state first. A rejection there by a plugin whose verdict does not
	// depend on the order of the bindings (resources and ports count every pod of the node; anti-affinity is
	// checked both ways; the rest read the node alone) is final. Required pod affinity and topology spread
	// depend on the order: those bindings, and all that pass, are replayed.
	atFinal := map[string]*oracle.Rejection{}
	replayed := map[string]*v1.Pod{}
	for _, k := range sortedKeys(placed) {
		v, err := o.Judge(ctx, final, ours[k])
		if err != nil {
			return res, fmt.Errorf("seed %d: %s: %w", c.Seed, k, err)
		}
		r := v.Nodes[d.Bindings[k]]
		if r == nil && !v.Passes(d.Bindings[k]) {
			r = &oracle.Rejection{Plugin: "(none)", Reasons: []string{"node " + d.Bindings[k] + " is not in the cluster"}}
		}
		atFinal[k] = r
		if r != nil && orderDependent(r) && r.Plugin == "InterPodAffinity" {
			// Fewer pods match fewer terms: only as its term's first pod (no pod matching anywhere, and it
			// matching its own terms) can a pod refused by its required affinity in the final state pass
			// earlier. The empty cluster tells whether it can be a first pod.
			v, err := o.Judge(ctx, oracle.Cluster{Nodes: final.Nodes, Namespaces: final.Namespaces}, ours[k])
			if err != nil {
				return res, fmt.Errorf("seed %d: %s: %w", c.Seed, k, err)
			}
			if e := v.Nodes[d.Bindings[k]]; e != nil && e.Plugin == "InterPodAffinity" {
				continue
			}
		}
		if r == nil || orderDependent(r) {
			replayed[k] = placed[k]
		}
	}
	stuck, exhausted, err := replay(ctx, o, final, ours, replayed)
	if err != nil {
		return res, fmt.Errorf("seed %d: %w", c.Seed, err)
	}
	if exhausted {
		// No order found within the budget, and none ruled out: the final state judges.
		res.ReplayExhausted = true
		stuck = map[string]*oracle.Rejection{}
		for k := range replayed {
			if atFinal[k] != nil {
				stuck[k] = atFinal[k]
			}
		}
	}
	for _, k := range sortedKeys(placed) {
		_, replay := replayed[k]
		s, isStuck := stuck[k]
		switch {
		case !replay:
			add(Finding{Kind: WrongBinding, Pod: k, Node: d.Bindings[k], Rejection: atFinal[k]})
		case isStuck && atFinal[k] != nil:
			add(Finding{Kind: WrongBinding, Pod: k, Node: d.Bindings[k], Rejection: atFinal[k]})
		case isStuck:
			add(Finding{Kind: WrongBinding, Pod: k, Node: d.Bindings[k], Rejection: s,
				Detail: "it passes once every other binding is made, but no order of weave's bindings lets kube-scheduler make them all"})
		}
	}
	err = judgeUnschedulable(ctx, o, c, d, final, ours, add)
	return res, err
}

// judgeUnschedulable judges the pods called unschedulable against the final state (kube-scheduler trying
// them last): one that fits a node is a missed placement.
func judgeUnschedulable(ctx context.Context, o *oracle.Oracle, c *gen.Case, d app.Decision, final oracle.Cluster,
	ours map[string]*v1.Pod, add func(Finding)) error {
	for _, k := range sortedKeys(d.Unschedulable) {
		p := ours[k]
		if p == nil {
			continue
		}
		if strings.HasPrefix(d.Unschedulable[k], scheduler.ReasonCheckRejected) {
			add(Finding{Kind: CheckRejected, Pod: k, Detail: d.Unschedulable[k]})
			continue
		}
		v, err := o.Judge(ctx, final, p)
		if err != nil {
			return fmt.Errorf("seed %d: %s: %w", c.Seed, k, err)
		}
		if f := v.Feasible(); len(f) > 0 {
			add(Finding{Kind: MissedPlacement, Pod: k, Feasible: f, Detail: d.Unschedulable[k]})
		}
	}
	return nil
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

// orderDependent reports whether a rejection in the final state may be an artefact of judging every binding
// against all the others: required pod affinity (a pod placed before its peers may be its term's first pod)
// and topology spread (a pod bound later counts in the domain of one bound before, without checking its
// constraint).
func orderDependent(r *oracle.Rejection) bool {
	if r.Plugin == "PodTopologySpread" {
		return true
	}
	return r.Plugin == "InterPodAffinity" && slices.ContainsFunc(r.Reasons, func(s string) bool {
		return strings.Contains(s, "didn't match pod affinity rules")
	})
}

// replayOrder is the order in which greedy and replay try the bindings: first the pods whose own verdict depends
// on the pods placed before them (a DoNotSchedule topology spread constraint: the pods before it are counted;
// required pod affinity: its peers must come first), then the others, each part in name order. A pod of the
// second part counts in the spread domains of the first without being judged by them, so trying it last lets
// the first through, where name order could place it first and leave the search to backtrack out of it.
func replayOrder(placed map[string]*v1.Pod) []string {
	keys := sortedKeys(placed)
	dependent := func(k string) bool {
		p := placed[k]
		if a := p.Spec.Affinity; a != nil && a.PodAffinity != nil && len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
			return true
		}
		return slices.ContainsFunc(p.Spec.TopologySpreadConstraints, func(c v1.TopologySpreadConstraint) bool {
			return c.WhenUnsatisfiable == v1.DoNotSchedule
		})
	}
	slices.SortStableFunc(keys, func(a, b string) int {
		da, db := dependent(a), dependent(b)
		switch {
		case da == db:
			return 0
		case da:
			return -1
		}
		return 1
	})
	return keys
}

// replayBudget bounds the judgements of replay per binding: the search backtracks only when an order
// gets stuck, which a topology-spread constraint can cause (a pod counted by another pod's constraint but not
// carrying it) and little else.
const replayBudget = 40

// replay looks for an order in which kube-scheduler, placing the given bindings one at a time onto the
// cluster as it was (with weave's other bindings made), lets every pod onto its node: first greedily (sweeps
// in replayOrder, each pod placed as soon as it passes), then, if that gets stuck, depth first, in replayOrder,
// backtracking from dead ends.
// It returns the pods of the deepest order found that it could not place, each with its rejection there, or
// exhausted if it ran out of budget before finding an order or ruling every one out. More than 62 bindings
// (a live cluster's) are searched greedily only: if that gets stuck, the search is exhausted.
// Resources, ports and (anti-)affinity do not depend on the order but for required affinity between pods
// bound together (one must come first); topology spread does (a pod bound later counts in the domain of
// one bound before).
func replay(ctx context.Context, o *oracle.Oracle, final oracle.Cluster, ours map[string]*v1.Pod,
	placed map[string]*v1.Pod) (stuck map[string]*oracle.Rejection, exhausted bool, err error) {
	keys := replayOrder(placed)
	n := len(keys)
	if n == 0 {
		return nil, false, nil
	}
	ok, err := greedy(ctx, o, final, ours, placed, keys)
	if ok || err != nil {
		return nil, false, err
	}
	if n > 62 {
		return nil, true, nil
	}
	full := uint64(1)<<n - 1
	var base []*v1.Pod
	for _, p := range final.Pods {
		if placed[key(p)] == nil {
			base = append(base, p)
		}
	}
	cluster := func(mask uint64) oracle.Cluster {
		pods := slices.Clone(base)
		for i, k := range keys {
			if mask&(1<<i) != 0 {
				pods = append(pods, placed[k])
			}
		}
		return oracle.Cluster{Nodes: final.Nodes, Namespaces: final.Namespaces, Pods: pods}
	}
	budget := replayBudget * n
	dead := map[uint64]bool{}
	best, bestDepth := uint64(0), -1
	bestRejections := map[int]*oracle.Rejection{}
	var visit func(mask uint64, depth int) (bool, error)
	visit = func(mask uint64, depth int) (bool, error) {
		if mask == full {
			return true, nil
		}
		if dead[mask] || budget <= 0 {
			return false, nil
		}
		cl := cluster(mask)
		rejections := map[int]*oracle.Rejection{}
		for i, k := range keys {
			if mask&(1<<i) != 0 {
				continue
			}
			if budget <= 0 {
				return false, nil
			}
			budget--
			v, err := o.Judge(ctx, cl, ours[k])
			if err != nil {
				return false, err
			}
			if !v.Passes(placed[k].Spec.NodeName) {
				rejections[i] = v.Nodes[placed[k].Spec.NodeName]
				continue
			}
			ok, err := visit(mask|1<<i, depth+1)
			if ok || err != nil {
				return ok, err
			}
		}
		dead[mask] = true
		if depth > bestDepth && len(rejections) == n-depth {
			best, bestDepth, bestRejections = mask, depth, rejections
		}
		return false, nil
	}
	ok, err = visit(0, 0)
	if ok || err != nil {
		return nil, false, err
	}
	if budget <= 0 {
		return nil, true, nil
	}
	stuck = map[string]*oracle.Rejection{}
	for i, k := range keys {
		if best&(1<<i) == 0 {
			stuck[k] = bestRejections[i]
		}
	}
	return stuck, false, nil
}

// greedy places the bindings one at a time, sweeping over those left in the order of keys and placing each as soon
// as kube-scheduler would let it onto its node, until all are placed (true) or a sweep places none. Required
// affinity between pods bound together needs one sweep per link of the chain; it costs at most n judgements
// per sweep, where the depth-first search may revisit a pod at every depth.
func greedy(ctx context.Context, o *oracle.Oracle, final oracle.Cluster, ours map[string]*v1.Pod,
	placed map[string]*v1.Pod, keys []string) (bool, error) {
	var pods []*v1.Pod
	for _, p := range final.Pods {
		if placed[key(p)] == nil {
			pods = append(pods, p)
		}
	}
	left := slices.Clone(keys)
	for len(left) > 0 {
		var still []string
		for _, k := range left {
			v, err := o.Judge(ctx, oracle.Cluster{Nodes: final.Nodes, Namespaces: final.Namespaces, Pods: pods}, ours[k])
			if err != nil {
				return false, err
			}
			if v.Passes(placed[k].Spec.NodeName) {
				pods = append(pods, placed[k])
			} else {
				still = append(still, k)
			}
		}
		if len(still) == len(left) {
			return false, nil
		}
		left = still
	}
	return true, nil
}
