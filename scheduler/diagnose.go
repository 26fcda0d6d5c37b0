package scheduler

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// "Why is my pod pending?": State.Diagnose says, for each node, which hard
// policies reject a pod there, in the words of kube-scheduler v1.37.2's
// Filter plugins, and Diagnosis.Message builds the FailedScheduling text
// as kube-scheduler's FitError does, then adds the other pods at fault.
//
// Per node, the policies are tested in the order of kube-scheduler's
// default profile (pkg/scheduler/apis/config/v1/default_plugins.go), and
// the first that fails gives the node's reasons, as kube-scheduler stops at
// the first Filter that rejects a node: so the counts per reason are
// kube-scheduler's for the same state. The tests are the independent
// check's own (nodeOK's predicates, nodeUse, the filterSet of
// podfilters.go), and a node they all pass is put to State.Check itself,
// whose rejection names a policy of Weave's own (N1, N2, H15, G1, G2): a
// node is free of reasons exactly when Check accepts the pod there alone
// (TestDiagnoseAgreesWithCheck).

// The reasons of kube-scheduler v1.37.2's Filter plugins (the ErrReason
// constants of pkg/scheduler/framework/plugins/*), and Weave's own for the
// policies no plugin has.
const (
	reasonNodeName              = "node(s) didn't match the requested node name"
	reasonUnschedulable         = "node(s) were unschedulable"
	reasonTaints                = "node(s) had untolerated taint(s)"
	reasonNodeAffinity          = "node(s) didn't match Pod's node affinity/selector"
	reasonNodeAffinityPreFilter = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
	reasonNodeAffinityConflict  = "pod affinity terms conflict"
	reasonPorts                 = "node(s) didn't have free ports for the requested pod ports"
	reasonTooManyPods           = "Too many pods"
	reasonVolumeNodeAffinity    = "node(s) didn't match PersistentVolume's node affinity"
	reasonVolumeZone            = "node(s) had no available volume zone"
	reasonSpread                = "node(s) didn't match pod topology spread constraints"
	reasonSpreadLabel           = reasonSpread + " (missing required label)"
	reasonAffinity              = "node(s) didn't match pod affinity rules"
	reasonAntiAffinity          = "node(s) didn't match pod anti-affinity rules"
	reasonExistingAntiAffinity  = "node(s) didn't satisfy existing pods anti-affinity rules"
	reasonFeatures              = "node(s) didn't match Pod's required features"
	// Weave's node conditions (H1-H3): kube-scheduler reads the taints the
	// node lifecycle controller sets for them instead.
	reasonNotReady       = "node(s) were not ready"
	reasonMemoryPressure = "node(s) had memory pressure"
	reasonDiskPressure   = "node(s) had disk or PID pressure"
)

// reasonInsufficient is NodeResourcesFit's reason for a resource the node
// lacks room for: "cpu", "memory", "ephemeral-storage" or a scalar
// resource's name.
func reasonInsufficient(resource string) string { return "Insufficient " + resource }

// reasonWeavePolicy is the reason for a hard policy of Weave's own (the
// registry's id, e.g. "N1") that rejects a node.
func reasonWeavePolicy(id string) string { return "node(s) didn't satisfy Weave policy " + id }

// Diagnosis is why a pod fits, or does not fit, each node of a state.
type Diagnosis struct {
	Pod   string
	Nodes int // the nodes of the state
	// PreFilter rejects every node at once (NodeAffinity's PreFilter on
	// matchFields terms naming no common node); "" when none does.
	PreFilter string
	// Reasons maps each node that rejects the pod to its reasons.
	Reasons map[string][]string
	// Fit lists the other nodes, which take the pod (alone, as the state
	// is), sorted.
	Fit []string
	// Conflicts are the other pods at fault, by policy, sorted by policy.
	Conflicts []Conflict
}

// Conflict is a policy that rejects the pod on some nodes because of other
// pods, and those pods.
type Conflict struct {
	Policy string   // e.g. "H14 pod anti-affinity"
	Pods   []string // "namespace/name on node", sorted
	Nodes  int      // the nodes it rejects the pod on
}

// Histogram counts the nodes per reason, as kube-scheduler's FitError
// does (a node with two reasons counts for both).
func (d *Diagnosis) Histogram() map[string]int {
	h := map[string]int{}
	if d.PreFilter != "" {
		return h
	}
	for _, rs := range d.Reasons {
		for _, r := range rs {
			h[r]++
		}
	}
	return h
}

// FitMessage is the text kube-scheduler v1.37.2 gives the pod: its
// FitError.Error (pkg/scheduler/framework/types.go) without PostFilter's
// preemption message.
func (d *Diagnosis) FitMessage() string {
	return fitErrorMessage(d.Nodes, d.PreFilter, d.Histogram())
}

