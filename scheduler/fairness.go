package scheduler

import (
	"sort"
	"time"
)

// Fairness for PodGroups (Config.GangReserveAfter). The placement model
// maximises the pods placed, priority first. Alone, that lets a stream of
// small units take each node a finished pod frees, one at a time, so a
// large gang, which needs many nodes free at once, may wait forever. The
// rule: a PodGroup whose pods have been ready to schedule (groupReady:
// its PodGroup known, MinCount pods existing) for longer than
// GangReserveAfter, and none of which is bound, reserves the cluster:
// while it waits, no pod or group of its priority or lower that arrived
// after it is tried, so the room that frees up is kept for it, as
// kube-scheduler's nomination keeps a node for a preemptor. One group
// reserves at a time: of the highest priority, the one that became ready
// first. A group whose pods do not fit the cluster even empty (by the
// greedy placement of gangHint, in one domain for a topology group)
// reserves nothing: it would hold everything back forever.
//
// The record of a waiting group outlives its pods' absence from the queue
// (weave-scheduler takes a backed-off pod out of the state), so the
// reservation holds between its retries; it ends once a member is bound
// or the PodGroup is deleted.

// groupWait is what the fairness rule records of a PodGroup ready to
// schedule and not yet admitted.
type groupWait struct {
	since    time.Time // first seen ready
	seq      int64     // the arrival sequence then: pods arriving later have a larger one
	priority int64
	fits     int // whether the group fits the cluster empty: 0 unknown, 1 yes, -1 no
}

// fairQueue applies the fairness rule to a ready queue (queue order);
// s.mu is held.
func (s *Scheduler) fairQueue(q []*Pod) []*Pod {
	if s.cfg.GangReserveAfter <= 0 {
		return q
	}
	now := time.Now()
	members := map[string][]*Pod{}
	for _, p := range q {
		if p.PodGroup == "" {
			continue
		}
		members[p.PodGroup] = append(members[p.PodGroup], p)
		if s.waiting == nil {
			s.waiting = map[string]*groupWait{}
		}
		if s.waiting[p.PodGroup] == nil {
			s.waiting[p.PodGroup] = &groupWait{since: now, seq: s.seq, priority: p.Priority}
		}
	}
	if len(s.waiting) == 0 {
		return q
	}
	for name := range s.waiting {
		if s.state.PodGroups[name] == nil {
			delete(s.waiting, name)
		}
	}
	for _, p := range s.state.Pods {
		if p.PodGroup != "" && p.NodeName != "" && live(p) {
			delete(s.waiting, p.PodGroup) // admitted
		}
	}
	names := make([]string, 0, len(s.waiting))
	for name := range s.waiting {
		names = append(names, name)
	}
	sort.Strings(names)
	var reserving string
	var rw *groupWait
	for _, name := range names {
		w := s.waiting[name]
		if now.Sub(w.since) < s.cfg.GangReserveAfter {
			continue
		}
		if w.fits == 0 && len(members[name]) > 0 {
			w.fits = -1
			if s.state.fitsEmpty(s.state.PodGroups[name], members[name]) {
				w.fits = 1
			}
		}
		if w.fits != 1 {
			continue
		}
		if rw == nil || w.priority > rw.priority || w.priority == rw.priority && w.seq < rw.seq {
			reserving, rw = name, w
		}
	}
	if rw == nil {
		return q
	}
	out := q[:0:0]
	for _, p := range q {
		if p.PodGroup != reserving && p.Priority <= rw.priority && p.created > rw.seq {
			continue // held back for the reserving group
		}
		out = append(out, p)
	}
	return out
}

// fitsEmpty reports whether MinCount of a group's pending pods fit the
// nodes with no pod bound, placed greedily (greedyUnit), within one value
// of its topology key if it has one.
func (st *State) fitsEmpty(g *PodGroup, pods []*Pod) bool {
	domains := map[string][]string{}
	for name, n := range st.Nodes {
		if g.TopologyKey == "" {
			domains[""] = append(domains[""], name)
		} else if v, ok := n.Labels[g.TopologyKey]; ok {
			domains[v] = append(domains[v], name)
		}
	}
	for _, nodes := range domains {
		sort.Strings(nodes)
		if place, _ := st.greedyUnit(pods, nodes, map[string]nodeUse{}); int64(len(place)) >= g.minCount() {
			return true
		}
	}
	return false
}
