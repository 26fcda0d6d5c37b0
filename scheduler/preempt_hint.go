package scheduler

import (
	"maps"
	"sort"
)

// preemptionHint is a first guess for a preemption plan, found the way
// kube-scheduler preempts: one preemptor at a time (in queue order), on
// the candidate node that needs the least evictions of the lowest
// priority, evicting the lowest-priority victims there until its requests
// fit, then keeping back (highest priority first) those the room allows.
// It returns the node of each preemptor it places and, for each victim, its
// node ("" when the guess evicts it).
//
// The guess only warms up the solver (weave reads the stored decision
// columns as hints); the plan is the solver's and is checked like any
// other. It weighs capacity only: the solver's first solution used to
// place a few preemptors and spend the rest of its time finding the others
// one eviction at a time (20 of 100 preemptors in 0.7 s at 500 nodes,
// where each needed three evictions at once).
func preemptionHint(st *State, preemptors, victims []*Pod) map[string]string {
	hint := make(map[string]string, len(preemptors)+len(victims))
	onNode := map[string][]*Pod{}
	for _, v := range victims {
		hint[v.Name] = v.NodeName
		onNode[v.NodeName] = append(onNode[v.NodeName], v)
	}
	nodes := make([]string, 0, len(onNode))
	for n, vs := range onNode {
		nodes = append(nodes, n)
		// Lowest priority first; among equals the larger first, so that
		// fewer go.
		sort.Slice(vs, func(i, j int) bool {
			if vs[i].Priority != vs[j].Priority {
				return vs[i].Priority < vs[j].Priority
			}
			if vs[i].CPU != vs[j].CPU {
				return vs[i].CPU > vs[j].CPU
			}
			return vs[i].Name < vs[j].Name
		})
	}
	sort.Strings(nodes)
	if hasGroups(preemptors) {
		// A gang's members may go to nodes without victims too.
		nodes = sortedKeys(st.Nodes)
	}
	g := hintGuess{st: st, onNode: onNode, used: st.usage(nil), evicted: map[string]bool{}, hint: hint}
	for i := 0; i < len(preemptors); {
		unit := preemptors[i : i+1]
		if name := preemptors[i].PodGroup; name != "" {
			j := i + 1
			for j < len(preemptors) && preemptors[j].PodGroup == name {
				j++
			}
			unit = preemptors[i:j]
		}
		i += len(unit)
		if unit[0].PodGroup == "" {
			g.place(unit[0], nodes)
			continue
		}
		g.placeGroup(unit, nodes)
	}
	return hint
}

// hintGuess is preemptionHint's guess as it is built: each node's use, the
// victims evicted so far and the hint.
type hintGuess struct {
	st      *State
	onNode  map[string][]*Pod
	used    map[string]nodeUse
	evicted map[string]bool
	hint    map[string]string
}

// place guesses p's node among nodes: the one whose evictions for it have
// the lowest priority, then the fewest; false when none has room.
func (g *hintGuess) place(p *Pod, nodes []string) bool {
	bestNode, bestOut := "", []*Pod(nil)
	var bestPrio int64
	for _, n := range nodes {
		node := g.st.Nodes[n]
		if node == nil {
			continue
		}
		out, ok := evictionsFor(node, g.used[n], g.onNode[n], g.evicted, p)
		if !ok {
			continue
		}
		var prio int64 = -1 << 62
		for _, v := range out {
			prio = max(prio, v.Priority)
		}
		if bestNode == "" || prio < bestPrio || prio == bestPrio && len(out) < len(bestOut) {
			bestNode, bestOut, bestPrio = n, out, prio
		}
	}
	if bestNode == "" {
		return false
	}
	g.hint[p.Name] = bestNode
	u := g.used[bestNode]
	u.add(p, 1)
	for _, v := range bestOut {
		g.evicted[v.Name] = true
		g.hint[v.Name] = ""
		u.add(v, -1)
	}
	g.used[bestNode] = u
	return true
}

// placeGroup guesses a PodGroup's preemptors together, as kube-scheduler
// places a group: pod by pod, and with a topology key in each domain (the
// bound members' if any), keeping the domain that evicts the fewest pods.
// A group it cannot place whole (MinCount with its bound members) is left
// out, with no eviction for it.
func (g *hintGuess) placeGroup(unit []*Pod, nodes []string) {
	grp := g.st.PodGroups[unit[0].PodGroup]
	if grp == nil {
		return
	}
	inUnit := map[string]bool{}
	for _, p := range unit {
		inUnit[p.Name] = true
	}
	bound := int64(0)
	boundDomain := ""
	for _, p := range g.st.Pods {
		if p.PodGroup == grp.Name && !inUnit[p.Name] && p.NodeName != "" && live(p) && !g.evicted[p.Name] {
			bound++
			if grp.TopologyKey != "" {
				boundDomain, _ = g.st.label(p.NodeName, grp.TopologyKey)
			}
		}
	}
	domains := [][]string{nodes}
	if grp.TopologyKey != "" {
		by := map[string][]string{}
		for _, n := range nodes {
			if v, ok := g.st.label(n, grp.TopologyKey); ok && (boundDomain == "" || v == boundDomain) {
				by[v] = append(by[v], n)
			}
		}
		domains = domains[:0]
		for _, v := range sortedKeys(by) {
			domains = append(domains, by[v])
		}
	}
	try := func(ns []string) (hintGuess, int, bool) {
		t := hintGuess{st: g.st, onNode: g.onNode, used: maps.Clone(g.used), evicted: maps.Clone(g.evicted), hint: maps.Clone(g.hint)}
		placed := int64(0)
		for _, p := range unit {
			if t.place(p, ns) {
				placed++
			}
		}
		return t, len(t.evicted) - len(g.evicted), bound+placed >= grp.minCount()
	}
	var best *hintGuess
	bestEv := 0
	for _, ns := range domains {
		t, ev, ok := try(ns)
		if ok && (best == nil || ev < bestEv) {
			best, bestEv = &t, ev
		}
	}
	if best != nil {
		*g = *best
	}
}

// evictionsFor returns the victims of one node (not evicted yet, lowest
// priority first) whose eviction makes room for p beside the node's use u,
// keeping back every one the room allows, highest priority first; false
// when evicting them all is not enough.
func evictionsFor(n *Node, u nodeUse, vs []*Pod, evicted map[string]bool, p *Pod) ([]*Pod, bool) {
	var out []*Pod
	for _, v := range vs {
		if u.holds(n, p) {
			break
		}
		if evicted[v.Name] {
			continue
		}
		u.add(v, -1)
		out = append(out, v)
	}
	if !u.holds(n, p) {
		return nil, false
	}
	// Keep back what still fits, highest priority first.
	var gone []*Pod
	for i := len(out) - 1; i >= 0; i-- {
		v := out[i]
		if u.add(v, 1); u.holds(n, p) {
			continue // reprieved
		}
		u.add(v, -1)
		gone = append(gone, v)
	}
	return gone, true
}
