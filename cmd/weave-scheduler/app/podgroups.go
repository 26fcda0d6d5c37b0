package app

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"

	"github.com/weavesql/weave/scheduler"
)

// PodGroups (scheduling.k8s.io/v1beta1, served under the feature gate GenericWorkload), read as kube-scheduler
// v1.37.2 reads them (pkg/scheduler/schedule_one_podgroup.go, framework/plugins/gangscheduling): a pod belongs
// to the PodGroup its spec.schedulingGroup.podGroupName names, in its namespace; the group's
// schedulingPolicy.gang.minCount (basic: 1) and schedulingConstraints.topology[0].key become a
// scheduler.PodGroup, whose pods the models place all or nothing in one topology domain (package scheduler,
// gang.go). A group's pods wait while the PodGroup is unknown or fewer than minCount of them exist, as
// GangScheduling's PreEnqueue keeps them.
//
// Workload preemption (preempt_gang.go): a group left whole without a node is planned as one by the preemption
// model, which evicts pods of lower priority, members of other groups among them. disruptionMode all makes a
// group's bound pods victims together or not at all (scheduler.PodGroup.DisruptAll, G3); preemptionPolicy
// Never, the PodGroup's (gate PodGroupPreemptionPolicy) or any of its pods', means nothing is evicted for the
// group (kube-scheduler reads the group's field with the gate on and its pods' with it off; weave-scheduler
// reads both, so it never evicts where either says Never). What is refused (the group's pending pods stay pending, the message naming the field):
// a PodGroup with resourceClaims (dynamic resource allocation) or a parentCompositePodGroupName
// (CompositePodGroups), and a pod whose priority differs from its PodGroup's (kube-scheduler's
// validatePodGroup rejects that group with a SchedulerError). Where the API server does not serve
// scheduling.k8s.io/v1beta1 a pod's group cannot be read, so a pod naming one is refused rather than placed
// as if it had none.

// podGroupsGroupVersion is the API group and version of the PodGroups weave-scheduler reads.
var podGroupsGroupVersion = schedulingv1beta1.SchemeGroupVersion.String()

// podGroupOf is the scheduler's name of a pod's PodGroup (namespace/podGroupName), "" for none.
func podGroupOf(p *v1.Pod) string {
	if g := p.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil && *g.PodGroupName != "" {
		return p.Namespace + "/" + *g.PodGroupName
	}
	return ""
}

// podGroupsServed asks discovery whether the API server serves PodGroups; why says why not.
func (s *Server) podGroupsServed() (ok bool, why string) {
	rs, err := s.client.Discovery().ServerResourcesForGroupVersion(podGroupsGroupVersion)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return false, fmt.Sprintf("the API server does not serve %s (feature gate GenericWorkload off)", podGroupsGroupVersion)
		}
		return false, fmt.Sprintf("discovery of %s failed at start-up: %v", podGroupsGroupVersion, err)
	}
	for _, r := range rs.APIResources {
		if r.Name == "podgroups" {
			return true, ""
		}
	}
	return false, fmt.Sprintf("the API server serves %s without podgroups", podGroupsGroupVersion)
}

// podGroupInformer starts reading PodGroups where the API server serves them; otherwise it says so once and
// returns nil (pods naming a group are then refused, podGroupFieldsLocked).
func (s *Server) podGroupInformer() (cache.SharedIndexInformer, error) {
	ok, why := s.podGroupsServed()
	if !ok {
		s.groupsOff = why
		s.log.Warn("PodGroups not read; pods with spec.schedulingGroup are refused", "reason", why)
		return nil, nil
	}
	inf := s.factory.Scheduling().V1beta1().PodGroups().Informer()
	reg, err := inf.AddEventHandler(s.events.queued(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.podGroupChanged(obj.(*schedulingv1beta1.PodGroup)) },
		UpdateFunc: func(_, obj any) { s.podGroupChanged(obj.(*schedulingv1beta1.PodGroup)) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if g, ok := obj.(*schedulingv1beta1.PodGroup); ok {
				s.podGroupDeleted(g)
			}
		},
	}))
	if err != nil {
		return nil, err
	}
	s.handlersSynced = append(s.handlersSynced, reg.HasSynced)
	return inf, nil
}

