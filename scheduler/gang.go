package scheduler

import (
	"context"
	"fmt"
	"reflect"
	"sort"
)

// PodGroups (PodGroup, Pod.PodGroup): the batching rules that keep a
// group's pods together, and the independent check of G1 and G2.

// UpsertPodGroup adds or replaces a PodGroup.
func (s *Scheduler) UpsertPodGroup(ctx context.Context, g PodGroup) error {
	s.interrupt() // speculate.go
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.exec(ctx, writePodGroup(g)); err != nil {
		return err
	}
	s.state.PodGroups[g.Name] = &g
	select { // its pods may now be ready to schedule
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

// DeletePodGroup removes a PodGroup: its pending pods wait until it is
// created again, as kube-scheduler's PreEnqueue keeps them.
func (s *Scheduler) DeletePodGroup(ctx context.Context, name string) error {
	s.interrupt() // speculate.go
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.exec(ctx, []stmt{{"delete from podgroup where name = $1", []any{name}}}); err != nil {
		return err
	}
	delete(s.state.PodGroups, name)
	return nil
}

// minCount is a group's gang size: MinCount, at least 1.
func (g *PodGroup) minCount() int64 { return max(g.MinCount, 1) }

// groupReady filters a queue (pending pods in queue order): a pod of a
// PodGroup waits while the PodGroup is unknown or fewer than its MinCount
// pods exist (live, bound or not: GangScheduling's PreEnqueue, which
// counts AllPodsCount).
func (st *State) groupReady(q []*Pod) []*Pod {
	var need map[string]bool
	for _, p := range q {
		if p.PodGroup != "" {
			if need == nil {
				need = map[string]bool{}
			}
			need[p.PodGroup] = true
		}
	}
	if need == nil {
		return q
	}
	count := map[string]int64{}
	for _, p := range st.Pods {
		if p.PodGroup != "" && need[p.PodGroup] && live(p) {
			count[p.PodGroup]++
		}
	}
	out := q[:0:0]
	for _, p := range q {
		if p.PodGroup != "" {
			g := st.PodGroups[p.PodGroup]
			if g == nil || count[p.PodGroup] < g.minCount() {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// takeBatch takes up to size pods of a queue without splitting a group:
// the queue's units (a pod, or every pending pod of its PodGroup, taken at
// its first member's place) in order, until the next does not fit. A first
// unit larger than size is taken whole. The pods of a group are adjacent in
// the result (placeSplit halves a batch between units).
func takeBatch(q []*Pod, size int) []*Pod {
	members := map[string][]*Pod{}
	for _, p := range q {
		if p.PodGroup != "" {
			members[p.PodGroup] = append(members[p.PodGroup], p)
		}
	}
	if len(members) == 0 {
		if len(q) > size {
			q = q[:size]
		}
		return q
	}
	var out []*Pod
	taken := map[string]bool{}
	for _, p := range q {
		unit := []*Pod{p}
		if p.PodGroup != "" {
			if taken[p.PodGroup] {
				continue
			}
			taken[p.PodGroup] = true
			unit = members[p.PodGroup]
		}
		if len(out) > 0 && len(out)+len(unit) > size {
			break
		}
		out = append(out, unit...)
	}
	return out
}

// splitPoint is where placeSplit halves a batch: the unit boundary
// nearest the middle (the pods of a group are adjacent, takeBatch); 0 when
// the batch is one group.
func splitPoint(q []*Pod) int {
	best := 0
	for i := 1; i < len(q); i++ {
		if q[i].PodGroup != "" && q[i].PodGroup == q[i-1].PodGroup {
			continue
		}
		if best == 0 || abs(i-len(q)/2) < abs(best-len(q)/2) {
			best = i
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// checkGangs checks G1 and G2 for the batch's groups, the state holding
// the batch's pods placed as their NodeName says: every group with a
// placed pod of the batch has at least its MinCount members on nodes,
// bound ones included; a group with a topology key has every such member
// on a node carrying the label (bound members without it are not
// counted, as the model does not), all with one value. Each fault names
// the group's placed pods of the batch. A PodGroup the state does not
// know constrains nothing (its pods are not queued).
func (s *State) checkGangs(batch []*Pod) []CheckFault {
	placedOf := map[string][]*Pod{}
	for _, b := range batch {
		if b.PodGroup == "" {
			continue
		}
		if p := s.Pods[b.Name]; p != nil && p.NodeName != "" && live(p) {
			placedOf[b.PodGroup] = append(placedOf[b.PodGroup], p)
		}
	}
	if len(placedOf) == 0 {
		return nil
	}
	on := map[string]int64{}
	domains := map[string]map[string]bool{}
	var faults []CheckFault
	for _, p := range s.Pods {
		if p.PodGroup == "" || p.NodeName == "" || !live(p) || placedOf[p.PodGroup] == nil {
			continue
		}
		on[p.PodGroup]++
		g := s.PodGroups[p.PodGroup]
		if g == nil || g.TopologyKey == "" {
			continue
		}
		if v, ok := s.label(p.NodeName, g.TopologyKey); ok {
			if domains[p.PodGroup] == nil {
				domains[p.PodGroup] = map[string]bool{}
			}
			domains[p.PodGroup][v] = true
		}
	}
	for _, name := range sortedKeys(placedOf) {
		ps := placedOf[name]
		sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
		g := s.PodGroups[name]
		if g == nil {
			continue
		}
		if on[name] < g.minCount() {
			faults = append(faults, CheckFault{Problem: fmt.Sprintf("G1 pod group %s has %d pods on nodes, minCount %d", name, on[name], g.minCount()), Pods: podNames(ps)})
		}
		if g.TopologyKey == "" {
			continue
		}
		for _, p := range ps {
			if _, ok := s.label(p.NodeName, g.TopologyKey); !ok {
				faults = append(faults, CheckFault{Problem: fmt.Sprintf("G2 pod group %s: %s on %s, which has no label %s", name, p.Name, p.NodeName, g.TopologyKey), Pods: []string{p.Name}})
			}
		}
		if d := domains[name]; len(d) > 1 {
			faults = append(faults, CheckFault{Problem: fmt.Sprintf("G2 pod group %s spans %d domains of %s: %v", name, len(d), g.TopologyKey, sortedKeys(d)), Pods: podNames(ps)})
		}
	}
	return faults
}

// hasGroups reports whether some pod of a batch belongs to a PodGroup.
func hasGroups(q []*Pod) bool {
	for _, p := range q {
		if p.PodGroup != "" {
			return true
		}
	}
	return false
}

// gangHint is the greedy placement of a batch that the solver starts from:
// kube-scheduler v1.37's algorithm for PodGroups, one unit at a time (a
// pod, or the adjacent pods of a group, takeBatch) in batch order, pod by
// pod with no backtracking. A group with a topology key tries each domain
// (only that of its bound members, if any) and keeps the placement that
// leaves the least of its requested resources free in the domain (best
// fit, as TopologyPlacement keeps the MostAllocated one); a pod goes to
// the node it leaves the least room on. A group that cannot reach its
// MinCount (bound members counted) is hinted unplaced. Only the sample's
// nodes are tried (the batch's arc, SchedulePending). Only the per-node
// policies (nodeOK) and the resources are honoured: the hint is a first
// guess, which the solver repairs where another policy forbids it.
func (st *State) gangHint(q []*Pod, sample arc) map[string]string {
	used := st.usage(nil)
	var names []string
	for name := range st.Nodes {
		if sample.whole() || sample.holds(sampleKey(name)) {
			names = append(names, name)
		}
	}
	for _, name := range sample.extra {
		if st.Nodes[name] != nil && !sample.holds(sampleKey(name)) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	hint := map[string]string{}
	for i := 0; i < len(q); {
		j := i + 1
		for j < len(q) && q[i].PodGroup != "" && q[j].PodGroup == q[i].PodGroup {
			j++
		}
		unit := q[i:j]
		i = j
		need, key, bound := int64(1), "", ""
		if g := st.PodGroups[unit[0].PodGroup]; g != nil && unit[0].PodGroup != "" {
			need, key = g.minCount(), g.TopologyKey
			for _, p := range st.Pods {
				if p.PodGroup == g.Name && p.NodeName != "" && live(p) {
					need--
					if v, ok := st.label(p.NodeName, key); ok && key != "" {
						bound = v
					}
				}
			}
		}
		// The candidate domains and their nodes (one domain of every node
		// without a key).
		domains, members := []string{""}, map[string][]string{"": names}
		if key != "" {
			domains, members = nil, map[string][]string{}
			for _, n := range names {
				if v, ok := st.Nodes[n].Labels[key]; ok && (bound == "" || v == bound) {
					if members[v] == nil {
						domains = append(domains, v)
					}
					members[v] = append(members[v], n)
				}
			}
			sort.Strings(domains)
		}
		var best map[string]string
		var bestUse map[string]nodeUse
		bestLeft := int64(-1)
		for _, d := range domains {
			place, use := st.greedyUnit(unit, members[d], used)
			if int64(len(place)) < need || len(place) == 0 {
				continue
			}
			var left int64
			if key != "" {
				for _, n := range members[d] {
					u, ok := use[n]
					if !ok {
						u = used[n]
					}
					left += st.Nodes[n].room(u, unit[0])
				}
			}
			if bestLeft < 0 || left < bestLeft {
				best, bestUse, bestLeft = place, use, left
			}
			if key == "" {
				break
			}
		}
		for n, u := range bestUse {
			used[n] = u
		}
		for name, n := range best {
			hint[name] = n
		}
	}
	return hint
}

// greedyUnit places a unit's pods one by one on the nodes names, each on
// the node where it leaves the least room (Node.room), on top of used; it
// returns the placement and the changed nodes' use. The nodes and their
// use are looked up once, not once per pod and node; a pod's fit and room
// are one pass over its requests (fitsRoom); the per-node policies are
// checked only where the pod fits, and their verdicts are kept for the
// next pod while it has the same node predicates (a gang's workers): per
// pod and node this was three map reads, two passes over the requests and
// nodeOK, 4 ms of a 100-pod batch at 500 nodes.
func (st *State) greedyUnit(unit []*Pod, names []string, used map[string]nodeUse) (map[string]string, map[string]nodeUse) {
	nodes := make([]*Node, len(names))
	uses := make([]nodeUse, len(names))
	for i, n := range names {
		nodes[i], uses[i] = st.Nodes[n], used[n]
	}
	changed := make([]bool, len(names))
	verdicts := make([]int8, len(names)) // nodeOK for the pods like prev: 0 unknown, 1 ok, 2 not
	const verdictOK, verdictNot = 1, 2
	var prev *Pod
	place := map[string]string{}
	var req []scalarRequest
	for _, p := range unit {
		if prev == nil || !sameNodePredicates(prev, p) {
			clear(verdicts)
		}
		prev = p
		req = scalarRequests(p, req[:0])
		best, bestRoom := -1, int64(0)
		for i, node := range nodes {
			r, fits := fitsRoom(node, &uses[i], p, req)
			if !fits || best >= 0 && r >= bestRoom {
				continue
			}
			if verdicts[i] == 0 {
				verdicts[i] = verdictNot
				if st.nodeOK(p, node, false) == "" {
					verdicts[i] = verdictOK
				}
			}
			if verdicts[i] == verdictOK {
				best, bestRoom = i, r
			}
		}
		if best < 0 {
			continue
		}
		uses[best].add(p, 1)
		changed[best] = true
		place[p.Name] = names[best]
	}
	use := map[string]nodeUse{}
	for i, c := range changed {
		if c {
			use[names[i]] = uses[i]
		}
	}
	return place, use
}

// scalarRequest is one scalar resource a pod requests (above 0).
type scalarRequest struct {
	name string
	v    int64
}

// scalarRequests appends p's scalar requests above 0 to buf.
func scalarRequests(p *Pod, buf []scalarRequest) []scalarRequest {
	for r, v := range p.Resources {
		if v > 0 {
			buf = append(buf, scalarRequest{r, v})
		}
	}
	return buf
}

// fitsRoom is holds, and room of u with p added, in one pass over p's
// scalar requests req (scalarRequests) and without copying u's map
// (nodeUse.add copies it: a copy per pod and node was half of gangHint's
// time on a 100-pod batch at 500 nodes): whether p fits on n beside u, and
// the room it leaves there.
func fitsRoom(n *Node, u *nodeUse, p *Pod, req []scalarRequest) (int64, bool) {
	if u.pods+1 > n.Pods || p.CPU > 0 && u.cpu+p.CPU > n.CPU || p.Memory > 0 && u.mem+p.Memory > n.Memory ||
		p.Storage > 0 && u.sto+p.Storage > n.Storage {
		return 0, false
	}
	if len(p.Resources) == 0 {
		return n.CPU - u.cpu - p.CPU, true
	}
	var room int64
	for _, q := range req {
		a, had := n.Resources[q.name], u.scalar[q.name]
		if had+q.v > a {
			return 0, false
		}
		room += a - had - q.v
	}
	return room, true
}

// sameNodePredicates reports whether nodeOK gives a and b the same verdict
// on every node: they agree on every field it reads.
func sameNodePredicates(a, b *Pod) bool {
	return a.RequestedNode == b.RequestedNode && (a.CPU == 0 && a.Memory == 0) == (b.CPU == 0 && b.Memory == 0) &&
		reflect.DeepEqual(a.Volumes, b.Volumes) && reflect.DeepEqual(a.Tolerations, b.Tolerations) &&
		reflect.DeepEqual(a.NodeSelector, b.NodeSelector) && reflect.DeepEqual(a.Features, b.Features) &&
		reflect.DeepEqual(a.RequiredNodeAffinity, b.RequiredNodeAffinity) &&
		reflect.DeepEqual(a.VolumeNodeSelectors, b.VolumeNodeSelectors)
}

// room is what use leaves of a node's scalar resources that p requests,
// summed, or without any, its CPU in millicores: the smaller, the fuller.
func (n *Node) room(u nodeUse, p *Pod) int64 {
	var r int64
	for res, v := range p.Resources {
		if v > 0 {
			r += n.Resources[res] - u.scalar[res]
		}
	}
	if len(p.Resources) == 0 {
		r = n.CPU - u.cpu
	}
	return r
}
