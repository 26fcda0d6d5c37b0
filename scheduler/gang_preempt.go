package scheduler

import (
	"fmt"
	"sort"
	"strings"
)

// Workload preemption (issue 23): a PodGroup whose members fit nowhere is
// planned as one by the preemption model. G1 and G2 hold in a plan as in a
// batch (the members placed, with those bound, number 0 or at least
// MinCount, in one topology domain), so either enough members get nodes,
// with the evictions they need, or nothing is evicted for the group
// (every eviction a plan's placements do not need is dropped). Members of
// lower-priority groups are victims too: one by one (disruptionMode
// single), or all of a group's bound pods together (disruptionMode all,
// G3, and the minimal-evictions pass keeps such a group back whole or not
// at all). A group with preemptionPolicy Never, its own or a member's,
// evicts nothing.

// boolInt is a SQL integer flag.
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// ReasonGroupNeverPreempts is the Reason PreemptPods gives the pods of a
// PodGroup that may not preempt: the PodGroup's preemptionPolicy is Never,
// or one of its pods' is (kube-scheduler v1.37's resolvePreemptionPolicy).
const ReasonGroupNeverPreempts = "pod of a PodGroup with preemptionPolicy Never: no pod is evicted for it"

// groupNeverPreempts reports whether no pod may be evicted for the pods of
// PodGroup name: its preemptionPolicy is Never, or a live pod of it has
// preemptionPolicy Never.
func (st *State) groupNeverPreempts(name string) bool {
	if g := st.PodGroups[name]; g != nil && g.NeverPreempts {
		return true
	}
	for _, p := range st.Pods {
		if p.PodGroup == name && live(p) && p.NeverPreempts {
			return true
		}
	}
	return false
}

// mayPreempt reports whether pods may be evicted for p: neither p's
// preemptionPolicy nor its group's is Never.
func (st *State) mayPreempt(p *Pod) bool {
	return !p.NeverPreempts && (p.PodGroup == "" || !st.groupNeverPreempts(p.PodGroup))
}

// groupPolicies is the state the PodGroup rules of a plan read: the
// scheduler's, or, with G3 disabled, a copy in which no group has
// disruptionMode all.
func (s *Scheduler) groupPolicies() *State {
	if !s.off["G3"] {
		return s.state
	}
	return relax(s.state.Clone(), map[string]bool{"G3": true})
}

// disruptAll is the PodGroup with disruptionMode all that p belongs to,
// or nil.
func (st *State) disruptAll(p *Pod) *PodGroup {
	if p.PodGroup == "" {
		return nil
	}
	if g := st.PodGroups[p.PodGroup]; g != nil && g.DisruptAll {
		return g
	}
	return nil
}

// victimsBelow are the pods a plan for preemptors q may evict: live bound
// pods of priority below low that Config.Evictable allows, on the
// candidate nodes (victimsOnCandidateNodes), with the rest of each
// disruptionMode-all group one of them belongs to. spared names the pods
// Evictable refused, for a Reason ("" if none: "; not evicted: ...").
func (s *Scheduler) victimsBelow(low int64, q []*Pod) (victims []*Pod, spared string) {
	refused := map[string]string{}
	ok := func(p *Pod) bool {
		if p.NodeName == "" || !live(p) || p.Priority >= low {
			return false
		}
		if s.cfg.Evictable != nil {
			if yes, why := s.cfg.Evictable(p); !yes {
				refused[p.Name] = why
				return false
			}
		}
		return true
	}
	for _, p := range s.state.Pods {
		if ok(p) {
			victims = append(victims, p)
		}
	}
	victims = s.groupPolicies().withWholeGroups(victimsOnCandidateNodes(s.state, victims, q), ok)
	if len(refused) > 0 {
		const most = 3
		var parts []string
		for _, name := range sortedKeys(refused) {
			if len(parts) == most {
				parts = append(parts, fmt.Sprintf("and %d more", len(refused)-most))
				break
			}
			parts = append(parts, name+" ("+refused[name]+")")
		}
		spared = "; not evicted: " + strings.Join(parts, ", ")
	}
	return victims, spared
}

// withWholeGroups adds to victims the other pods that ok allows of every
// disruptionMode-all group that has a victim: the candidate-node sample
// (victimsOnCandidateNodes) may have kept only part of such a group, and
// G3 then could evict none of it. (A member ok refuses stays: G3 then
// evicts none of the group.)
func (st *State) withWholeGroups(victims []*Pod, ok func(*Pod) bool) []*Pod {
	in := map[string]bool{}
	groups := map[string]bool{}
	for _, v := range victims {
		in[v.Name] = true
		if g := st.disruptAll(v); g != nil {
			groups[g.Name] = true
		}
	}
	if len(groups) == 0 {
		return victims
	}
	for _, p := range st.Pods {
		if groups[p.PodGroup] && !in[p.Name] && ok(p) {
			victims = append(victims, p)
		}
	}
	return victims
}

// evictionUnits groups the pods a plan evicts into the units the
// minimal-evictions pass keeps back or evicts: the members of a
// disruptionMode-all group together, every other pod alone. Units come
// highest priority first (stable: evicted's order within a priority).
func (st *State) evictionUnits(evicted []*Pod) [][]*Pod {
	var units [][]*Pod
	at := map[string]int{}
	for _, v := range evicted {
		if g := st.disruptAll(v); g != nil {
			if i, ok := at[g.Name]; ok {
				units[i] = append(units[i], v)
				continue
			}
			at[g.Name] = len(units)
		}
		units = append(units, []*Pod{v})
	}
	sort.SliceStable(units, func(i, j int) bool { return units[i][0].Priority > units[j][0].Priority })
	return units
}

// checkDisruption restates G3 over a plan's evictions: a disruptionMode-all
// group with an evicted pod has every live bound pod evicted.
func (st *State) checkDisruption(ev []Eviction) error {
	gone := map[string]bool{}
	groups := map[string]bool{}
	for _, e := range ev {
		gone[e.Pod] = true
		if p := st.Pods[e.Pod]; p != nil && st.disruptAll(p) != nil {
			groups[p.PodGroup] = true
		}
	}
	for _, name := range sortedKeys(groups) {
		var kept []string
		for _, p := range st.Pods {
			if p.PodGroup == name && p.NodeName != "" && live(p) && !gone[p.Name] {
				kept = append(kept, p.Name)
			}
		}
		if len(kept) > 0 {
			sort.Strings(kept)
			return fmt.Errorf("%w: G3 pod group %s (disruptionMode all) evicted in part: %v kept", ErrCheck, name, kept)
		}
	}
	return nil
}