// Message is FitMessage followed by Weave's own addition: the other pods
// at fault, per policy ("Weave: H14 pod anti-affinity with ns/a on n1.").
func (d *Diagnosis) Message() string {
	m := d.FitMessage()
	if len(d.Conflicts) == 0 {
		return m
	}
	parts := make([]string, len(d.Conflicts))
	for i, c := range d.Conflicts {
		pods := c.Pods
		more := ""
		if len(pods) > maxNamedPods {
			pods, more = pods[:maxNamedPods], fmt.Sprintf(" and %d more", len(c.Pods)-maxNamedPods)
		}
		parts[i] = fmt.Sprintf("%s with %s%s", c.Policy, strings.Join(pods, ", "), more)
	}
	return m + " Weave: " + strings.Join(parts, "; ") + "."
}

// maxNamedPods bounds the pods Message names per policy (an event message
// is cut at 1,000 characters); Detail names them all.
const maxNamedPods = 5

// Detail is the full explanation: Message, then one line per node with
// its reasons (the nodes that take the pod first), then one line per
// conflicting policy with every pod.
func (d *Diagnosis) Detail() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pod %s: %s\n", d.Pod, d.Message())
	if len(d.Fit) > 0 {
		fmt.Fprintf(&b, "fits alone on %d node(s): %s\n", len(d.Fit), strings.Join(d.Fit, ", "))
	}
	names := make([]string, 0, len(d.Reasons))
	for n := range d.Reasons {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "node %s: %s\n", n, strings.Join(d.Reasons[n], "; "))
	}
	for _, c := range d.Conflicts {
		fmt.Fprintf(&b, "%s (on %d node(s)): %s\n", c.Policy, c.Nodes, strings.Join(c.Pods, ", "))
	}
	return b.String()
}

// fitErrorMessage is the text of kube-scheduler v1.37.2's
// framework.FitError.Error (pkg/scheduler/framework/types.go), copied
// because package scheduler does not depend on k8s.io/kubernetes: "0/N
// nodes are available:", then the PreFilter's message or the sorted
// "count reason" histogram joined by ", ", and a ".".
func fitErrorMessage(numAllNodes int, preFilterMsg string, reasons map[string]int) string {
	reasonMsg := fmt.Sprintf("0/%v nodes are available:", numAllNodes)
	if preFilterMsg != "" {
		return reasonMsg + fmt.Sprintf(" %v.", preFilterMsg)
	}
	var reasonStrings []string
	for k, v := range reasons {
		reasonStrings = append(reasonStrings, fmt.Sprintf("%v %v", v, k))
	}
	sort.Strings(reasonStrings)
	if len(reasonStrings) != 0 {
		reasonMsg += fmt.Sprintf(" %v.", strings.Join(reasonStrings, ", "))
	}
	return reasonMsg
}

// Diagnose explains where p, a pod of s or not, fits alone as s is (p's
// NodeName is ignored). s is left as it was.
func (s *State) Diagnose(p *Pod) *Diagnosis {
	d := &Diagnosis{Pod: p.Name, Nodes: len(s.Nodes), Reasons: map[string][]string{}}
	q := *p
	q.NodeName = ""
	defer s.holding(&q)()
	named, conflict := nodeNamePreFilter(&q)
	if conflict {
		d.PreFilter = reasonNodeAffinityConflict
		return d
	}
	dg := s.newDiagnoser(&q)
	for name, n := range s.Nodes {
		if named != nil && !named[name] {
			d.Reasons[name] = []string{reasonNodeAffinityPreFilter}
			continue
		}
		rs := dg.reasons(n)
		if rs == nil {
			q.NodeName = name
			if err := s.Check([]*Pod{&q}); err != nil {
				rs = weaveReasons(err)
			}
			q.NodeName = ""
		}
		if rs != nil {
			d.Reasons[name] = rs
		} else {
			d.Fit = append(d.Fit, name)
		}
	}
	sort.Strings(d.Fit)
	d.Conflicts = dg.conflicts()
	return d
}

// Diagnose is State.Diagnose for p, a pod of the scheduler's or not (a
// pod in a caller's backoff is not), on the state as the enabled hard
// policies see it (PolicyState), p relaxed as the state's pods are.
func (s *Scheduler) Diagnose(p Pod) *Diagnosis {
	s.mu.Lock()
	st := s.state.Clone()
	s.mu.Unlock()
	p = normalizePod(p)
	p.NodeName = ""
	st.Pods[p.Name] = &p
	st = relax(st, s.off)
	return st.Diagnose(st.Pods[p.Name])
}

