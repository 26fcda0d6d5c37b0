package scheduler

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The Filters of kube-scheduler v1.37.2's InterPodAffinity
// (pkg/scheduler/framework/plugins/interpodaffinity/filtering.go, feature
// gate InterPodAffinityHostnameFastPath off, its default) and
// PodTopologySpread (plugins/podtopologyspread/common.go, filtering.go;
// DoNotSchedule constraints) restated for the independent check (policies
// H14 and N3). Selectors are k8s.io/apimachinery's, built by
// metav1.LabelSelectorAsSelector, and the pods a term or constraint
// selects are found here, not read from the state database.
//
// A batch is placed at once, but kube-scheduler binds one pod at a time.
// checkBindingOrder accepts a batch's placements only if some order of
// binding them lets every pod pass both Filters against the pods bound
// before it (the cluster's and the batch's earlier ones). It builds the
// order greedily: first pods that pass by the first-pod exemption of
// required affinity (a pod matching its own terms when no pod does), then
// pods without required affinity terms, then the rest, each time any pod of
// the earliest class that passes. A pod picked never keeps another from
// passing later in the orders the placement model's policies rely on (a
// replica spread into the least loaded domain first; the pods a required
// affinity term selects before the pods with the term), so the greedy
// order finds one whenever the model's reasoning holds; and it is an order
// whatever it finds.

// kubeSelector converts a selector as metav1.LabelSelectorAsSelector does:
// nil selects nothing, empty everything. A selector the API would reject
// (an invalid key or value, In or NotIn without values, an unknown
// operator) selects nothing.
func kubeSelector(s *LabelSelector) labels.Selector {
	if s == nil {
		return labels.Nothing()
	}
	ms := &metav1.LabelSelector{MatchLabels: s.MatchLabels}
	for _, r := range s.MatchExpressions {
		ms.MatchExpressions = append(ms.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: r.Key, Operator: metav1.LabelSelectorOperator(r.Operator), Values: r.Values})
	}
	sel, err := metav1.LabelSelectorAsSelector(ms)
	if err != nil {
		return labels.Nothing()
	}
	return sel
}

// kubeTerm is framework.AffinityTerm: the namespaces a term lists (the
// pod's own when it lists none and has no namespace selector), its
// namespace selector, its label selector and topology key.
type kubeTerm struct {
	names       map[string]bool
	nsSel, sel  labels.Selector
	topologyKey string
}

func newKubeTerm(t PodAffinityTerm, podNS string) *kubeTerm {
	k := &kubeTerm{names: map[string]bool{}, nsSel: kubeSelector(t.NamespaceSelector), sel: kubeSelector(t.Selector), topologyKey: t.TopologyKey}
	if len(t.Namespaces) == 0 && t.NamespaceSelector == nil {
		k.names[podNS] = true
	}
	for _, n := range t.Namespaces {
		k.names[n] = true
	}
	return k
}

// selectsIncoming reports whether a term of the pod being placed selects
// q: PreFilter replaces a non-empty namespace selector by the namespaces
// it matches (mergeAffinityTermNamespacesIfNotEmpty), and Matches(q, nil).
func (t *kubeTerm) selectsIncoming(q *Pod, st *State) bool {
	ok := t.names[q.Namespace] || t.nsSel.Empty()
	if !ok {
		if l, known := st.Namespaces[q.Namespace]; known {
			ok = t.nsSel.Matches(labels.Set(l))
		}
	}
	return ok && t.sel.Matches(labels.Set(q.Labels))
}

// selectsAsExisting reports whether a term of a bound pod selects the pod
// being placed, q: Matches(q, the labels of q's namespace).
func (t *kubeTerm) selectsAsExisting(q *Pod, st *State) bool {
	return (t.names[q.Namespace] || t.nsSel.Matches(labels.Set(st.Namespaces[q.Namespace]))) && t.sel.Matches(labels.Set(q.Labels))
}

// kubeSpread is a DoNotSchedule constraint (topologySpreadConstraint).
type kubeSpread struct {
	c   SpreadConstraint
	sel labels.Selector
	// counts names the pods counted (namespace and selector), eligible
	// the nodes counted on: both shared by the replicas.
	counts, eligible string
}

