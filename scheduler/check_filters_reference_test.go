package scheduler

import (
	"fmt"
	"math"
	"sort"

	"k8s.io/apimachinery/pkg/labels"
)

// The reference of checkBindingOrder: InterPodAffinity's and
// PodTopologySpread's PreFilter and Filter written as the plugins are
// (v1.37.2, feature gates at their defaults): the PreFilter maps of
// topology pairs computed from every pod bound so far for each question,
// then the Filter over them; and the same greedy order. Check's version
// collects only the bound pods that can matter and keeps, per term, the
// pods it selects.

type refPair struct{ key, value string }

// refBound is a bound pod in the reference: the pod and its node.
type refBound struct {
	p *Pod
	n *Node
}

func (s *State) refOrder(placed, existing []*Pod) []string {
	rest := append([]*Pod(nil), placed...)
	sort.Slice(rest, func(i, j int) bool { return rest[i].Name < rest[j].Name })
	var bound []refBound
	for _, q := range existing {
		bound = append(bound, refBound{q, s.Nodes[q.NodeName]})
	}
	filter := func(p *Pod) (string, bool) {
		r, exempt := s.refInterPodAffinity(p, bound)
		if r == "" {
			r = s.refPodTopologySpread(p, bound)
		}
		return r, exempt
	}
	sweep := func(affine, exemptOnly bool) bool {
		any := false
		for again := true; again; {
			again = false
			for i := 0; i < len(rest); i++ {
				p := rest[i]
				if refRequiredAffinity(p) != affine {
					continue
				}
				if r, exempt := filter(p); r == "" && (exempt || !exemptOnly) {
					bound = append(bound, refBound{p, s.Nodes[p.NodeName]})
					rest = append(rest[:i], rest[i+1:]...)
					i--
					again, any = true, true
				}
			}
		}
		return any
	}
	for len(rest) > 0 {
		a := sweep(true, true)
		b := sweep(false, false)
		c := sweep(true, false)
		if !a && !b && !c {
			break
		}
	}
	var errs []string
	for _, p := range rest {
		r, _ := filter(p)
		errs = append(errs, fmt.Sprintf("%s on %s: %s", p.Name, p.NodeName, r))
	}
	return errs
}

func refRequiredAffinity(p *Pod) bool {
	for _, t := range p.Affinity {
		if t.Required && !t.Anti {
			return true
		}
	}
	return false
}

func refTerms(p *Pod, anti bool) []*kubeTerm {
	var out []*kubeTerm
	for _, t := range p.Affinity {
		if t.Required && t.Anti == anti {
			out = append(out, newKubeTerm(t, p.Namespace))
		}
	}
	return out
}

