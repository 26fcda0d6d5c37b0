package app

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weavesql/weave/scheduler"
)

// Workload preemption. A PodGroup that a batch left whole without a node (podGroupOutcome) is given to the
// preemption model as one (Scheduler.PreemptPods with its pending pods): the plan places at least minCount of
// its pods in one topology domain, with the evictions that needs, or nothing. A plan that places the group is
// carried out as one:
//   - every member is nominated to its node and waits for every victim of the plan (not only those on its
//     node), so that no member is bound while another's room is not yet free;
//   - before anything is evicted, each victim's eviction is asked as a dry run (DeleteOptions.DryRun All):
//     the API server checks the PodDisruptionBudgets covering it and evicts nothing. A refusal ends the
//     plan with no pod evicted, the group's pods reported and backed off;
//   - then the victims are evicted (evictWorkers at a time): first those outside any disruptionMode-all group,
//     then, once all of those are gone, the members of such groups; the first refusal stops the evictions not
//     yet started, and the group's pods are reported and backed off (none is bound). A refusal among the first
//     thus leaves every disruptionMode-all group whole.
//
// The plan counts each PodDisruptionBudget's allowed disruptions (P3), so a refusal comes only from a budget
// that changed between the plan and its eviction (another client evicting, a pod going unready).

// preemptGroup plans workload preemption for the pending pods of PodGroup group that the batch left without
// a node, and carries the plan out when it places the group. It returns false and why when it places
// nothing (no pod is then evicted for the group).
func (s *Server) preemptGroup(ctx context.Context, group string, us []scheduler.Unschedulable) (bool, string) {
	byKey := map[string]*v1.Pod{}
	var keys []string
	for _, u := range us {
		ns, name, _ := strings.Cut(u.Pod, "/")
		p, err := s.podLister.Pods(ns).Get(name)
		if err != nil || p.Spec.NodeName != "" || p.DeletionTimestamp != nil {
			continue
		}
		byKey[u.Pod] = p
		keys = append(keys, u.Pod)
	}
	if len(keys) == 0 {
		return false, ""
	}
	s.events.drain(ctx, maxDrain)
	bs, ev, left, err := s.brain.PreemptPods(ctx, keys)
	s.log.Info("pod group preemption plan", "podGroup", group, "pods", len(keys), "placed", len(bs), "victims", len(ev), "error", err)
	if err != nil {
		return false, "no preemption plan: " + err.Error()
	}
	if len(bs) == 0 {
		why := "preemption: no eviction of pods of lower priority makes room for the group"
		if len(left) > 0 {
			why = "preemption: " + left[0].Reason
		}
		return false, why
	}
	for _, u := range left { // members beyond the plan's (it placed minCount or more): they wait
		if p := byKey[u.Pod]; p != nil {
			s.park(p)
		}
	}
	s.carryOutGang(ctx, group, bs, ev, byKey)
	return true, ""
}

// carryOutGang nominates a group's preemptors (assumed on their nodes by PreemptPods), checks every
// eviction by a dry run, evicts the victims, and lets the nominations bind once every victim is gone.
func (s *Server) carryOutGang(ctx context.Context, group string, bs []scheduler.Binding, ev []scheduler.Eviction, byKey map[string]*v1.Pod) {
	low := priority(byKey[bs[0].Pod])
	for _, b := range bs {
		low = min(low, priority(byKey[b.Pod]))
	}
	failAll := func(why string) {
		for _, b := range bs {
			s.unschedulable(ctx, byKey[b.Pod], func() string { return why })
		}
	}
	var victims []*v1.Pod
	all := map[string]bool{}
	for _, e := range ev {
		ns, name, _ := strings.Cut(e.Pod, "/")
		vp, err := s.podLister.Pods(ns).Get(name)
		if err != nil {
			continue // already gone
		}
		if priority(vp) >= low { // belt and braces, as carryOut
			s.log.Error("pod group preemption plan with a victim of equal or higher priority; plan dropped", "victim", e.Pod, "podGroup", group)
			failAll("internal error: a victim of equal or higher priority")
			return
		}
		victims = append(victims, vp)
		all[podKey(vp)] = true
	}
	s.mu.Lock()
	for _, b := range bs {
		nom := &nomination{pod: byKey[b.Pod], node: b.Node, victims: map[string]bool{}}
		for k := range all {
			nom.victims[k] = true
		}
		s.nominated[b.Pod] = nom
	}
	s.mu.Unlock()
	by := byKey[bs[0].Pod]
	go func() {
		for _, vp := range victims {
			if vp.DeletionTimestamp != nil {
				continue
			}
			if err := s.evictRequest(ctx, vp, true); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				why := fmt.Sprintf("pod group %s: evicting %s would fail (%v); no pod evicted, retrying later", group, podKey(vp), err)
				if apierrors.IsTooManyRequests(err) {
					why = fmt.Sprintf("pod group %s: evicting %s is refused, a PodDisruptionBudget forbids it (%v); no pod evicted, retrying later", group, podKey(vp), err)
				}
				s.log.Info("pod group preemption stopped before evicting", "podGroup", group, "victim", podKey(vp), "error", err)
				failAll(why)
				return
			}
		}
		var names []string
		for _, part := range s.wholeGroupsLast(victims) {
			n, why := s.evictTogether(ctx, part, by)
			names = append(names, n...)
			if why != "" {
				failAll(fmt.Sprintf("pod group %s: %s", group, why))
				return
			}
		}
		sort.Strings(names)
		go s.setPodGroupCondition(ctx, group, metav1.Condition{Type: schedulingv1beta1.PodGroupInitiallyScheduled,
			Status: metav1.ConditionTrue, Reason: "Scheduled",
			Message: fmt.Sprintf("%d pods placed together by weave-scheduler, preempting %d pods of lower priority", len(bs), len(names))})
		s.mu.Lock()
		s.groupAdmitted[group] = true
		s.mu.Unlock()
		var wg sync.WaitGroup
		for _, b := range bs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.nominationReady(ctx, byKey[b.Pod], b.Node, names)
			}()
		}
		wg.Wait()
	}()
}

// wholeGroupsLast splits a plan's victims in the order they are evicted: those outside any PodGroup with
// disruptionMode all, then the members of such groups (either part may be empty). A refusal while evicting the
// first part then stops the plan before any such group is touched: a group that goes whole or not at all is
// not left evicted in part by another victim's refusal.
func (s *Server) wholeGroupsLast(victims []*v1.Pod) [][]*v1.Pod {
	var first, last []*v1.Pod
	s.mu.Lock()
	for _, vp := range victims {
		if g, ok := s.groups[podGroupOf(vp)]; ok && g.group.DisruptAll {
			last = append(last, vp)
		} else {
			first = append(first, vp)
		}
	}
	s.mu.Unlock()
	return [][]*v1.Pod{first, last}
}

// evictTogether evicts victims, evictWorkers at a time, for preemptor by; after the first refusal or error
// no further eviction starts. It returns the keys of those evicted and why it stopped ("" if it did not).
func (s *Server) evictTogether(ctx context.Context, victims []*v1.Pod, by *v1.Pod) ([]string, string) {
	var mu sync.Mutex
	var names []string
	why := ""
	var wg sync.WaitGroup
	for _, vp := range victims {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			stop := why != ""
			mu.Unlock()
			if stop {
				return
			}
			n, w := s.evictAll(ctx, []*v1.Pod{vp}, by)
			mu.Lock()
			names = append(names, n...)
			if w != "" && why == "" {
				why = w
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Strings(names)
	return names, why
}