// filterPod is a pod with its terms and constraints parsed, as
// framework.PodInfo holds them.
type filterPod struct {
	p              *Pod
	affinity, anti []*kubeTerm
	affinityID     string   // the pods matching every affinity term
	antiIDs        []string // the pods each anti-affinity term selects
	spread         []*kubeSpread
	selfAffine     bool // the pod matches all its affinity terms
}

type topoPair struct{ key, value string }

// selection is what one term or constraint of the placed pods selects
// among the pods bound so far, by topology domain of the keys it asks
// about.
type selection struct {
	test     func(*Pod) bool
	keys     []string
	pods     []*Pod
	byDomain map[topoPair][]*Pod
	keyed    int // pods on a node carrying one of keys
}

// holderTerm is a required anti-affinity term of a bound pod (parsed when
// first asked about), with the pod's place in the order of binding.
type holderTerm struct {
	q   *Pod
	i   int // in q.Affinity
	t   *kubeTerm
	idx int
}

// filterSet is the pods bound so far, with what the placed pods' terms
// and constraints select among them.
type filterSet struct {
	st       *State
	pods     map[string]*filterPod
	sel      map[string]*selection // a term's or constraint's id → what it selects
	sels     []*selection          // the same, in a list
	holders  map[topoPair][]*holderTerm
	bound    int
	eligible map[string]map[string]string
	// domains holds the distinct domains of each eligible set: a
	// constraint's counts start from them, not from every node (15,000
	// map entries per pod and constraint at 15,000 nodes).
	domains map[string][]string
	parsed  map[string]labels.Selector
	byPtr   map[*LabelSelector]labels.Selector
}

func newFilterSet(st *State, placed []*Pod) *filterSet {
	fs := &filterSet{st: st, pods: map[string]*filterPod{}, sel: map[string]*selection{}, holders: map[topoPair][]*holderTerm{},
		eligible: map[string]map[string]string{}, domains: map[string][]string{}, parsed: map[string]labels.Selector{}, byPtr: map[*LabelSelector]labels.Selector{}}
	// need is a label every pod the selection selects carries (see
	// requiredLabel): a bound pod without it is passed over untested.
	watch := func(id string, keys []string, need string, test func(*Pod) bool) {
		if fs.sel[id] != nil {
			return
		}
		if k, v, pair := strings.Cut(need, "\x00"); need != "" {
			inner := test
			test = func(q *Pod) bool {
				got, ok := q.Labels[k]
				return ok && (!pair || got == v) && inner(q)
			}
		}
		fs.sel[id] = &selection{test: test, keys: keys, byDomain: map[topoPair][]*Pod{}}
		fs.sels = append(fs.sels, fs.sel[id])
	}
	needOf := func(sels ...*LabelSelector) string {
		for _, s := range sels {
			if l, ok := s.requiredLabel(); ok {
				return l
			}
		}
		return ""
	}
	for _, p := range placed {
		fp := fs.parse(p)
		var affSels []*LabelSelector
		for _, t := range p.Affinity {
			if t.Required && !t.Anti {
				affSels = append(affSels, t.Selector)
			}
		}
		if len(fp.affinity) > 0 {
			terms := fp.affinity
			var keys []string
			for _, t := range terms {
				keys = append(keys, t.topologyKey)
			}
			watch(fp.affinityID, keys, needOf(affSels...), func(q *Pod) bool {
				for _, t := range terms {
					if !t.selectsIncoming(q, st) {
						return false
					}
				}
				return true
			})
		}
		var antiSels []*LabelSelector
		for _, t := range p.Affinity {
			if t.Required && t.Anti {
				antiSels = append(antiSels, t.Selector)
			}
		}
		for i, t := range fp.anti {
			watch(fp.antiIDs[i], []string{t.topologyKey}, needOf(antiSels[i]), func(q *Pod) bool { return t.selectsIncoming(q, st) })
		}
		for _, c := range fp.spread {
			ns, sel := p.Namespace, c.sel
			watch(c.counts, nil, needOf(c.c.Selector), func(q *Pod) bool {
				// countPodsMatchSelector: an empty selector counts nothing;
				// terminating pods are passed over.
				return !sel.Empty() && q.Namespace == ns && !q.Terminating && sel.Matches(labels.Set(q.Labels))
			})
		}
	}
	return fs
}

