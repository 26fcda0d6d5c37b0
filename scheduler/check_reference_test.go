package scheduler

import (
	"fmt"
	"sort"
	"strings"
)

// The independent check as it was before it read only the pods that the
// batch's placements can involve (session 12): one pass per question over
// every bound pod of the cluster. Kept as the reference that Check must
// agree with (TestCheckAgreesWithTheReference).

// Check verifies the hard policies for the pods of a batch, placed as their
// NodeName says ("" is unplaced), against every other live bound pod.
func (s *State) referenceCheck(batch []*Pod) error {
	inBatch := map[string]bool{}
	for _, b := range batch {
		inBatch[b.Name] = true
	}
	var bound, placed []*Pod
	for _, p := range s.Pods {
		if p.NodeName != "" && live(p) {
			if inBatch[p.Name] {
				placed = append(placed, s.Pods[p.Name])
			} else {
				bound = append(bound, p)
			}
		}
	}
	sort.Slice(placed, func(i, j int) bool { return placed[i].Name < placed[j].Name })
	// By name, so that an error names the first pod at fault (Check does
	// the same).
	sort.Slice(bound, func(i, j int) bool { return bound[i].Name < bound[j].Name })
	ix := s.refIndexBound(bound)
	var errs []string
	fail := func(f string, a ...any) { errs = append(errs, fmt.Sprintf(f, a...)) }
	touched := map[string]bool{}
	for _, p := range placed {
		n := s.Nodes[p.NodeName]
		if n == nil {
			fail("%s on unknown node %s", p.Name, p.NodeName)
			continue
		}
		touched[n.Name] = true
		if r := s.nodeOK(p, n, false); r != "" {
			fail("%s on %s: %s", p.Name, n.Name, r)
		}
		if r := ix.conflicts(p, n.Name); r != "" {
			fail("%s on %s: %s", p.Name, n.Name, r)
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
		for i, on := range [][]*Pod{ix.inDomain(refNodeItself, name), placedOn[name]} {
			for _, q := range on {
				total.add(q, 1)
				if i == 1 {
					added.add(q, 1)
				}
			}
		}
		if r := total.overCapacity(n, added); r != "" {
			fail("H5 node %s over capacity: %s", name, r)
		}
		for i, p := range placedOn[name] {
			for _, q := range append(append([]*Pod(nil), ix.inDomain(refNodeItself, name)...), placedOn[name][i+1:]...) {
				if hp, ok := portClash(p, q); ok {
					fail("H6 node %s: host port %s/%d (%s) of %s clashes with %s", name, hp.Protocol, hp.Port, hp.HostIP, p.Name, q.Name)
				}
			}
		}
	}
	// H14 within the batch: self-selecting anti-affinity terms.
	for i, a := range placed {
		for _, b := range placed[i+1:] {
			for _, t := range a.Affinity {
				if t.Anti && t.Required && selects(t, a.Namespace, a) && selects(t, a.Namespace, b) && hasTerm(b, t) && s.sameDomain(a.NodeName, b.NodeName, t.TopologyKey) {
					fail("H14 %s and %s share a %s domain", a.Name, b.Name, t.TopologyKey)
				}
			}
		}
	}
	// H14 required affinity.
	for _, p := range placed {
		for _, t := range p.Affinity {
			if t.Anti || !t.Required {
				continue
			}
			sel := ix.selected(t, p.Namespace)
			anyBound, okBound := len(sel) > 0, false
			for _, q := range sel {
				okBound = okBound || s.sameDomain(p.NodeName, q.NodeName, t.TopologyKey)
			}
			okBatch := false
			if t.TopologyKey == LabelHostname {
				for _, q := range placed {
					okBatch = okBatch || q != p && q.Labels[t.Key] == t.Value && q.NodeName == p.NodeName
				}
			}
			exempt := p.Labels[t.Key] == t.Value && !anyBound
			if !okBound && !okBatch && !exempt {
				fail("H14 %s on %s: affinity %s=%s unmet", p.Name, p.NodeName, t.Key, t.Value)
			}
		}
	}
	// H15 service affinity within the batch: one zone per service.
	zones := map[string]map[string]bool{}
	for _, p := range placed {
		if n := s.Nodes[p.NodeName]; p.Service != "" && n != nil { // an unknown node is reported above
			if zones[p.Service] == nil {
				zones[p.Service] = map[string]bool{}
			}
			zones[p.Service][n.Zone] = true
		}
	}
	for svc, z := range zones {
		if len(z) > 1 {
			fail("H15 service %s placed in %d zones", svc, len(z))
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
	for _, q := range append(append([]*Pod(nil), bound...), placed...) {
		count[gn{q.Group, q.NodeName}]++
	}
	for _, p := range placed {
		recv[gn{p.Group, p.NodeName}] = true
	}
	for k := range recv {
		if l := limit[k.g]; l > 0 && count[k] > l {
			fail("N1 group %s has %d pods on %s, limit %d", k.g, count[k], k.n, l)
		}
	}
	errs = append(errs, s.refCheckSpread(batch, bound, placed)...)
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// boundIndex finds, for Check, the bound pods that matter to a pod on a
// node: those of a topology domain, those a term selects, those with
// anti-affinity terms, those of a service. Check looped over every bound
// pod for each pod of the batch (240,000 iterations per 100-pod batch on
// a cluster of 2,400 pods: a tenth of the scheduling loop).
type refBoundIndex struct {
	s     *State
	bound []*Pod
	// antiOf maps a selector (namespace, label key, value) to the bound
	// pods whose required anti-affinity terms select it, with the term's
	// topology key.
	antiOf    map[refSelectorKey][]refAntiTerm
	byService map[string][]*Pod
	// byDomain maps a topology key (refNodeItself for the node) and a domain
	// to the bound pods there, built per key when first asked for.
	byDomain map[string]map[string][]*Pod
	// bySelector caches the bound pods each term selector selects.
	bySelector map[refSelectorKey][]*Pod
}

type refSelectorKey struct{ ns, key, value string }

type refAntiTerm struct {
	q           *Pod
	topologyKey string
}

func (s *State) refIndexBound(bound []*Pod) *refBoundIndex {
	ix := &refBoundIndex{s: s, bound: bound, antiOf: map[refSelectorKey][]refAntiTerm{}, byService: map[string][]*Pod{},
		byDomain: map[string]map[string][]*Pod{}, bySelector: map[refSelectorKey][]*Pod{}}
	for _, q := range bound {
		for _, t := range q.Affinity {
			if t.Anti && t.Required {
				k := refSelectorKey{q.Namespace, t.Key, t.Value}
				ix.antiOf[k] = append(ix.antiOf[k], refAntiTerm{q, t.TopologyKey})
			}
		}
		if q.Service != "" {
			ix.byService[q.Service] = append(ix.byService[q.Service], q)
		}
	}
	return ix
}

// refNodeItself is the "topology key" of a node's own pods in boundIndex (no
// label key contains a NUL).
const refNodeItself = "\x00node"

// inDomain returns the bound pods in node's domain of a topology key (on
// node itself for refNodeItself); none when node lacks the key.
func (ix *refBoundIndex) inDomain(key, node string) []*Pod {
	m, ok := ix.byDomain[key]
	if !ok {
		m = map[string][]*Pod{}
		for _, q := range ix.bound {
			d, ok := q.NodeName, true
			if key != refNodeItself {
				d, ok = ix.s.label(q.NodeName, key)
			}
			if ok {
				m[d] = append(m[d], q)
			}
		}
		ix.byDomain[key] = m
	}
	d, ok := node, true
	if key != refNodeItself {
		d, ok = ix.s.label(node, key)
	}
	if !ok {
		return nil
	}
	return m[d]
}

// selected returns the bound pods that a term of a pod in namespace ns
// selects.
func (ix *refBoundIndex) selected(t PodAffinityTerm, ns string) []*Pod {
	k := refSelectorKey{ns, t.Key, t.Value}
	sel, ok := ix.bySelector[k]
	if !ok {
		for _, q := range ix.bound {
			if selects(t, ns, q) {
				sel = append(sel, q)
			}
		}
		ix.bySelector[k] = sel
	}
	return sel
}

// conflicts checks a pod on a node against the bound pods: H6 ports are
// counted per node by Check; here H14 anti-affinity both ways, H15
// against bound pods of the service.
func (ix *refBoundIndex) conflicts(p *Pod, node string) string {
	s := ix.s
	for _, t := range p.Affinity {
		if !t.Anti || !t.Required {
			continue
		}
		for _, q := range ix.inDomain(t.TopologyKey, node) {
			if selects(t, p.Namespace, q) {
				return "H14 anti-affinity with bound pod " + q.Name
			}
		}
	}
	for _, k := range sortedKeys(p.Labels) {
		for _, a := range ix.antiOf[refSelectorKey{p.Namespace, k, p.Labels[k]}] {
			if s.sameDomain(node, a.q.NodeName, a.topologyKey) {
				return "H14 bound pod " + a.q.Name + " is anti-affine to it"
			}
		}
	}
	if p.Service != "" {
		for _, q := range ix.byService[p.Service] {
			if s.Nodes[q.NodeName] != nil && s.Nodes[q.NodeName].Zone != s.Nodes[node].Zone {
				return "H15 service " + p.Service + " lives in another zone"
			}
		}
	}
	return ""
}

// checkSpread checks N2 (even spreading, max_skew 0) and N3 (maxSkew) for
// the domains that receive pods of the batch.
func (s *State) refCheckSpread(batch, bound, placed []*Pod) []string {
	var errs []string
	type gk struct{ g, k string }
	skew := map[gk]int64{}
	for _, p := range batch {
		for _, c := range p.Spread {
			if !c.Hard {
				continue
			}
			k := gk{p.Group, c.TopologyKey}
			if old, ok := skew[k]; !ok || c.MaxSkew < old {
				skew[k] = c.MaxSkew
			}
		}
	}
	for k, sk := range skew {
		domains := map[string]int64{}
		for _, n := range s.Nodes {
			if v, ok := n.Labels[k.k]; ok && !n.NotReady && !n.Unschedulable {
				domains[v] += 0
			}
		}
		var size int64
		for _, q := range s.Pods {
			if q.Group == k.g && live(q) {
				size++
			}
		}
		added := map[string]int64{}
		for _, q := range append(append([]*Pod(nil), bound...), placed...) {
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
					added[v]++
				}
			}
		}
		lo := int64(1 << 62)
		for _, c := range domains {
			lo = min(lo, c)
		}
		nd := int64(len(domains))
		for d, a := range added {
			if a == 0 {
				continue
			}
			c := domains[d]
			if sk == 0 && nd > 0 && c > (size+nd-1)/nd {
				errs = append(errs, fmt.Sprintf("N2 group %s has %d pods in %s %s, limit %d", k.g, c, k.k, d, (size+nd-1)/nd))
			}
			if sk > 0 && c-lo > sk {
				errs = append(errs, fmt.Sprintf("N3 group %s skew %d in %s %s > %d", k.g, c-lo, k.k, d, sk))
			}
		}
	}
	return errs
}
