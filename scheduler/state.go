package scheduler

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// State is the cluster as the scheduler sees it. Check and FeasibleNodes
// restate the hard policies in plain Go over it: the independent check of
// every solution, and the reference of the differential tests.
type State struct {
	Nodes   map[string]*Node
	Pods    map[string]*Pod
	Volumes map[string]string // volume → zone
	// Namespaces maps the namespaces that exist (Namespace objects) to
	// their labels: affinity terms select namespaces by them.
	Namespaces map[string]map[string]string
	// PodGroups maps the PodGroups' names (Pod.PodGroup) to them.
	PodGroups map[string]*PodGroup
}

// NewState returns an empty state.
func NewState() *State {
	return &State{Nodes: map[string]*Node{}, Pods: map[string]*Pod{}, Volumes: map[string]string{}, Namespaces: map[string]map[string]string{}, PodGroups: map[string]*PodGroup{}}
}

// Clone copies the state (nodes and pods are copied, not their slices).
func (s *State) Clone() *State {
	c := NewState()
	for k, n := range s.Nodes {
		x := *n
		c.Nodes[k] = &x
	}
	for k, p := range s.Pods {
		x := *p
		c.Pods[k] = &x
	}
	for k, v := range s.Volumes {
		c.Volumes[k] = v
	}
	for k, v := range s.Namespaces {
		c.Namespaces[k] = v
	}
	for k, g := range s.PodGroups {
		x := *g
		c.PodGroups[k] = &x
	}
	return c
}

func normalizeNode(n Node) Node {
	labels := map[string]string{}
	for k, v := range n.Labels {
		labels[k] = v
	}
	labels[LabelHostname] = n.Name
	if n.Zone != "" {
		labels[LabelZone] = n.Zone
	} else if z, ok := labels[LabelZone]; ok {
		n.Zone = z
	}
	n.Labels = labels
	return n
}

func normalizePod(p Pod) Pod {
	if p.Phase == "" {
		p.Phase = PhasePending
	}
	if p.Namespace == "" {
		p.Namespace = "default"
	}
	if p.Group == "" {
		p.Group = p.Name
	}
	if len(p.Tolerations) > 0 {
		tols := make([]Toleration, len(p.Tolerations))
		for i, t := range p.Tolerations {
			if t.Operator == "" {
				t.Operator = "Equal"
			}
			tols[i] = t
		}
		p.Tolerations = tols
	}
	if len(p.HostPorts) > 0 {
		ports := make([]HostPort, len(p.HostPorts))
		for i, hp := range p.HostPorts {
			ports[i] = normalizeHostPort(hp)
		}
		p.HostPorts = ports
	}
	return p
}

// allAddresses is the host IP of a port bound on every address.
const allAddresses = "0.0.0.0"

// normalizeHostPort fills in the defaults Kubernetes applies (HostPortInfo's
// sanitize): TCP, every address.
func normalizeHostPort(hp HostPort) HostPort {
	if hp.Protocol == "" {
		hp.Protocol = "TCP"
	}
	if hp.HostIP == "" {
		hp.HostIP = allAddresses
	}
	return hp
}

// portsConflict reports whether two host ports of pods on one node clash
// (HostPortInfo.CheckConflict): same protocol and port, and the same
// address or either on every address.
func portsConflict(a, b HostPort) bool {
	return a.Protocol == b.Protocol && a.Port == b.Port &&
		(a.HostIP == b.HostIP || a.HostIP == allAddresses || b.HostIP == allAddresses)
}

// label returns a node's value for a label key (topology domain).
func (s *State) label(node, key string) (string, bool) {
	n := s.Nodes[node]
	if n == nil {
		return "", false
	}
	v, ok := n.Labels[key]
	return v, ok
}

