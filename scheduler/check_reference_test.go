package scheduler

import (
	"fmt"
	"sort"
	"strings"
)

// The independent check as it was before it read only the pods that the
// batch's placements can involve (commit e4b8a24): one pass per question over
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
	// H14 and N3: an order of binding in which each pod passes the
	// Filters, each evaluated as the plugins do (refFilter).
	var known []*Pod
	for _, p := range placed {
		if s.Nodes[p.NodeName] != nil {
			known = append(known, p)
		}
	}
	var existing []*Pod
	for _, q := range bound {
		if s.Nodes[q.NodeName] != nil {
			existing = append(existing, q)
		}
	}
	errs = append(errs, s.refOrder(known, existing)...)
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

// refBoundIndex finds, for the reference, the bound pods of a topology
// domain and of a service.
type refBoundIndex struct {
	s         *State
	bound     []*Pod
	byService map[string][]*Pod
	// byDomain maps a topology key (refNodeItself for the node) and a domain
	// to the bound pods there, built per key when first asked for.
	byDomain map[string]map[string][]*Pod
}

func (s *State) refIndexBound(bound []*Pod) *refBoundIndex {
	ix := &refBoundIndex{s: s, bound: bound, byService: map[string][]*Pod{}, byDomain: map[string]map[string][]*Pod{}}
	for _, q := range bound {
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

// conflicts checks a pod on a node against the bound pods of its service
// (H15).
func (ix *refBoundIndex) conflicts(p *Pod, node string) string {
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

// refCheckSpread checks N2 (even spreading, max_skew 0) for the domains
// that receive pods of the batch.
func (s *State) refCheckSpread(batch, bound, placed []*Pod) []string {
	var errs []string
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
		nd := int64(len(domains))
		for d, a := range added {
			if a == 0 {
				continue
			}
			if c := domains[d]; nd > 0 && c > (size+nd-1)/nd {
				errs = append(errs, fmt.Sprintf("N2 group %s has %d pods in %s %s, limit %d", k.g, c, k.k, d, (size+nd-1)/nd))
			}
		}
	}
	return errs
}