// podGroupView is what weave-scheduler reads of a PodGroup: the scheduler's view, its priority (which its
// pods must share) and the fields it refuses.
type podGroupView struct {
	group    scheduler.PodGroup
	priority int32
	refused  []unsupportedField
}

// toPodGroup converts a PodGroup.
func toPodGroup(g *schedulingv1beta1.PodGroup) podGroupView {
	out := podGroupView{group: scheduler.PodGroup{Name: g.Namespace + "/" + g.Name, MinCount: 1}}
	if gang := g.Spec.SchedulingPolicy.Gang; gang != nil {
		out.group.MinCount = int64(gang.MinCount)
	}
	if c := g.Spec.SchedulingConstraints; c != nil {
		switch len(c.Topology) {
		case 0:
		case 1:
			out.group.TopologyKey = c.Topology[0].Key
		default: // the API allows one; a second would be silently dropped
			out.refused = append(out.refused, unsupportedField{"spec.schedulingConstraints.topology",
				fmt.Sprintf("%d topology constraints; one is modelled", len(c.Topology))})
		}
	}
	if g.Spec.Priority != nil {
		out.priority = *g.Spec.Priority
	}
	if m := g.Spec.DisruptionMode; m != nil && m.All != nil {
		out.group.DisruptAll = true
	}
	if p := g.Spec.PreemptionPolicy; p != nil && *p == schedulingv1beta1.PreemptNever {
		out.group.NeverPreempts = true
	}
	if len(g.Spec.ResourceClaims) > 0 {
		out.refused = append(out.refused, unsupportedField{"spec.resourceClaims",
			"PodGroup resource claims (dynamic resource allocation) are not supported; schedule the group with kube-scheduler"})
	}
	if g.Spec.ParentCompositePodGroupName != nil {
		out.refused = append(out.refused, unsupportedField{"spec.parentCompositePodGroupName",
			"CompositePodGroups are not supported; schedule the group with kube-scheduler"})
	}
	return out
}

func (s *Server) podGroupChanged(g *schedulingv1beta1.PodGroup) {
	view := toPodGroup(g)
	key := view.group.Name
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.groups[key]; ok && reflect.DeepEqual(old, view) {
		return // a status change (our own condition): nothing the models read
	}
	s.groups[key] = view
	s.must("upsert pod group", s.brain.UpsertPodGroup(context.Background(), view.group))
	s.rereadGroupLocked(g.Namespace, key)
}

func (s *Server) podGroupDeleted(g *schedulingv1beta1.PodGroup) {
	key := g.Namespace + "/" + g.Name
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.groups, key)
	delete(s.groupAdmitted, key)
	s.must("delete pod group", s.brain.DeletePodGroup(context.Background(), key))
}

// rereadGroupLocked reads the pending pods of a group again (a refusal may no longer hold, or may now): those
// neither backed off, nor being bound, nor nominated. s.mu is held.
func (s *Server) rereadGroupLocked(ns, key string) {
	pods, err := s.podLister.Pods(ns).List(labels.Everything())
	if err != nil {
		return
	}
	for _, p := range pods {
		k := podKey(p)
		if podGroupOf(p) != key || p.Spec.NodeName != "" || !s.ours(p) || p.DeletionTimestamp != nil || terminal(p) {
			continue
		}
		if _, ok := s.backoff[k]; ok {
			continue
		}
		if _, ok := s.inflight[k]; ok {
			continue
		}
		if s.nominated[k] != nil {
			continue
		}
		if sp, ok := s.pendingPodLocked(p); ok {
			s.must("upsert pod", s.brain.UpsertPod(context.Background(), sp))
		}
	}
}