// toleratesTaint is k8s.io/api/core/v1 Toleration.ToleratesTaint with the
// comparison operators off (their feature gate's default).
func toleratesTaint(o Toleration, t Taint) bool {
	if o.Effect != "" && o.Effect != t.Effect || o.Key != "" && o.Key != t.Key {
		return false
	}
	switch o.Operator {
	case "", "Equal":
		return o.Value == t.Value
	case "Exists":
		return true
	}
	return false
}

func tolerates(p *Pod, t Taint) bool {
	for _, o := range p.Tolerations {
		if toleratesTaint(o, t) {
			return true
		}
	}
	return false
}

// toleratesUnschedulable is NodeUnschedulable's test: the pod tolerates the
// taint node.kubernetes.io/unschedulable:NoSchedule.
func toleratesUnschedulable(p *Pod) bool {
	return tolerates(p, Taint{Key: "node.kubernetes.io/unschedulable", Effect: "NoSchedule"})
}

// requirementHolds is labels.Requirement.Matches (matchExpressions) and the
// field selector of matchFields on the node's name.
func requirementHolds(n *Node, r NodeRequirement) bool {
	v, ok := n.Labels[r.Key]
	if r.Field {
		v, ok = n.Name, r.Key == "metadata.name"
	}
	in := false
	for _, x := range r.Values {
		in = in || (ok && v == x)
	}
	switch r.Operator {
	case "Exists":
		return ok
	case "DoesNotExist":
		return !ok
	case "NotIn":
		return !in
	case "In":
		return in
	case OpGt, OpLt:
		if !ok || len(r.Values) != 1 {
			return false
		}
		have, err1 := strconv.ParseInt(v, 10, 64)
		want, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		return r.Operator == OpGt && have > want || r.Operator == OpLt && have < want
	}
	return false // Never
}

// selectorHolds reports whether some term of a node selector holds on the
// node: all its requirements (an empty term matches no node).
func selectorHolds(n *Node, terms [][]NodeRequirement) bool {
	for _, term := range terms {
		all := len(term) > 0
		for _, r := range term {
			all = all && requirementHolds(n, r)
		}
		if all {
			return true
		}
	}
	return false
}

// nodeOK checks the per-node policies of one pod (H1-H4, H7-H13): those
// that need no other pod.
func (s *State) nodeOK(p *Pod, n *Node, keep bool) string {
	switch {
	case n.NotReady || n.NetworkUnavailable:
		return "H1 node not ready"
	case n.MemoryPressure && p.CPU == 0 && p.Memory == 0:
		return "H2 memory pressure"
	case n.DiskPressure || n.PIDPressure:
		return "H3 disk or PID pressure"
	case n.Unschedulable && !keep && !toleratesUnschedulable(p):
		return "H4 unschedulable"
	case p.RequestedNode != "" && p.RequestedNode != n.Name:
		return "H7 requested another node"
	}
	for _, v := range p.Volumes {
		if z := s.Volumes[v]; z != "" && z != n.Zone {
			return "H9 volume zone"
		}
	}
	for _, t := range n.Taints {
		if (t.Effect == "NoSchedule" && !keep || t.Effect == "NoExecute") && !tolerates(p, t) {
			return "H10/H11 taint " + t.Key
		}
	}
	if keep {
		return ""
	}
	for k, v := range p.NodeSelector {
		if have, ok := n.Labels[k]; !ok || have != v {
			return "H12 node selector"
		}
	}
	for _, f := range p.Features {
		if !slices.Contains(n.Features, f) {
			return "H16 node lacks declared feature " + f
		}
	}
	if p.RequiredNodeAffinity != nil && !selectorHolds(n, p.RequiredNodeAffinity) {
		return "H13 node affinity"
	}
	for _, sel := range p.VolumeNodeSelectors {
		if !selectorHolds(n, sel) {
			return "H17 volume node affinity"
		}
	}
	return ""
}

// sameDomain reports whether two nodes share the domain of a topology key.
func (s *State) sameDomain(a, b, key string) bool {
	va, oka := s.label(a, key)
	vb, okb := s.label(b, key)
	return oka && okb && va == vb
}

