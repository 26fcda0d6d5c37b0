package scheduler

import (
	"cmp"
	"slices"
	"sort"
	"strings"
)

// minVictimNodes is the least number of nodes whose lower-priority pods a
// preemption plan considers; a plan for n pods considers max(this, 2n).
const minVictimNodes = 100

// victimsOnCandidateNodes keeps the victims of the nodes a plan for
// preemptors is most likely to use, when more than max(100, 2 ×
// preemptors) nodes hold victims. kube-scheduler also preempts on a
// sample of candidate nodes. Every lower-priority pod of the cluster was a
// variable of the preemption model: at 500 nodes with 2,000 low pods,
// grounding a plan took 1.3 s on a quiet machine even for one preemptor.
//
// Nodes that would have room for the smallest preemptor once their
// victims are gone come first, those needing the fewest evictions first;
// then the others (their victims may still matter: a pod evicted for
// anti-affinity in a zone). In a cluster with fewer nodes holding victims
// nothing is left out.
func victimsOnCandidateNodes(st *State, victims, preemptors []*Pod) []*Pod {
	k := max(minVictimNodes, 2*len(preemptors))
	count := map[string]int{}
	for _, v := range victims {
		count[v.NodeName]++
	}
	if len(count) <= k {
		return victims
	}
	var minCPU, minMem int64 = -1, -1
	for _, p := range preemptors {
		if minCPU < 0 || p.CPU < minCPU {
			minCPU = p.CPU
		}
		if minMem < 0 || p.Memory < minMem {
			minMem = p.Memory
		}
	}
	// Room on each node once its victims are gone: allocatable minus the
	// live pods that are not victims (every victim is live and bound).
	kept := st.usage(nil)
	for _, v := range victims {
		u := kept[v.NodeName]
		u.add(v, -1)
		kept[v.NodeName] = u
	}
	smallest := &Pod{CPU: minCPU, Memory: minMem}
	// The nodes as records, sorted without map lookups in the comparison
	// (15,000 nodes hold victims at 15,000 nodes).
	type candidate struct {
		name  string
		room  bool
		count int
	}
	nodes := make([]candidate, 0, len(count))
	for name, c := range count {
		n := st.Nodes[name]
		nodes = append(nodes, candidate{name: name, room: n != nil && kept[name].holds(n, smallest), count: c})
	}
	slices.SortFunc(nodes, func(a, b candidate) int {
		if a.room != b.room {
			if a.room {
				return -1
			}
			return 1
		}
		if a.count != b.count {
			return cmp.Compare(a.count, b.count)
		}
		return strings.Compare(a.name, b.name)
	})
	keep := map[string]bool{}
	for _, n := range nodes[:k] {
		keep[n.name] = true
	}
	var out []*Pod
	for _, v := range victims {
		if keep[v.NodeName] {
			out = append(out, v)
		}
	}
	return out
}

// nodeLocalPlan reports whether every hard policy that a plan for q
// meets is decided on the preemptor's own node: no PodGroup (a topology
// domain's members may use its nodes without victims), no pod affinity,
// topology spread or service of a preemptor, and no live pod with a
// required anti-affinity term (evicting it in a zone may free a node of
// the zone: the paper's cross-node preemption). Then only the victims'
// nodes can take a preemptor (victimArc).
func (s *Scheduler) nodeLocalPlan(q []*Pod) bool {
	for _, p := range q {
		if p.PodGroup != "" || len(p.Affinity) > 0 || len(p.Spread) > 0 || p.Service != "" {
			return false
		}
	}
	for _, p := range s.state.Pods {
		for _, t := range p.Affinity {
			if t.Anti && t.Required && p.NodeName != "" && live(p) {
				return false
			}
		}
	}
	return true
}

// victimArc is the sample of a preemption plan for pods q whose hard
// policies are node-local (nodeLocalPlan): the nodes of its candidate
// victims, and the nodes the pods need (needed), written as a list. A
// preemptor placed on another node would need no eviction there, and the
// plan leaves out a pod that fits without one (preemptLocked), so those
// nodes add nothing but their size: at 5,000 nodes the model of a 100-pod
// plan over every node took 0.9 s, its grounding 0.7 s, for victims on
// 200 nodes.
func (s *Scheduler) victimArc(q, victims []*Pod) arc {
	a := arc{lo: 0, hi: 0} // empty: the sample is its extra nodes
	seen := map[string]bool{}
	for _, v := range victims {
		seen[v.NodeName] = true
	}
	for _, n := range s.needed(q, a) {
		seen[n] = true
	}
	if len(seen) >= len(s.state.Nodes) {
		return wholeRing
	}
	for n := range seen {
		if s.state.Nodes[n] != nil {
			a.extra = append(a.extra, n)
		}
	}
	sort.Strings(a.extra)
	return a
}