// podGroupFieldsLocked lists why a pending pod's group cannot be honoured: PodGroups are not read, or its
// PodGroup uses a field weave-scheduler refuses, or the pod's priority is not its PodGroup's. A group not
// (yet) known refuses nothing: its pods wait for it in the scheduler's queue. s.mu is held.
func (s *Server) podGroupFieldsLocked(p *v1.Pod) []unsupportedField {
	if p.Spec.SchedulingGroup == nil {
		return nil
	}
	key := podGroupOf(p)
	if key == "" {
		return []unsupportedField{{"spec.schedulingGroup", "no podGroupName: the only kind of group modelled is a PodGroup"}}
	}
	if s.groupsOff != "" {
		return []unsupportedField{{"spec.schedulingGroup",
			"pod groups cannot be read: " + s.groupsOff + "; a pod of a group is not placed as if it had none"}}
	}
	view, ok := s.groups[key]
	if !ok {
		return nil
	}
	var out []unsupportedField
	for _, f := range view.refused {
		out = append(out, unsupportedField{"PodGroup " + key + " " + f.field, f.why})
	}
	prio := int32(0)
	if p.Spec.Priority != nil {
		prio = *p.Spec.Priority
	}
	if prio != view.priority {
		out = append(out, unsupportedField{"spec.priority", fmt.Sprintf(
			"%d differs from its PodGroup %s's priority %d (kube-scheduler v1.37 rejects such a group)", prio, key, view.priority)})
	}
	return out
}

// podGroupOutcome reports a batch's outcome to the PodGroups it decided, after the re-check: a group with a
// member sent to binding is admitted (PodGroupInitiallyScheduled=True, once); a group the batch left whole
// without a node, with fewer than minCount members bound, is unschedulable as a group: each of its pods gets
// a FailedScheduling event, PodScheduled=False and a backoff (together, so that they come back together), and
// the PodGroup the condition PodGroupInitiallyScheduled=False, reason Unschedulable. Its members fit a node
// one by one, so the loop's triage of single pods (failed) would keep them in the queue and solve them again
// batch after batch. It returns the other unschedulable pods, for that triage.
func (s *Server) podGroupOutcome(ctx context.Context, bound []bindJob, us []scheduler.Unschedulable) []scheduler.Unschedulable {
	if s.groupsOff != "" {
		return us
	}
	admitted := map[string]int{}
	for _, j := range bound {
		if g := podGroupOf(j.pod); g != "" {
			admitted[g]++
		}
	}
	var rest []scheduler.Unschedulable
	failed := map[string][]scheduler.Unschedulable{}
	for _, u := range us {
		ns, name, _ := strings.Cut(u.Pod, "/")
		p, err := s.podLister.Pods(ns).Get(name)
		g := ""
		if err == nil {
			g = podGroupOf(p)
		}
		if g == "" || admitted[g] > 0 {
			rest = append(rest, u)
			continue
		}
		failed[g] = append(failed[g], u)
	}
	for g := range admitted {
		s.mu.Lock()
		first := !s.groupAdmitted[g]
		s.groupAdmitted[g] = true
		s.mu.Unlock()
		if first {
			go s.setPodGroupCondition(ctx, g, metav1.Condition{Type: schedulingv1beta1.PodGroupInitiallyScheduled,
				Status: metav1.ConditionTrue, Reason: "Scheduled",
				Message: fmt.Sprintf("%d pods placed together by weave-scheduler", admitted[g])})
		}
	}
	keys := make([]string, 0, len(failed))
	for g := range failed {
		keys = append(keys, g)
	}
	sort.Strings(keys)
	for _, g := range keys {
		s.mu.Lock()
		view, known := s.groups[g]
		s.mu.Unlock()
		running := s.boundMembers(g)
		if !known || int64(running) >= view.group.MinCount {
			rest = append(rest, failed[g]...) // a running gang's extra members are placed one by one
			continue
		}
		msg := groupUnschedulableMessage(g, view.group, len(failed[g]), running, failed[g][0].Reason)
		if !s.cfg.DisablePreemption {
			placed, why := s.preemptGroup(ctx, g, failed[g]) // preempt_gang.go: workload preemption
			if placed {
				continue
			}
			if why != "" {
				msg += "; " + why
			}
		}
		for _, u := range failed[g] {
			ns, name, _ := strings.Cut(u.Pod, "/")
			p, err := s.podLister.Pods(ns).Get(name)
			if err != nil || p.Spec.NodeName != "" || p.DeletionTimestamp != nil {
				continue
			}
			s.unschedulable(ctx, p, func() string { return msg })
		}
		go s.setPodGroupCondition(ctx, g, metav1.Condition{Type: schedulingv1beta1.PodGroupInitiallyScheduled,
			Status: metav1.ConditionFalse, Reason: schedulingv1beta1.PodGroupReasonUnschedulable, Message: msg})
	}
	return rest
}