// nodeNamePreFilter is NodeAffinity's PreFilter: when every required term
// names nodes (matchFields metadata.name In), only the nodes some term
// names are tried (nil: every node), and none when each term's names
// conflict.
func nodeNamePreFilter(p *Pod) (map[string]bool, bool) {
	if len(p.RequiredNodeAffinity) == 0 {
		return nil, false
	}
	var all map[string]bool
	for _, term := range p.RequiredNodeAffinity {
		var names map[string]bool
		for _, r := range term {
			if !r.Field || r.Key != "metadata.name" || r.Operator != "In" {
				continue
			}
			these := map[string]bool{}
			for _, v := range r.Values {
				if names == nil || names[v] {
					these[v] = true
				}
			}
			names = these
		}
		if names == nil {
			return nil, false
		}
		if all == nil {
			all = map[string]bool{}
		}
		for n := range names {
			all[n] = true
		}
	}
	return all, len(all) == 0
}

// weavePolicy finds the policy id a fault of Check names ("H15", "N1").
var weavePolicy = regexp.MustCompile(`\b[HNG][0-9]+\b`)

// weaveReasons words Check's rejection of a node that every plugin's test
// passes: the policies of Weave's own its faults name.
func weaveReasons(err error) []string {
	var out []string
	ce, ok := err.(*CheckError)
	if !ok {
		return []string{reasonWeavePolicy("check: " + err.Error())}
	}
	for _, f := range ce.Faults {
		id := weavePolicy.FindString(f.Problem)
		if id == "" {
			id = "check: " + f.Problem
		}
		out = append(out, reasonWeavePolicy(id))
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// diagnoser holds what the per-node tests read for one pod: the room on
// each node, the bound pods' host ports, and the Filters' pod set.
type diagnoser struct {
	s     *State
	p     *Pod
	used  map[string]nodeUse
	ports map[string][]*Pod // node → its live bound pods with host ports
	fs    *filterSet
	fp    *filterPod
	// at maps a policy to the pods at fault ("ns/name on node") and counts
	// the nodes it rejects the pod on.
	at    map[string]map[string]bool
	nodes map[string]int
}

func (s *State) newDiagnoser(p *Pod) *diagnoser {
	dg := &diagnoser{s: s, p: p, used: s.usage(func(o *Pod) bool { return o.Name == p.Name }),
		ports: map[string][]*Pod{}, fs: newFilterSet(s, []*Pod{p}), at: map[string]map[string]bool{}, nodes: map[string]int{}}
	// The bound pods as Check's indexBound gives them to the Filters: the
	// relevant ones on known nodes, in name order.
	var filtered []*Pod
	for _, q := range s.Pods {
		if q.NodeName == "" || !live(q) || q.Name == p.Name || s.Nodes[q.NodeName] == nil {
			continue
		}
		if len(q.HostPorts) > 0 {
			dg.ports[q.NodeName] = append(dg.ports[q.NodeName], q)
		}
		if dg.fs.relevant(q) {
			filtered = append(filtered, q)
		}
	}
	sort.Slice(filtered, func(i, j int) bool { return filtered[i].Name < filtered[j].Name })
	for _, q := range filtered {
		dg.fs.add(q)
	}
	for _, ps := range dg.ports {
		sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	}
	dg.fp = dg.fs.parse(p)
	return dg
}

// blame records the pods at fault for a policy on node n.
func (dg *diagnoser) blame(policy string, n *Node, pods []*Pod) {
	if dg.at[policy] == nil {
		dg.at[policy] = map[string]bool{}
	}
	for _, q := range pods {
		dg.at[policy][q.Name+" on "+q.NodeName] = true
	}
	dg.nodes[policy]++
}

func (dg *diagnoser) conflicts() []Conflict {
	var out []Conflict
	for policy, set := range dg.at {
		if len(set) == 0 {
			continue
		}
		c := Conflict{Policy: policy, Nodes: dg.nodes[policy]}
		for k := range set {
			c.Pods = append(c.Pods, k)
		}
		sort.Strings(c.Pods)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Policy < out[j].Policy })
	return out
}

// reasons tests the pod on node n plugin by plugin, in kube-scheduler's
// order, and returns the first failing plugin's reasons (nil: all pass).
func (dg *diagnoser) reasons(n *Node) []string {
	s, p := dg.s, dg.p
	// Weave's node conditions (nodeOK's H1-H3).
	switch {
	case n.NotReady || n.NetworkUnavailable:
		return []string{reasonNotReady}
	case n.MemoryPressure && p.CPU == 0 && p.Memory == 0:
		return []string{reasonMemoryPressure}
	case n.DiskPressure || n.PIDPressure:
		return []string{reasonDiskPressure}
	}
	// NodeName (H7), NodeUnschedulable (H4), TaintToleration (H10, H11).
	if p.RequestedNode != "" && p.RequestedNode != n.Name {
		return []string{reasonNodeName}
	}
	if n.Unschedulable && !toleratesUnschedulable(p) {
		return []string{reasonUnschedulable}
	}
	for _, t := range n.Taints {
		if (t.Effect == "NoSchedule" || t.Effect == "NoExecute") && !tolerates(p, t) {
			return []string{reasonTaints}
		}
	}
	// NodeAffinity (H12, H13).
	if !requiredNodeAffinityMatches(p, n) {
		return []string{reasonNodeAffinity}
	}
	// NodePorts (H6).
	var clash []*Pod
	for _, q := range dg.ports[n.Name] {
		if _, ok := portClash(p, q); ok {
			clash = append(clash, q)
		}
	}
	if len(clash) > 0 {
		dg.blame("H6 host ports", n, clash)
		return []string{reasonPorts}
	}
	// NodeResourcesFit (H5): every resource short, as fitsRequest lists them.
	if rs := insufficient(dg.used[n.Name], n, p); len(rs) > 0 {
		return rs
	}
	// VolumeBinding (H17), VolumeZone (H9).
	for _, sel := range p.VolumeNodeSelectors {
		if !selectorHolds(n, sel) {
			return []string{reasonVolumeNodeAffinity}
		}
	}
	for _, v := range p.Volumes {
		if z := s.Volumes[v]; z != "" && z != n.Zone {
			return []string{reasonVolumeZone}
		}
	}
	// PodTopologySpread (N3), InterPodAffinity (H14).
	if r := dg.fs.podTopologySpread(dg.fp, n); r != "" {
		if strings.HasPrefix(r, "N3 the node has no") {
			return []string{reasonSpreadLabel}
		}
		dg.blame("N3 topology spread", n, dg.spreadPods(n))
		return []string{reasonSpread}
	}
	if r, _ := dg.fs.interPodAffinity(dg.fp, n); r != "" {
		switch {
		case strings.HasPrefix(r, "H14 affinity"):
			return []string{reasonAffinity}
		case strings.HasPrefix(r, "H14 anti-affinity with pod"):
			dg.blame("H14 pod anti-affinity", n, dg.antiPods(n))
			return []string{reasonAntiAffinity}
		default:
			dg.blame("H14 existing pods' anti-affinity", n, dg.holderPods(n))
			return []string{reasonExistingAntiAffinity}
		}
	}
	// NodeDeclaredFeatures (H16).
	for _, f := range p.Features {
		if !slices.Contains(n.Features, f) {
			return []string{reasonFeatures}
		}
	}
	return nil
}

// insufficient is NodeResourcesFit's fitsRequest on top of the use u of n:
// the pod count always, then each resource the pod requests.
func insufficient(u nodeUse, n *Node, p *Pod) []string {
	var out []string
	if u.pods+1 > n.Pods {
		out = append(out, reasonTooManyPods)
	}
	if p.CPU > 0 && u.cpu+p.CPU > n.CPU {
		out = append(out, reasonInsufficient("cpu"))
	}
	if p.Memory > 0 && u.mem+p.Memory > n.Memory {
		out = append(out, reasonInsufficient("memory"))
	}
	if p.Storage > 0 && u.sto+p.Storage > n.Storage {
		out = append(out, reasonInsufficient("ephemeral-storage"))
	}
	for _, r := range sortedKeys(p.Resources) {
		if v := p.Resources[r]; v > 0 && u.scalar[r]+v > n.Resources[r] {
			out = append(out, reasonInsufficient(r))
		}
	}
	return out
}

// antiPods are the bound pods in n's domains that the pod's required
// anti-affinity terms select.
func (dg *diagnoser) antiPods(n *Node) []*Pod {
	var out []*Pod
	for i, t := range dg.fp.anti {
		if v, ok := n.Labels[t.topologyKey]; ok {
			out = append(out, dg.fs.sel[dg.fp.antiIDs[i]].byDomain[topoPair{t.topologyKey, v}]...)
		}
	}
	return out
}

// holderPods are the bound pods in n's domains whose required
// anti-affinity terms select the pod.
func (dg *diagnoser) holderPods(n *Node) []*Pod {
	var out []*Pod
	for k, v := range n.Labels {
		for _, h := range dg.fs.holders[topoPair{k, v}] {
			if h.t == nil {
				h.t = dg.fs.term(h.q.Affinity[h.i], h.q.Namespace)
			}
			if h.t.selectsAsExisting(dg.p, dg.s) {
				out = append(out, h.q)
			}
		}
	}
	return out
}

// spreadPods are the pods the pod's hard spread constraints count in n's
// domains.
func (dg *diagnoser) spreadPods(n *Node) []*Pod {
	var out []*Pod
	for _, c := range dg.fp.spread {
		v := n.Labels[c.c.TopologyKey]
		domains := dg.fs.eligibleNodes(dg.fp, c)
		for _, q := range dg.fs.sel[c.counts].pods {
			if d, ok := domains[q.NodeName]; ok && d == v {
				out = append(out, q)
			}
		}
	}
	return out
}