// refInterPodAffinity is PreFilter then Filter with the fast path off.
func (s *State) refInterPodAffinity(p *Pod, bound []refBound) (string, bool) {
	n := s.Nodes[p.NodeName]
	aff, anti := refTerms(p, false), refTerms(p, true)
	matchesAll := func(q *Pod) bool {
		if len(aff) == 0 {
			return false
		}
		for _, t := range aff {
			if !t.selectsIncoming(q, s) {
				return false
			}
		}
		return true
	}
	// PreFilter: getExistingAntiAffinityCounts and
	// getIncomingAffinityAntiAffinityCounts, each remembering the first
	// pod counted for a pair (for the message).
	// The anti-affinity counts are kept per term of the pod (the plugin
	// sums the terms of a topology key: the same answer).
	existingAnti, affinity, antiCounts := map[refPair]int{}, map[refPair]int{}, make([]map[refPair]*Pod, len(anti))
	for i := range antiCounts {
		antiCounts[i] = map[refPair]*Pod{}
	}
	for i, b := range bound {
		for _, t := range refTerms(b.p, true) {
			if v, ok := b.n.Labels[t.topologyKey]; ok && t.selectsAsExisting(p, s) {
				if _, seen := existingAnti[refPair{t.topologyKey, v}]; !seen {
					existingAnti[refPair{t.topologyKey, v}] = i
				}
			}
		}
		if matchesAll(b.p) {
			for _, t := range aff {
				if v, ok := b.n.Labels[t.topologyKey]; ok {
					affinity[refPair{t.topologyKey, v}]++
				}
			}
		}
		for j, t := range anti {
			if v, ok := b.n.Labels[t.topologyKey]; ok && t.selectsIncoming(b.p, s) && antiCounts[j][refPair{t.topologyKey, v}] == nil {
				antiCounts[j][refPair{t.topologyKey, v}] = b.p
			}
		}
	}
	// Filter: nodeTopologyMatchesAffinity.
	exempt := false
	if len(aff) > 0 {
		exist := true
		for _, t := range aff {
			v, ok := n.Labels[t.topologyKey]
			if !ok {
				return "H14 affinity: the node has no " + t.topologyKey + " label", false
			}
			if affinity[refPair{t.topologyKey, v}] <= 0 {
				exist = false
			}
		}
		if !exist {
			if len(affinity) != 0 || !matchesAll(p) {
				return "H14 affinity unmet", false
			}
			exempt = true
		}
	}
	// satisfyPodAntiAffinity.
	for j, t := range anti {
		if v, ok := n.Labels[t.topologyKey]; ok {
			if q := antiCounts[j][refPair{t.topologyKey, v}]; q != nil {
				return "H14 anti-affinity with pod " + q.Name, false
			}
		}
	}
	// satisfyExistingPodsAntiAffinity: every label of the node (the
	// message names the first pod bound).
	hit := -1
	for k, v := range n.Labels {
		if i, ok := existingAnti[refPair{k, v}]; ok && (hit < 0 || i < hit) {
			hit = i
		}
	}
	if hit >= 0 {
		return "H14 pod " + bound[hit].p.Name + " is anti-affine to it", false
	}
	return "", exempt
}

// refPodTopologySpread is calPreFilterState then Filter.
func (s *State) refPodTopologySpread(p *Pod, bound []refBound) string {
	var cs []SpreadConstraint
	for _, c := range p.Spread {
		if c.Hard && c.MaxSkew > 0 {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		return ""
	}
	onNode := map[string][]*Pod{}
	for _, b := range bound {
		onNode[b.n.Name] = append(onNode[b.n.Name], b.p)
	}
	counts := make([]map[string]int, len(cs))
	for i := range cs {
		counts[i] = map[string]int{}
	}
	for name, node := range s.Nodes {
		all := true // nodeLabelsMatchSpreadConstraints
		for _, c := range cs {
			_, ok := node.Labels[c.TopologyKey]
			all = all && ok
		}
		if !all {
			continue
		}
		for i, c := range cs {
			if policyOr(c.NodeAffinityPolicy, "Honor") == "Honor" && !requiredNodeAffinityMatches(p, node) {
				continue
			}
			if policyOr(c.NodeTaintsPolicy, "Ignore") == "Honor" {
				untolerated := false
				for _, t := range node.Taints {
					untolerated = untolerated || (t.Effect == "NoSchedule" || t.Effect == "NoExecute") && !tolerates(p, t)
				}
				if untolerated {
					continue
				}
			}
			// countPodsMatchSelector
			sel, n := kubeSelector(c.Selector), 0
			if !sel.Empty() {
				for _, q := range onNode[name] {
					if !q.Terminating && q.Namespace == p.Namespace && sel.Matches(labels.Set(q.Labels)) {
						n++
					}
				}
			}
			counts[i][node.Labels[c.TopologyKey]] += n
		}
	}
	node := s.Nodes[p.NodeName]
	for i, c := range cs {
		v, ok := node.Labels[c.TopologyKey]
		if !ok {
			return "N3 the node has no " + c.TopologyKey + " label"
		}
		low := math.MaxInt32
		for _, k := range counts[i] {
			low = min(low, k)
		}
		if len(counts[i]) < int(max(c.MinDomains, 1)) {
			low = 0
		}
		self := 0
		if kubeSelector(c.Selector).Matches(labels.Set(p.Labels)) {
			self = 1
		}
		if skew := counts[i][v] + self - low; skew > int(c.MaxSkew) {
			return fmt.Sprintf("N3 skew %d in %s %s > %d", skew, c.TopologyKey, v, c.MaxSkew)
		}
	}
	return ""
}