// CheckError is State.Check's rejection of a batch's placements: every
// fault found, each with the pods of the batch it names.
type CheckError struct {
	Faults []CheckFault // sorted by Problem
}

// CheckFault is one hard policy a batch's placements break, and the placed
// pods of the batch at fault: leaving them unplaced removes this fault
// (though it may expose another, so the rest must be checked again).
type CheckFault struct {
	Problem string
	Pods    []string
}

// Error lists the problems, sorted, separated by "; ".
func (e *CheckError) Error() string {
	ps := make([]string, len(e.Faults))
	for i, f := range e.Faults {
		ps[i] = f.Problem
	}
	return strings.Join(ps, "; ")
}

// Pods returns the pods the faults name, sorted, each once.
func (e *CheckError) Pods() []string {
	var out []string
	for _, f := range e.Faults {
		out = append(out, f.Pods...)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func podNames(ps []*Pod) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

// Check verifies the hard policies for the pods of a batch, placed as their
// NodeName says ("" is unplaced), against every other live bound pod. A
// failure is a *CheckError naming the pods at fault.
func (s *State) Check(batch []*Pod) error {
	inBatch := make(map[string]bool, len(batch))
	for _, b := range batch {
		inBatch[b.Name] = true
	}
	var placed []*Pod
	for name := range inBatch {
		if p := s.Pods[name]; p != nil && p.NodeName != "" && live(p) {
			placed = append(placed, p)
		}
	}
	sort.Slice(placed, func(i, j int) bool { return placed[i].Name < placed[j].Name })
	ix := s.indexBound(batch, placed, inBatch)
	var faults []CheckFault
	fail := func(at []*Pod, f string, a ...any) {
		faults = append(faults, CheckFault{Problem: fmt.Sprintf(f, a...), Pods: podNames(at)})
	}
	touched := map[string]bool{}
	for _, p := range placed {
		n := s.Nodes[p.NodeName]
		if n == nil {
			fail([]*Pod{p}, "%s on unknown node %s", p.Name, p.NodeName)
			continue
		}
		touched[n.Name] = true
		if r := s.nodeOK(p, n, false); r != "" {
			fail([]*Pod{p}, "%s on %s: %s", p.Name, n.Name, r)
		}
		if r := ix.conflicts(p, n.Name); r != "" {
			fail([]*Pod{p}, "%s on %s: %s", p.Name, n.Name, r)
		}
	}
	// H5 capacity and H6 ports on the nodes that receive pods.
	placedOn := map[string][]*Pod{}
	for _, p := range placed {
		placedOn[p.NodeName] = append(placedOn[p.NodeName], p)
	}
	for name := range touched {
		n := s.Nodes[name]
		var total, added nodeUse
		for i, on := range [][]*Pod{ix.inDomain(nodeItself, name), placedOn[name]} {
			for _, q := range on {
				total.add(q, 1)
				if i == 1 {
					added.add(q, 1)
				}
			}
		}
		if r := total.overCapacity(n, added); r != "" {
			fail(placedOn[name], "H5 node %s over capacity: %s", name, r)
		}
		// H6: each placed pod's ports against the bound pods' and those of
		// the pods placed after it.
		bound, here := ix.inDomain(nodeItself, name), placedOn[name]
		for i, p := range here {
			for _, q := range append(append([]*Pod(nil), bound...), here[i+1:]...) {
				if hp, ok := portClash(p, q); ok {
					fail([]*Pod{p}, "H6 node %s: host port %s/%d (%s) of %s clashes with %s", name, hp.Protocol, hp.Port, hp.HostIP, p.Name, q.Name)
				}
			}
		}
	}
	// H14 and N3: an order of binding the placed pods in which each passes
	// InterPodAffinity's and PodTopologySpread's Filters (podfilters.go).
	var known []*Pod
	for _, p := range placed {
		if s.Nodes[p.NodeName] != nil {
			known = append(known, p)
		}
	}
	faults = append(faults, ix.filters.order(known)...)
	// H15 service affinity within the batch: one zone per service.
	zones := map[string]map[string]bool{}
	ofService := map[string][]*Pod{}
	for _, p := range placed {
		if n := s.Nodes[p.NodeName]; p.Service != "" && n != nil { // an unknown node is reported above
			if zones[p.Service] == nil {
				zones[p.Service] = map[string]bool{}
			}
			zones[p.Service][n.Zone] = true
			ofService[p.Service] = append(ofService[p.Service], p)
		}
	}
	for svc, z := range zones {
		if len(z) > 1 {
			fail(ofService[svc], "H15 service %s placed in %d zones", svc, len(z))
		}
	}
	// N1 at most max_per_node per group and node.
	limit := map[string]int64{}
	for _, p := range batch {
		if p.MaxPerNode > 0 && (limit[p.Group] == 0 || p.MaxPerNode < limit[p.Group]) {
			limit[p.Group] = p.MaxPerNode
		}
	}
	type gn struct{ g, n string }
	count := map[gn]int64{}
	recv := map[gn]bool{}
	for g := range limit {
		for _, q := range ix.byGroup[g] {
			count[gn{g, q.NodeName}]++
		}
	}
	for _, q := range placed {
		count[gn{q.Group, q.NodeName}]++
	}
	for _, p := range placed {
		recv[gn{p.Group, p.NodeName}] = true
	}
	for k := range recv {
		if l := limit[k.g]; l > 0 && count[k] > l {
			var at []*Pod
			for _, p := range placed {
				if p.Group == k.g && p.NodeName == k.n {
					at = append(at, p)
				}
			}
			fail(at, "N1 group %s has %d pods on %s, limit %d", k.g, count[k], k.n, l)
		}
	}
	faults = append(faults, s.checkSpread(batch, placed, ix)...)
	faults = append(faults, s.checkGangs(batch)...)
	if len(faults) > 0 {
		sort.SliceStable(faults, func(i, j int) bool { return faults[i].Problem < faults[j].Problem })
		return &CheckError{Faults: faults}
	}
	return nil
}

// portClash returns a host port of p that clashes with one of q's.
func portClash(p, q *Pod) (HostPort, bool) {
	for _, a := range p.HostPorts {
		for _, b := range q.HostPorts {
			if portsConflict(a, b) {
				return a, true
			}
		}
	}
	return HostPort{}, false
}

// boundIndex holds, for Check, the live bound pods outside the batch that
// the batch's placements can involve: those on the nodes that receive
// pods, those the placed pods' inter-pod terms and spread constraints
// select, those with anti-affinity terms, those of their services and of
// the batch's groups. It is filled in one pass over the state's pods
// (indexBound), each list in name order. Check used to loop
// over every bound pod for each question: 240,000 iterations per 100-pod
// batch on 2,400 pods, and 40 ms a batch on 5,000 nodes running 50,000.
type boundIndex struct {
	s *State
	// filters holds the bound pods that InterPodAffinity's and
	// PodTopologySpread's Filters may read for the placed pods.
	filters   *filterSet
	byService map[string][]*Pod
	// byDomain maps a topology key (nodeItself for the node) and a domain
	// to the bound pods there; nodeDomain[key] maps the nodes of the
	// domains collected to their domain.
	byDomain   map[string]map[string][]*Pod
	nodeDomain map[string]map[string]string
	// byGroup holds the bound pods of the batch's groups with a limit per
	// node or a hard spreading constraint; groupSize counts the live pods
	// of each, bound or not.
	byGroup   map[string][]*Pod
	groupSize map[string]int64
}

// indexBound collects what Check asks of the bound pods for the pods of
// batch, of which placed are on a node: every question Check asks, and no
// other (TestCheckAgreesWithTheReference holds it to the former Check).
func (s *State) indexBound(batch, placed []*Pod, inBatch map[string]bool) *boundIndex {
	ix := &boundIndex{s: s, filters: newFilterSet(s, placed), byService: map[string][]*Pod{},
		byDomain: map[string]map[string][]*Pod{}, nodeDomain: map[string]map[string]string{},
		byGroup: map[string][]*Pod{}, groupSize: map[string]int64{}}
	// The questions: nodes, services and groups.
	domains := map[string]map[string]bool{nodeItself: {}}
	for _, p := range placed {
		domains[nodeItself][p.NodeName] = true
		if p.Service != "" {
			ix.byService[p.Service] = nil
		}
	}
	for key, ds := range domains {
		m := map[string]string{}
		if key == nodeItself {
			for n := range ds {
				m[n] = n
			}
		} else {
			for name, n := range s.Nodes {
				if d, ok := n.Labels[key]; ok && ds[d] {
					m[name] = d
				}
			}
		}
		ix.nodeDomain[key], ix.byDomain[key] = m, map[string][]*Pod{}
	}
	for _, p := range batch {
		if p.MaxPerNode > 0 {
			ix.byGroup[p.Group] = nil
		}
		for _, c := range p.Spread {
			if c.Hard && c.MaxSkew == 0 {
				ix.byGroup[p.Group], ix.groupSize[p.Group] = nil, 0
			}
		}
	}
	// The answers, in one pass.
	var filtered []*Pod
	for _, q := range s.Pods {
		if !live(q) {
			continue
		}
		if n, ok := ix.groupSize[q.Group]; ok {
			ix.groupSize[q.Group] = n + 1
		}
		if q.NodeName == "" {
			continue
		}
		filter := ix.filters.relevant(q)
		if !filter && !ix.concerns(q) || inBatch[q.Name] {
			continue
		}
		for key, m := range ix.nodeDomain {
			if d, ok := m[q.NodeName]; ok {
				ix.byDomain[key][d] = append(ix.byDomain[key][d], q)
			}
		}
		if filter && s.Nodes[q.NodeName] != nil {
			filtered = append(filtered, q)
		}
		if ps, ok := ix.byService[q.Service]; ok {
			ix.byService[q.Service] = append(ps, q)
		}
		if ps, ok := ix.byGroup[q.Group]; ok {
			ix.byGroup[q.Group] = append(ps, q)
		}
	}
	byName := func(ps []*Pod) {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	}
	for _, m := range ix.byDomain {
		for _, ps := range m {
			byName(ps)
		}
	}
	for _, ps := range ix.byService {
		byName(ps)
	}
	byName(filtered)
	for _, q := range filtered {
		ix.filters.add(q)
	}
	return ix
}

// concerns reports whether a bound pod q answers one of the index's
// questions but the Filters' (filterSet.relevant): the cheap tests that
// let the pass skip most pods of a large cluster without looking them up
// in the batch.
func (ix *boundIndex) concerns(q *Pod) bool {
	for _, m := range ix.nodeDomain {
		if _, ok := m[q.NodeName]; ok {
			return true
		}
	}
	if _, ok := ix.byService[q.Service]; ok && q.Service != "" {
		return true
	}
	_, ok := ix.byGroup[q.Group]
	return ok
}

// nodeItself is the "topology key" of a node's own pods in boundIndex (no
// label key contains a NUL).
const nodeItself = "\x00node"

// inDomain returns the bound pods in node's domain of a topology key (on
// node itself for nodeItself), as collected for a placed pod on node; none
// when node lacks the key.
func (ix *boundIndex) inDomain(key, node string) []*Pod {
	d, ok := node, true
	if key != nodeItself {
		d, ok = ix.s.label(node, key)
	}
	if !ok {
		return nil
	}
	return ix.byDomain[key][d]
}

// conflicts checks a pod on a node against the bound pods: H6 ports are
// counted per node by Check, H14 by checkBindingOrder; here H15 against
// bound pods of the service.
func (ix *boundIndex) conflicts(p *Pod, node string) string {
	s := ix.s
	if p.Service != "" {
		for _, q := range ix.byService[p.Service] {
			if s.Nodes[q.NodeName] != nil && s.Nodes[q.NodeName].Zone != s.Nodes[node].Zone {
				return "H15 service " + p.Service + " lives in another zone"
			}
		}
	}
	return ""
}

// checkSpread checks N2 (even spreading of a group, max_skew 0) for the
// domains that receive pods of the batch (N3, PodTopologySpread, is
// checkBindingOrder's).
func (s *State) checkSpread(batch, placed []*Pod, ix *boundIndex) []CheckFault {
	var faults []CheckFault
	type gk struct{ g, k string }
	even := map[gk]bool{}
	for _, p := range batch {
		for _, c := range p.Spread {
			if c.Hard && c.MaxSkew == 0 {
				even[gk{p.Group, c.TopologyKey}] = true
			}
		}
	}
	for k := range even {
		domains := map[string]int64{}
		for _, n := range s.Nodes {
			if v, ok := n.Labels[k.k]; ok && !n.NotReady && !n.Unschedulable {
				domains[v] += 0
			}
		}
		size := ix.groupSize[k.g]
		added := map[string][]string{}
		for _, q := range append(append([]*Pod(nil), ix.byGroup[k.g]...), placed...) {
			if q.Group != k.g {
				continue
			}
			v, ok := s.label(q.NodeName, k.k)
			if _, valid := domains[v]; !ok || !valid {
				continue
			}
			domains[v]++
		}
		for _, p := range placed {
			if p.Group == k.g {
				if v, ok := s.label(p.NodeName, k.k); ok {
					added[v] = append(added[v], p.Name)
				}
			}
		}
		nd := int64(len(domains))
		for d, a := range added {
			if c := domains[d]; nd > 0 && c > (size+nd-1)/nd {
				faults = append(faults, CheckFault{Problem: fmt.Sprintf("N2 group %s has %d pods in %s %s, limit %d", k.g, c, k.k, d, (size+nd-1)/nd), Pods: a})
			}
		}
	}
	return faults
}

// FeasibleNodes is the reference filter for one pod alone: the nodes where
// it may go given the bound pods, as a plain loop over the state.
func (s *State) FeasibleNodes(p *Pod) []string {
	var out []string
	c := s.Clone() // Check only reads: one copy serves every node
	q := *p
	c.Pods[q.Name] = &q
	for name := range s.Nodes {
		q.NodeName = name
		if c.Check([]*Pod{&q}) == nil {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// FitsSomewhere reports whether p, a pod of s without a node, fits some
// node alone as s is: FeasibleNodes(p) is not empty. Only the nodes with
// room for p's requests are tried with Check (H5 is part of Check, so a
// node skipped would fail it too): Check reads every pod for each node, and
// a full cluster, the case of preemption, leaves no node to try. s is left
// as it was.
func (s *State) FitsSomewhere(p *Pod) bool {
	return newRoomIndex(s, s.usage(func(o *Pod) bool { return o.Name == p.Name })).fitsSomewhere(p)
}

// Fitter returns FitsSomewhere for pods of s without a node, the nodes'
// use summed once for all of them and the nodes with room listed once per
// shape of requests (roomIndex): a caller that asks about many pods
// (weave-scheduler's triage of a batch's unplaced pods) does not sum every
// pod of the cluster, nor try every node, for each. s must not change
// while it is used.
func (s *State) Fitter() func(p *Pod) bool {
	ix := newRoomIndex(s, s.usage(nil)) // a pod without a node is in no node's use
	return func(p *Pod) bool {
		if p.NodeName != "" {
			return s.FitsSomewhere(p)
		}
		return ix.fitsSomewhere(p)
	}
}

// roomless returns the pods of ps without a node in placed for which no
// node has room for their requests beside the live bound pods (holds):
// whatever else holds, they fit nowhere. Pods with the same requests share
// one pass over the nodes (roomIndex).
func (s *State) roomless(ps []*Pod, placed map[string]string) map[string]bool {
	out := map[string]bool{}
	var ix *roomIndex
	for _, p := range ps {
		if placed[p.Name] != "" {
			continue
		}
		if ix == nil {
			ix = newRoomIndex(s, s.usage(nil))
		}
		if len(ix.withRoom(p)) == 0 {
			out[p.Name] = true
		}
	}
	return out
}

// nodeUse is what the live bound pods of a node request. scalar is never
// changed in place (add makes a new map), so copies of a nodeUse are
// independent.
type nodeUse struct {
	cpu, mem, sto, pods int64
	scalar              map[string]int64
}

// holds reports whether node n has room for p's requests on top of u, as
// NodeResourcesFit's fitsRequest judges it: one more pod within the pod
// count, and each resource p requests (a request above 0) within what u
// leaves of the node's allocatable.
func (u nodeUse) holds(n *Node, p *Pod) bool {
	if u.pods+1 > n.Pods || p.CPU > 0 && u.cpu+p.CPU > n.CPU || p.Memory > 0 && u.mem+p.Memory > n.Memory ||
		p.Storage > 0 && u.sto+p.Storage > n.Storage {
		return false
	}
	for r, v := range p.Resources {
		if v > 0 && u.scalar[r]+v > n.Resources[r] {
			return false
		}
	}
	return true
}

// overCapacity checks the use u of node n, of which the pods placed by a
// batch request added, as holds does one pod at a time: the pod count
// always, a resource only when the placed pods request some of it (they
// fit one after the other in any order exactly when their total does). It
// returns "" or what is over.
func (u nodeUse) overCapacity(n *Node, added nodeUse) string {
	over := u.pods > n.Pods || added.cpu > 0 && u.cpu > n.CPU || added.mem > 0 && u.mem > n.Memory ||
		added.sto > 0 && u.sto > n.Storage
	var scalar []string
	for _, r := range sortedKeys(added.scalar) {
		if added.scalar[r] > 0 && u.scalar[r] > n.Resources[r] {
			scalar = append(scalar, fmt.Sprintf(" %s %d/%d", r, u.scalar[r], n.Resources[r]))
		}
	}
	if !over && len(scalar) == 0 {
		return ""
	}
	return fmt.Sprintf("cpu %d/%d memory %d/%d storage %d/%d pods %d/%d", u.cpu, n.CPU, u.mem, n.Memory, u.sto, n.Storage, u.pods, n.Pods) +
		strings.Join(scalar, "")
}

// add adds p's requests to u (sign 1) or takes them away (sign -1).
func (u *nodeUse) add(p *Pod, sign int64) {
	u.cpu += sign * p.CPU
	u.mem += sign * p.Memory
	u.sto += sign * p.Storage
	u.pods += sign
	if len(p.Resources) > 0 {
		m := make(map[string]int64, len(u.scalar)+len(p.Resources))
		for r, v := range u.scalar {
			m[r] = v
		}
		for r, v := range p.Resources {
			m[r] += sign * v
		}
		u.scalar = m
	}
}

// usage sums the requests of the live bound pods per node, leaving out
// those skip names (nil: none).
func (s *State) usage(skip func(*Pod) bool) map[string]nodeUse {
	used := make(map[string]nodeUse, len(s.Nodes))
	for _, q := range s.Pods {
		if q.NodeName == "" || !live(q) || skip != nil && skip(q) {
			continue
		}
		u := used[q.NodeName]
		u.add(q, 1)
		used[q.NodeName] = u
	}
	return used
}

// holding puts p in s in place of the pod of its name, for a check that
// reads p as one of s's pods, and returns what puts s back as it was.
func (s *State) holding(p *Pod) (restore func()) {
	saved, had := s.Pods[p.Name]
	s.Pods[p.Name] = p
	return func() {
		if had {
			s.Pods[p.Name] = saved
		} else {
			delete(s.Pods, p.Name)
		}
	}
}