// selector parses a selector once per filter set (the replicas of a
// deployment have equal selectors).
func (fs *filterSet) selector(s *LabelSelector) labels.Selector {
	if sel, ok := fs.byPtr[s]; ok {
		return sel
	}
	key := s.canonical()
	sel, ok := fs.parsed[key]
	if !ok {
		sel = kubeSelector(s)
		fs.parsed[key] = sel
	}
	fs.byPtr[s] = sel
	return sel
}

// term is newKubeTerm with the selectors parsed once per filter set.
func (fs *filterSet) term(t PodAffinityTerm, podNS string) *kubeTerm {
	k := &kubeTerm{names: map[string]bool{}, nsSel: fs.selector(t.NamespaceSelector), sel: fs.selector(t.Selector), topologyKey: t.TopologyKey}
	if len(t.Namespaces) == 0 && t.NamespaceSelector == nil {
		k.names[podNS] = true
	}
	for _, n := range t.Namespaces {
		k.names[n] = true
	}
	return k
}

// parse returns a pod with its terms parsed (once per pod). The ids name
// what a term selects: the replicas of a deployment share them.
func (fs *filterSet) parse(p *Pod) *filterPod {
	if fp := fs.pods[p.Name]; fp != nil {
		return fp
	}
	fp := &filterPod{p: p}
	affinityID := "affinity"
	for _, t := range p.Affinity {
		if !t.Required {
			continue
		}
		k := fs.term(t, p.Namespace)
		id := coverOf(t, p.Namespace, false).canonical() + " " + t.Selector.canonical()
		if t.Anti {
			fp.anti = append(fp.anti, k)
			fp.antiIDs = append(fp.antiIDs, "anti "+id+" "+t.TopologyKey)
		} else {
			fp.affinity = append(fp.affinity, k)
			affinityID += "\n" + id + " " + t.TopologyKey
		}
	}
	if len(fp.affinity) > 0 {
		fp.affinityID = affinityID
		fp.selfAffine = true
		for _, t := range fp.affinity {
			fp.selfAffine = fp.selfAffine && t.selectsIncoming(p, fs.st)
		}
	}
	var keys []string
	for _, c := range p.Spread {
		if c.Hard && c.MaxSkew > 0 {
			keys = append(keys, c.TopologyKey)
		}
	}
	sort.Strings(keys)
	for _, c := range p.Spread {
		if !c.Hard || c.MaxSkew <= 0 {
			continue
		}
		eligible := fmt.Sprintf("%q %q", c.TopologyKey, keys)
		if policyOr(c.NodeAffinityPolicy, "Honor") == "Honor" {
			eligible += " affinity " + nodeAffinityCanonical(p)
		}
		if policyOr(c.NodeTaintsPolicy, "Ignore") == "Honor" {
			eligible += " tolerations " + tolerationsCanonical(p)
		}
		fp.spread = append(fp.spread, &kubeSpread{c: c, sel: fs.selector(c.Selector),
			counts: "spread " + strconv.Quote(p.Namespace) + " " + c.Selector.canonical(), eligible: eligible})
	}
	fs.pods[p.Name] = fp
	return fp
}

// add binds a pod (its node known to the state) in the set.
func (fs *filterSet) add(q *Pod) {
	for _, sl := range fs.sels {
		if !sl.test(q) {
			continue
		}
		sl.pods = append(sl.pods, q)
		keyed := false
		for _, k := range sl.keys {
			if v, ok := fs.st.label(q.NodeName, k); ok {
				d := topoPair{k, v}
				sl.byDomain[d] = append(sl.byDomain[d], q)
				keyed = true
			}
		}
		if keyed {
			sl.keyed++
		}
	}
	for i, t := range q.Affinity {
		if t.Required && t.Anti {
			if v, ok := fs.st.label(q.NodeName, t.TopologyKey); ok {
				d := topoPair{t.TopologyKey, v}
				fs.holders[d] = append(fs.holders[d], &holderTerm{q: q, i: i, idx: fs.bound})
			}
		}
	}
	fs.bound++
}

