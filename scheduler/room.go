package scheduler

import (
	"fmt"
	"sort"
)

// podShape is what nodeUse.holds reads of a pod: its requests. Pods of one
// shape have room on the same nodes.
type podShape struct {
	cpu, mem, sto int64
	scalar        string
}

func shapeOf(p *Pod) podShape {
	k := podShape{cpu: p.CPU, mem: p.Memory, sto: p.Storage}
	if len(p.Resources) > 0 {
		k.scalar = fmt.Sprint(p.Resources) // fmt sorts map keys
	}
	return k
}

// roomIndex answers FitsSomewhere for many pods of one state whose nodes'
// use changes little between questions: a preemption plan's fits-alone
// pass takes each preemptor off its node, asks, and puts it back. Trying
// every node for each pod read 1.5 million nodes a plan of 100 preemptors
// at 15,000 nodes (130 ms), all full. The nodes with room for a shape are
// listed the first time it is asked about; a node whose use has gone down
// since (lowered) is tried as well. A node whose use has not gone down
// has no more room than when the list was made (holds only loses room as
// use grows), so the lists and lowered hold every node with room.
type roomIndex struct {
	st      *State
	used    map[string]nodeUse
	byShape map[podShape][]string
	lowered map[string]bool
}

// newRoomIndex indexes st with used, the live bound pods' use per node
// (the index owns it from then on: change it with move).
func newRoomIndex(st *State, used map[string]nodeUse) *roomIndex {
	return &roomIndex{st: st, used: used, byShape: map[podShape][]string{}, lowered: map[string]bool{}}
}

// move adds p's requests to node's use (sign 1) or takes them away (-1).
func (r *roomIndex) move(p *Pod, node string, sign int64) {
	u := r.used[node]
	u.add(p, sign)
	r.used[node] = u
	if sign < 0 {
		r.lowered[node] = true
	}
}

// withRoom lists the nodes that had room for p's requests when its shape
// was first asked about (the nodes lowered since may have some too).
func (r *roomIndex) withRoom(p *Pod) []string {
	k := shapeOf(p)
	nodes, ok := r.byShape[k]
	if !ok {
		nodes = []string{}
		for name, n := range r.st.Nodes {
			if r.used[name].holds(n, p) {
				nodes = append(nodes, name)
			}
		}
		r.byShape[k] = nodes
	}
	return nodes
}

// fitsSomewhere is FitsSomewhere for p, whose requests are in no node's
// use of the index: its room is checked on the nodes that may have some,
// then the node's own policies (nodeOK) and InterPodAffinity's and
// PodTopologySpread's Filters (interPodFilters), and Check on the nodes that
// pass them. st is left as it was.
func (r *roomIndex) fitsSomewhere(p *Pod) bool {
	nodes := r.withRoom(p)
	q := *p
	defer r.st.holding(&q)()
	filters := r.interPodFilters(&q)
	try := func(name string) bool {
		n := r.st.Nodes[name]
		if n == nil || !r.used[name].holds(n, &q) {
			return false
		}
		q.NodeName = name
		// The node's own policies and the inter-pod Filters first: Check
		// applies both, and both cost a fraction of it.
		return r.st.nodeOK(&q, n, false) == "" && filters(n) && r.st.Check([]*Pod{&q}) == nil
	}
	for _, name := range nodes {
		if !r.lowered[name] && try(name) {
			return true
		}
	}
	for name := range r.lowered {
		if try(name) {
			return true
		}
	}
	return false
}

// interPodFilters returns InterPodAffinity's and PodTopologySpread's
// Filters for q alone on a node, against the live bound pods as Check
// reads them (filterSet, built once): Check runs the same Filters for a
// pod placed alone (checkBindingOrder), so a node they reject fails Check
// too, and is not tried. Check collects the bound pods once per node it
// is asked about: trying the 500 nodes of a cluster for a web pod whose
// cache pod was not bound yet took 300 ms (700 bound pods), the time
// weave-scheduler's loop spent on each such pod after its batch.
func (r *roomIndex) interPodFilters(q *Pod) func(*Node) bool {
	if !interPod(q) {
		return func(*Node) bool { return true }
	}
	fs := newFilterSet(r.st, []*Pod{q})
	fp := fs.parse(q)
	var bound []*Pod
	for _, o := range r.st.Pods {
		if o.Name != q.Name && o.NodeName != "" && live(o) && r.st.Nodes[o.NodeName] != nil && fs.relevant(o) {
			bound = append(bound, o)
		}
	}
	sort.Slice(bound, func(i, j int) bool { return bound[i].Name < bound[j].Name })
	for _, o := range bound {
		fs.add(o)
	}
	return func(n *Node) bool {
		reason, _ := fs.interPodAffinity(fp, n)
		return reason == "" && fs.podTopologySpread(fp, n) == ""
	}
}

// interPod reports whether p has required inter-pod terms or hard spread
// constraints: Filters that read other pods.
func interPod(p *Pod) bool {
	for _, t := range p.Affinity {
		if t.Required {
			return true
		}
	}
	for _, c := range p.Spread {
		if c.Hard {
			return true
		}
	}
	return false
}

// fitNowhere returns the pods of ps outside PodGroups that fit no node
// (FitsSomewhere) with the batch's pods on their placed nodes (s.mu held;
// nil when a policy is
// disabled, which the Go check would not relax). place does not solve
// them again over every node: live, an nginx pod arriving before its redis
// pod held the loop for the solve of its batch over its sample and then
// over the 500 nodes (47 ms), to the same answer.
func (s *Scheduler) fitNowhere(q, ps []*Pod, placed map[string]string) map[string]bool {
	if len(s.off) > 0 || len(ps) == 0 {
		return nil
	}
	ov := newPodOverlay(s.state)
	defer ov.restore()
	for _, p := range q {
		if n := placed[p.Name]; n != "" && s.state.Pods[p.Name] != nil {
			c := *s.state.Pods[p.Name]
			c.NodeName = n
			ov.set(&c)
		}
	}
	fits := s.state.Fitter()
	out := map[string]bool{}
	for _, p := range ps {
		// A PodGroup's member is placed with its group, not alone.
		if sp := s.state.Pods[p.Name]; sp != nil && sp.NodeName == "" && sp.PodGroup == "" && !fits(sp) {
			out[p.Name] = true
		}
	}
	return out
}
