package app

import (
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Queueing hints for inter-pod affinity. A pod backed off because it fits no node waits out its backoff
// unless the cluster changes in a way that may let it fit: a node change requeues every backed-off pod
// (nodeChanged); a bound pod's change requeues the pods whose required inter-pod (anti-)affinity it may now
// satisfy, as kube-scheduler v1.37.2's InterPodAffinity plugin does (isSchedulableAfterAssignedPodChange,
// pkg/scheduler/framework/plugins/interpodaffinity/plugin.go): a pod bound or relabelled so that it matches
// every required affinity term of the waiting pod, or deleted (or relabelled) so that it no longer matches
// one of its anti-affinity terms, or deleted when its own anti-affinity terms selected the waiting pod.
// Without it a web pod created a moment before the cache pod it must run next to fitted no node, and waited
// its whole backoff (200 ms in weave-bench) after the cache pod was bound.
//
// The tests here may say "requeue" where kube-scheduler would not (they ignore matchLabelKeys, and
// a namespace selector matches every namespace): a pod requeued needlessly costs a solve and fails
// again, whereas a pod not requeued waits.

// noteAffineLocked records a pod just backed off in s.affine if it has required inter-pod (anti-)affinity
// terms: only those are tested at each bound pod's change, not every pod backed off (a PreemptionBasic run
// parks hundreds while thousands of bound pods change).
func (s *Server) noteAffineLocked(key string) {
	ns, name, _ := strings.Cut(key, "/")
	if w, err := s.podLister.Pods(ns).Get(name); err == nil && (len(requiredAffinity(w)) > 0 || len(requiredAntiAffinity(w)) > 0) {
		s.affine[key] = true
	}
}

// requeueAfterBoundLocked requeues the backed-off pods that old becoming p (old nil: p newly bound, or newly
// seen bound) may let fit. p is a bound pod.
func (s *Server) requeueAfterBoundLocked(old, p *v1.Pod) {
	if len(s.affine) == 0 {
		return
	}
	if old != nil && old.Spec.NodeName == "" {
		old = nil // its binding: an assigned pod added
	}
	if old != nil && maps.Equal(old.Labels, p.Labels) {
		return // a status update: no term matches differently
	}
	s.requeueWaitingLocked(s.affine, func(w *v1.Pod) bool {
		if old == nil {
			return matchesAllTerms(requiredAffinity(w), w, p)
		}
		return !matchesAllTerms(requiredAffinity(w), w, old) && matchesAllTerms(requiredAffinity(w), w, p) ||
			matchesAnyTerm(requiredAntiAffinity(w), w, old) && !matchesAnyTerm(requiredAntiAffinity(w), w, p)
	})
}

// requeueAfterGoneLocked requeues the backed-off pods that the bound pod p, deleted or finished, kept from
// fitting by inter-pod anti-affinity: theirs, or its own (then any backed-off pod may be one).
func (s *Server) requeueAfterGoneLocked(p *v1.Pod) {
	if p.Spec.NodeName == "" {
		return
	}
	if anti := requiredAntiAffinity(p); len(anti) > 0 {
		waiting := make(map[string]bool, len(s.backoff))
		for key := range s.backoff {
			waiting[key] = true
		}
		s.requeueWaitingLocked(waiting, func(w *v1.Pod) bool {
			return matchesAnyTerm(requiredAntiAffinity(w), w, p) || matchesAnyTerm(anti, p, w)
		})
		return
	}
	s.requeueWaitingLocked(s.affine, func(w *v1.Pod) bool { return matchesAnyTerm(requiredAntiAffinity(w), w, p) })
}

// requeueWaitingLocked ends the backoff of the pods of keys (backed off; as the lister has them) for which
// may holds.
func (s *Server) requeueWaitingLocked(keys map[string]bool, may func(w *v1.Pod) bool) {
	var requeue []string
	for key := range keys {
		ns, name, _ := strings.Cut(key, "/")
		w, err := s.podLister.Pods(ns).Get(name)
		if err != nil || w.Spec.NodeName != "" {
			continue
		}
		if may(w) {
			requeue = append(requeue, key)
		}
	}
	slices.Sort(requeue) // the queue's order does not follow the map's
	for _, key := range requeue {
		s.metrics.hintRequeues.Inc()
		s.requeueLocked(key)
	}
}

func requiredAffinity(p *v1.Pod) []v1.PodAffinityTerm {
	if a := p.Spec.Affinity; a != nil && a.PodAffinity != nil {
		return a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

func requiredAntiAffinity(p *v1.Pod) []v1.PodAffinityTerm {
	if a := p.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		return a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

// matchesAllTerms reports whether q may match every term of owner's (kube-scheduler's
// podMatchesAllAffinityTerms: false when there are none).
func matchesAllTerms(terms []v1.PodAffinityTerm, owner, q *v1.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !termMayMatch(&terms[i], owner, q) {
			return false
		}
	}
	return true
}

// matchesAnyTerm reports whether q may match some term of owner's.
func matchesAnyTerm(terms []v1.PodAffinityTerm, owner, q *v1.Pod) bool {
	for i := range terms {
		if termMayMatch(&terms[i], owner, q) {
			return true
		}
	}
	return false
}

// termMayMatch reports whether the term of owner's selects q, or may: a namespace selector is taken to
// select every namespace, matchLabelKeys and mismatchLabelKeys are left out, and a selector the API would
// refuse selects every pod.
func termMayMatch(t *v1.PodAffinityTerm, owner, q *v1.Pod) bool {
	if t.NamespaceSelector == nil {
		ns := t.Namespaces
		if len(ns) == 0 {
			ns = []string{owner.Namespace}
		}
		if !slices.Contains(ns, q.Namespace) {
			return false
		}
	}
	if t.LabelSelector == nil {
		return false // selects no pod
	}
	sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
	if err != nil {
		return true
	}
	return sel.Matches(labels.Set(q.Labels))
}