// relevant reports whether a bound pod can change a Filter's answer for
// the placed pods: one of their terms or constraints selects it, or it
// has an anti-affinity term.
func (fs *filterSet) relevant(q *Pod) bool {
	for _, t := range q.Affinity {
		if t.Required && t.Anti {
			return true
		}
	}
	for _, sl := range fs.sels {
		if sl.test(q) {
			return true
		}
	}
	return false
}

// interPodAffinity is InterPodAffinity's Filter for p on node n given the
// set: a reason when it fails, and whether it passes by the first-pod
// exemption.
func (fs *filterSet) interPodAffinity(fp *filterPod, n *Node) (string, bool) {
	exempt := false
	if len(fp.affinity) > 0 {
		// nodeTopologyMatchesAffinity: every topology key on the node,
		// and for each term a pod matching all the terms in the node's
		// domain (the counts are per topology pair, over the pods that
		// match every term).
		sl := fs.sel[fp.affinityID]
		exist := true
		for _, t := range fp.affinity {
			v, ok := n.Labels[t.topologyKey]
			if !ok {
				return "H14 affinity: the node has no " + t.topologyKey + " label", false
			}
			exist = exist && len(sl.byDomain[topoPair{t.topologyKey, v}]) > 0
		}
		if !exist {
			// len(clusterWideAffinityCounts) > 0: a pod matching every
			// term on a node carrying one of the keys.
			if sl.keyed > 0 || !fp.selfAffine {
				return "H14 affinity unmet", false
			}
			exempt = true
		}
	}
	// satisfyPodAntiAffinity: the pod's own terms.
	for i, t := range fp.anti {
		if v, ok := n.Labels[t.topologyKey]; ok {
			if qs := fs.sel[fp.antiIDs[i]].byDomain[topoPair{t.topologyKey, v}]; len(qs) > 0 {
				return "H14 anti-affinity with pod " + qs[0].Name, false
			}
		}
	}
	// satisfyExistingPodsAntiAffinity: the terms of the pods bound, in the
	// domains of the node's labels.
	var hit *holderTerm
	for k, v := range n.Labels {
		for _, h := range fs.holders[topoPair{k, v}] {
			if hit != nil && h.idx > hit.idx {
				continue
			}
			if h.t == nil {
				h.t = fs.term(h.q.Affinity[h.i], h.q.Namespace)
			}
			if h.t.selectsAsExisting(fp.p, fs.st) {
				hit = h
			}
		}
	}
	if hit != nil {
		return "H14 pod " + hit.q.Name + " is anti-affine to it", false
	}
	return "", exempt
}

// podTopologySpread is PodTopologySpread's Filter for p on node n.
func (fs *filterSet) podTopologySpread(fp *filterPod, n *Node) string {
	for _, c := range fp.spread {
		v, ok := n.Labels[c.c.TopologyKey]
		if !ok {
			return "N3 the node has no " + c.c.TopologyKey + " label"
		}
		eligible := fs.eligibleNodes(fp, c)
		counts := map[string]int64{}
		for _, d := range fs.domains[c.eligible] {
			counts[d] = 0
		}
		for _, q := range fs.sel[c.counts].pods {
			if d, ok := eligible[q.NodeName]; ok {
				counts[d]++
			}
		}
		low := int64(math.MaxInt32)
		for _, k := range counts {
			low = min(low, k)
		}
		if int64(len(counts)) < max(c.c.MinDomains, 1) {
			low = 0
		}
		self := int64(0)
		if c.sel.Matches(labels.Set(fp.p.Labels)) {
			self = 1
		}
		if skew := counts[v] + self - low; skew > c.c.MaxSkew {
			return fmt.Sprintf("N3 skew %d in %s %s > %d", skew, c.c.TopologyKey, v, c.c.MaxSkew)
		}
	}
	return ""
}

