package app

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/weavesql/weave/scheduler"
)

// What weave-scheduler does not schedule. A pending pod is either placed as kube-scheduler v1.37's Filter
// plugins would allow, or not placed at all: a field the models cannot honour exactly is never read in a
// narrower sense. Such a pod is refused: it stays pending with a FailedScheduling event and the condition
// PodScheduled=False (reason Unschedulable) whose message names the field. A pod held back by
// spec.schedulingGates is not a refusal: like kube-scheduler's SchedulingGates plugin (PreEnqueue), weave
// does not try it until its gates are removed, and says so in the condition (reason SchedulingGated).
//
// Bound pods are never refused: they hold their node whatever they use, and every field of theirs that
// another pod's placement depends on (labels, anti-affinity terms, requests) is read in full.

// unsupportedField is one pod field weave-scheduler refuses to schedule, with the reason.
type unsupportedField struct {
	field, why string
}

// unsupported lists the fields of a pending pod that weave-scheduler cannot honour, in spec order; none
// means the pod may be scheduled.
func unsupported(p *v1.Pod) []unsupportedField {
	out := unsupportedRequests(p)
	if len(p.Spec.ResourceClaims) > 0 {
		out = append(out, unsupportedField{"spec.resourceClaims",
			"dynamic resource allocation is not supported; schedule the pod with kube-scheduler"})
	}
	out = append(out, selectorFieldsUnsupported(p)...)
	return out
}

// refusalMessage is the text of the FailedScheduling event and of the PodScheduled condition of a refused pod.
func refusalMessage(fs []unsupportedField) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%s (%s)", f.field, f.why)
	}
	return "weave-scheduler does not support " + strings.Join(parts, "; ")
}

// gated reports whether the pod waits for its scheduling gates to be removed (the API server itself sets
// its PodScheduled=False condition, reason SchedulingGated).
func gated(p *v1.Pod) bool { return len(p.Spec.SchedulingGates) > 0 }

// pendingPodLocked converts a pending pod of this scheduler for the state's queue, or reports why it is not
// queued (false): a gated pod waits for its gates; a pod using a field weave-scheduler does not support is
// refused (refuseLocked); a pod whose claims or volumes are not ready (convert_volumes.go) waits for them,
// reported like a refusal, and is read again when they change (claimChanged). s.mu is held.
func (s *Server) pendingPodLocked(p *v1.Pod) (scheduler.Pod, bool) {
	key := podKey(p)
	if gated(p) {
		s.must("delete pod", s.brain.DeletePod(context.Background(), key))
		return scheduler.Pod{}, false // tried once its gates are removed (an update)
	}
	fs := append(unsupported(p), s.podGroupFieldsLocked(p)...) // podgroups.go
	var vols volumeVerdict
	if len(p.Spec.Volumes) > 0 {
		s.rememberClaimsLocked(p)
		vols = volumeConstraints(p, s)
		fs = append(fs, vols.unsupported...)
	}
	if len(fs) > 0 {
		s.must("delete pod", s.brain.DeletePod(context.Background(), key))
		s.refuseLocked(p, refusalMessage(fs))
		return scheduler.Pod{}, false
	}
	if vols.waiting != "" {
		s.must("delete pod", s.brain.DeletePod(context.Background(), key))
		nodes, _ := s.nodeLister.List(labels.Everything())
		s.refuseLocked(p, fmt.Sprintf("0/%d nodes are available: %s", len(nodes), vols.waiting))
		return scheduler.Pod{}, false
	}
	delete(s.refused, key)
	sp := toPod(p)
	sp.VolumeNodeSelectors = vols.selectors
	return sp, true
}

// refuseLocked reports a pending pod that weave-scheduler does not schedule, once per distinct message: the
// FailedScheduling event and the PodScheduled=False condition, in the background. s.mu is held.
func (s *Server) refuseLocked(p *v1.Pod, msg string) {
	key := podKey(p)
	if s.refused[key] == msg {
		return
	}
	s.refused[key] = msg
	s.metrics.refused.Inc()
	s.log.Info("pod refused", "pod", key, "reason", msg)
	ctx := context.Background()
	if c := s.loopCtx.Load(); c != nil {
		ctx = *c
	}
	go func() {
		s.recorder.Eventf(p, nil, v1.EventTypeWarning, "FailedScheduling", "Scheduling", "%s", truncate(msg))
		s.setUnschedulable(ctx, p, msg)
	}()
}
