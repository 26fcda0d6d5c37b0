package app

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/weavesql/weave/scheduler"
)

// evictable is the scheduler's Config.Evictable: a bound pod may be a preemption victim unless the Eviction API
// would refuse its eviction now (k8s.io/kubernetes v1.37.2 pkg/registry/core/pod/storage/eviction.go): it is
// Running (a pod of another phase is evicted whatever the budgets, canIgnorePDB) and a PodDisruptionBudget of its
// namespace selects it (as the API reads a selector: nil selects nothing, empty everything) that allows no
// disruption now (status.disruptionsAllowed 0, or a generation the disruption controller has not observed), or
// more than one budget selects it (the API refuses that). Without this a plan whose victim a budget protects
// was refused and planned again the same way after the backoff, however many other pods could make room. A
// budget that allows some disruptions is counted by the plan (disruptionBudget, P3). Not read: a budget's
// unhealthyPodEvictionPolicy (an unready pod is then left out where the API might evict it).
func (s *Server) evictable(p *scheduler.Pod) (bool, string) {
	if p.Phase != string(v1.PodRunning) {
		return true, ""
	}
	covering := s.coveringBudgets(p)
	var names []string
	for _, b := range covering {
		names = append(names, b.Name)
		if b.Status.ObservedGeneration < b.Generation || b.Status.DisruptionsAllowed <= 0 {
			return false, fmt.Sprintf("PodDisruptionBudget %s/%s allows no disruption now", b.Namespace, b.Name)
		}
	}
	if len(covering) > 1 {
		return false, fmt.Sprintf("PodDisruptionBudgets %v select it; the Eviction API refuses more than one", names)
	}
	return true, ""
}

// coveringBudgets are the PodDisruptionBudgets of p's namespace whose selector selects it, as the API reads a
// selector (nil selects nothing, empty everything); none if they cannot be listed (the Eviction API still
// enforces them).
func (s *Server) coveringBudgets(p *scheduler.Pod) []*policyv1.PodDisruptionBudget {
	pdbs, err := s.pdbLister.PodDisruptionBudgets(p.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []*policyv1.PodDisruptionBudget
	for _, b := range pdbs {
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err == nil && sel.Matches(labels.Set(p.Labels)) {
			out = append(out, b)
		}
	}
	return out
}

// disruptionBudget is the scheduler's Config.DisruptionBudget: the one PodDisruptionBudget of its namespace that
// selects a Running pod, and the disruptions it allows now (status.disruptionsAllowed), which a plan's evictions
// of its pods may not exceed (P3): each eviction takes one from it, and the Eviction API refuses the one past it.
// A pod of another phase, or that no budget or several select (evictable leaves it out then), has none.
func (s *Server) disruptionBudget(p *scheduler.Pod) (string, int64) {
	if p.Phase != string(v1.PodRunning) {
		return "", 0
	}
	if covering := s.coveringBudgets(p); len(covering) == 1 {
		b := covering[0]
		return b.Namespace + "/" + b.Name, int64(b.Status.DisruptionsAllowed)
	}
	return "", 0 // none, or several: not evictable at all
}