// eligibleNodes maps the nodes a constraint counts on to their domain:
// they carry every topology key of the pod's DoNotSchedule constraints
// and pass its node-inclusion policies (matchNodeInclusionPolicies).
func (fs *filterSet) eligibleNodes(fp *filterPod, c *kubeSpread) map[string]string {
	if m, ok := fs.eligible[c.eligible]; ok {
		return m
	}
	m := map[string]string{}
	p := fp.p
	for name, n := range fs.st.Nodes {
		ok := true
		for _, o := range fp.spread {
			_, has := n.Labels[o.c.TopologyKey]
			ok = ok && has
		}
		if ok && policyOr(c.c.NodeAffinityPolicy, "Honor") == "Honor" {
			ok = requiredNodeAffinityMatches(p, n)
		}
		if ok && policyOr(c.c.NodeTaintsPolicy, "Ignore") == "Honor" {
			for _, t := range n.Taints {
				if (t.Effect == "NoSchedule" || t.Effect == "NoExecute") && !tolerates(p, t) {
					ok = false
				}
			}
		}
		if ok {
			m[name] = n.Labels[c.c.TopologyKey]
		}
	}
	fs.eligible[c.eligible] = m
	seen := map[string]bool{}
	for _, d := range m {
		if !seen[d] {
			seen[d] = true
			fs.domains[c.eligible] = append(fs.domains[c.eligible], d)
		}
	}
	return m
}

// requiredNodeAffinityMatches is nodeaffinity.GetRequiredNodeAffinity(p)
// .Match(n) as H12 and H13 read it: every node-selector pair, and one
// required term whose requirements all hold.
func requiredNodeAffinityMatches(p *Pod, n *Node) bool {
	for k, v := range p.NodeSelector {
		if got, ok := n.Labels[k]; !ok || got != v {
			return false
		}
	}
	return p.RequiredNodeAffinity == nil || selectorHolds(n, p.RequiredNodeAffinity)
}

// checkBindingOrder checks H14 and N3 for the placed pods of a batch, bound
// (existing) the live pods outside it on nodes of the state: it looks for
// an order of binding them in which each passes InterPodAffinity's and
// PodTopologySpread's Filters, and reports the pods it could not order,
// each with the reason it fails once the others are bound.
func (s *State) checkBindingOrder(placed, existing []*Pod) []CheckFault {
	fs := newFilterSet(s, placed)
	for _, q := range existing {
		fs.add(q)
	}
	return fs.order(placed)
}

func (fs *filterSet) order(placed []*Pod) []CheckFault {
	rest := append([]*Pod(nil), placed...)
	sort.Slice(rest, func(i, j int) bool { return rest[i].Name < rest[j].Name })
	pass := func(p *Pod, exemptOnly bool) bool {
		fp := fs.parse(p)
		n := fs.st.Nodes[p.NodeName]
		r, exempt := fs.interPodAffinity(fp, n)
		if r != "" || exemptOnly && !exempt || fs.podTopologySpread(fp, n) != "" {
			return false
		}
		fs.add(p)
		return true
	}
	// sweep binds the pods of a class that pass, in name order, until none
	// does; it reports whether it bound one.
	sweep := func(class func(*Pod) bool, exemptOnly bool) bool {
		any := false
		for again := true; again; {
			again = false
			for i := 0; i < len(rest); i++ {
				if p := rest[i]; class(p) && pass(p, exemptOnly) {
					rest = append(rest[:i], rest[i+1:]...)
					i--
					again, any = true, true
				}
			}
		}
		return any
	}
	withAffinity := func(p *Pod) bool { return len(fs.parse(p).affinity) > 0 }
	without := func(p *Pod) bool { return !withAffinity(p) }
	for len(rest) > 0 {
		a := sweep(withAffinity, true)
		b := sweep(without, false)
		c := sweep(withAffinity, false)
		if !a && !b && !c {
			break
		}
	}
	var faults []CheckFault
	for _, p := range rest {
		fp := fs.parse(p)
		n := fs.st.Nodes[p.NodeName]
		r, _ := fs.interPodAffinity(fp, n)
		if r == "" {
			r = fs.podTopologySpread(fp, n)
		}
		faults = append(faults, CheckFault{Problem: fmt.Sprintf("%s on %s: %s", p.Name, p.NodeName, r), Pods: []string{p.Name}})
	}
	return faults
}