// groupUnschedulableMessage says why a group was left without a node.
func groupUnschedulableMessage(key string, g scheduler.PodGroup, pending, running int, reason string) string {
	where := "on the nodes"
	if g.TopologyKey != "" {
		where = fmt.Sprintf("within one value of node label %s", g.TopologyKey)
	}
	return fmt.Sprintf("pod group %s: its %d pending pods (minCount %d, %d bound) do not fit together %s beside the pods placed before them (%s)",
		key, pending, g.MinCount, running, where, reason)
}

// setPodGroupCondition sets a condition on a PodGroup's status, as kube-scheduler's updatePodGroupCondition
// does: a True PodGroupInitiallyScheduled never goes back to False, and an unchanged condition is not written.
func (s *Server) setPodGroupCondition(ctx context.Context, key string, c metav1.Condition) {
	ns, name, _ := strings.Cut(key, "/")
	groups := s.client.SchedulingV1beta1().PodGroups(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		g, err := groups.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if old := apimeta.FindStatusCondition(g.Status.Conditions, c.Type); old != nil && old.Status == metav1.ConditionTrue && c.Status != metav1.ConditionTrue {
			return nil
		}
		c.ObservedGeneration = g.Generation
		if !apimeta.SetStatusCondition(&g.Status.Conditions, c) {
			return nil
		}
		_, err = groups.UpdateStatus(ctx, g, metav1.UpdateOptions{})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		s.log.Warn("setting the PodGroup condition failed", "podGroup", key, "condition", c.Type, "error", err)
	}
}

// boundMembers counts a group's live pods bound to a node, as the informer sees them.
func (s *Server) boundMembers(group string) int {
	ns, _, _ := strings.Cut(group, "/")
	pods, err := s.podLister.Pods(ns).List(labels.Everything())
	if err != nil {
		return 0
	}
	n := 0
	for _, p := range pods {
		if podGroupOf(p) == group && p.Spec.NodeName != "" && p.DeletionTimestamp == nil && !terminal(p) {
			n++
		}
	}
	return n
}

// wholeGroups keeps a batch's gangs whole through the re-check before binding (recheck, which judges each
// placement alone): where it dropped a member of a group and the members it kept, with those bound, number
// fewer than the group's minCount, the kept ones are dropped too (requeued, reason group_split), since binding
// them would leave a partial gang running. ok are the placements the re-check kept of bindings.
func (s *Server) wholeGroups(bindings []scheduler.Binding, ok []bindJob) []bindJob {
	if s.groupsOff != "" {
		return ok
	}
	placed := map[string]int{}
	for _, b := range bindings {
		ns, name, _ := strings.Cut(b.Pod, "/")
		if p, err := s.podLister.Pods(ns).Get(name); err == nil {
			if g := podGroupOf(p); g != "" {
				placed[g]++
			}
		}
	}
	kept := map[string]int{}
	for _, j := range ok {
		if g := podGroupOf(j.pod); g != "" {
			kept[g]++
		}
	}
	split := map[string]bool{}
	for g, n := range placed {
		if kept[g] == 0 || kept[g] >= n {
			continue
		}
		s.mu.Lock()
		view, known := s.groups[g]
		s.mu.Unlock()
		need := int64(1)
		if known {
			need = view.group.MinCount
		}
		if int64(kept[g]+s.boundMembers(g)) < need {
			split[g] = true
		}
	}
	if len(split) == 0 {
		return ok
	}
	out := ok[:0:0]
	for _, j := range ok {
		if g := podGroupOf(j.pod); split[g] {
			s.metrics.skipped.WithLabelValues("group_split").Inc()
			s.log.Info("another member of the pod group lost its placement; pod requeued", "pod", podKey(j.pod), "node", j.node, "podGroup", g)
			s.unassume(j.pod)
			continue
		}
		out = append(out, j)
	}
	return out
}
