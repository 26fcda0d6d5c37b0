package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/weavesql/weave/scheduler"
)

// Preemption. A pod that the triage finds fitting no node (loop.go, failed) is given to the preemption model
// of package scheduler (Scheduler.PreemptPods): victims are bound pods of lower priority than every pod of
// the plan, a pod that fits without evicting is not placed by evicting, and the evictions are minimal. The
// victims are evicted one by one through the policy/v1 Eviction subresource, which enforces
// PodDisruptionBudgets: the first refusal (429 when a budget forbids it) ends the plan — no further victim is
// evicted, the preemptors get FailedScheduling and a backoff and are retried later. When every eviction is
// accepted, each preemptor gets status.nominatedNodeName and a Preempting event, stays assumed on its node in
// the state (so no other pod takes the room), and is bound once the informer has seen every victim of its plan
// deleted, after the same re-check as any placement. A nomination whose victims do not go within
// NominationTimeout is dropped (the pod goes back to the queue).

// Outcomes of preempt besides a reason for failure.
const (
	preemptStarted   = "\x00started"    // victims evicted; the pod waits for them
	preemptNotNeeded = "\x00not needed" // the pod fits without evicting: it stays in the queue
)

// nomination is a preemptor waiting for its victims.
type nomination struct {
	pod     *v1.Pod
	node    string
	victims map[string]bool // victims (pod keys) not yet gone
	ready   bool            // every eviction of the plan was accepted
	timer   *time.Timer
}

func priority(p *v1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// preempt runs preemption for pods that fit no node, one plan per priority (highest first), and returns an
// outcome per pod: preemptStarted, preemptNotNeeded, or why the pod stays unschedulable (it is then reported
// and backed off by the caller).
func (s *Server) preempt(ctx context.Context, pods []*v1.Pod) map[string]string {
	out := map[string]string{}
	byPrio := map[int32][]*v1.Pod{}
	var prios []int32
	for _, p := range pods {
		pr := priority(p)
		if byPrio[pr] == nil {
			prios = append(prios, pr)
		}
		byPrio[pr] = append(byPrio[pr], p)
	}
	sort.Slice(prios, func(i, j int) bool { return prios[i] > prios[j] })
	for _, pr := range prios {
		if ctx.Err() != nil {
			break
		}
		s.preemptPlan(ctx, byPrio[pr], out)
	}
	return out
}

// preemptPlan plans and carries out the preemption for pods of one priority.
func (s *Server) preemptPlan(ctx context.Context, pods []*v1.Pod, out map[string]string) {
	var keys []string
	byKey := map[string]*v1.Pod{}
	low := priority(pods[0])
	for _, p := range pods {
		keys = append(keys, podKey(p))
		byKey[podKey(p)] = p
		low = min(low, priority(p))
	}
	bs, ev, us, err := s.brain.PreemptPods(ctx, keys)
	if s.stateLost(err) {
		return
	}
	if err != nil {
		why := "no plan: " + err.Error()
		if errors.Is(err, scheduler.ErrNoSolution) {
			why = "the solver found no plan in time"
		}
		for _, k := range keys {
			out[k] = why
		}
		return
	}
	for _, u := range us {
		out[u.Pod] = u.Reason
	}
	for _, b := range bs {
		out[b.Pod] = "" // set below
	}
	for _, k := range keys {
		if _, ok := out[k]; !ok {
			out[k] = preemptNotNeeded
		}
	}
	if len(bs) == 0 {
		return
	}
	// The victims as the informers see them now. Belt and braces: a victim of equal or higher priority
	// than a preemptor cancels the plan.
	var victims []*v1.Pod
	for _, e := range ev {
		ns, name, _ := strings.Cut(e.Pod, "/")
		vp, err := s.podLister.Pods(ns).Get(name)
		if err != nil {
			continue // already gone
		}
		if priority(vp) >= low {
			s.log.Error("preemption plan with a victim of equal or higher priority; plan dropped", "victim", e.Pod)
			for _, b := range bs {
				out[b.Pod] = "internal error: a victim of equal or higher priority"
			}
			return
		}
		victims = append(victims, vp)
	}
	onNode := map[string]*v1.Pod{} // a preemptor per node, for the victims' events
	for _, b := range bs {
		if onNode[b.Node] == nil {
			onNode[b.Node] = byKey[b.Pod]
		}
	}
	// Nominate before evicting: the informer may see a victim deleted before its Evict call returns.
	s.mu.Lock()
	for _, b := range bs {
		nom := &nomination{pod: byKey[b.Pod], node: b.Node, victims: map[string]bool{}}
		for _, vp := range victims {
			nom.victims[podKey(vp)] = true
		}
		s.nominated[b.Pod] = nom
	}
	s.mu.Unlock()
	var names []string
	for _, vp := range victims {
		by := onNode[vp.Spec.NodeName]
		if by == nil {
			by = byKey[bs[0].Pod]
		}
		err := s.evict(ctx, vp)
		switch {
		case err == nil:
			s.metrics.preempted.Inc()
			names = append(names, podKey(vp))
			s.log.Info("evicted", "victim", podKey(vp), "node", vp.Spec.NodeName, "preemptor", podKey(by))
			s.recorder.Eventf(vp, by, v1.EventTypeNormal, "Preempted", "Preempting", "Preempted by pod %s on node %s", podKey(by), vp.Spec.NodeName)
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err): // gone, or replaced by a pod of the same name
			s.mu.Lock()
			s.victimGoneLocked(podKey(vp))
			s.mu.Unlock()
		default:
			why := fmt.Sprintf("evicting %s failed (%v); no further pod evicted, retrying later", podKey(vp), err)
			if apierrors.IsTooManyRequests(err) {
				why = fmt.Sprintf("evicting %s is refused, a PodDisruptionBudget forbids it (%v); no further pod evicted, retrying later", podKey(vp), err)
			}
			s.log.Warn("preemption stopped", "victim", podKey(vp), "evicted", names, "error", err)
			for _, b := range bs {
				out[b.Pod] = why // the caller backs the pod off (dropping its nomination and placement)
			}
			return
		}
	}
	for _, b := range bs {
		p := byKey[b.Pod]
		out[b.Pod] = preemptStarted
		s.setNominatedNode(ctx, p, b.Node)
		s.recorder.Eventf(p, nil, v1.EventTypeNormal, "Preempting", "Preempting",
			"%s", truncate(fmt.Sprintf("Evicted %d pod(s) of lower priority (%s) to place the pod on node %s", len(names), strings.Join(names, ", "), b.Node)))
		s.mu.Lock()
		if nom := s.nominated[b.Pod]; nom != nil {
			nom.ready = true
			key := b.Pod
			nom.timer = time.AfterFunc(s.cfg.NominationTimeout, func() { s.nominationExpired(key, nom) })
			if len(nom.victims) == 0 {
				go s.bindNominated(key, nom)
			}
		}
		s.mu.Unlock()
	}
}

// evict asks the API server to evict a pod (the same request as EvictV1). A 429 is not retried: while a new
// PodDisruptionBudget is not yet processed the server answers 429 with Retry-After 10 s, which client-go
// would wait for and retry up to 10 times; the plan stops at the first refusal instead, and is retried with
// the pod's backoff.
func (s *Server) evict(ctx context.Context, vp *v1.Pod) error {
	ev := &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Namespace: vp.Namespace, Name: vp.Name},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &vp.UID}},
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if rc, ok := s.client.CoreV1().RESTClient().(*rest.RESTClient); ok && rc != nil {
		return rc.Post().Namespace(vp.Namespace).Resource("pods").Name(vp.Name).SubResource("eviction").
			MaxRetries(0).Body(ev).Do(ctx).Error()
	}
	return s.client.CoreV1().Pods(vp.Namespace).EvictV1(ctx, ev) // a fake clientset
}

func (s *Server) setNominatedNode(ctx context.Context, p *v1.Pod, node string) {
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"nominatedNodeName": node}})
	if _, err := s.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil && !apierrors.IsNotFound(err) {
		s.log.Warn("setting nominatedNodeName failed", "pod", podKey(p), "error", err)
	}
}

// victimGoneLocked records that a pod is gone; a nomination left without victims is bound.
func (s *Server) victimGoneLocked(key string) {
	for pk, nom := range s.nominated {
		if nom.victims[key] {
			delete(nom.victims, key)
			if len(nom.victims) == 0 && nom.ready {
				go s.bindNominated(pk, nom)
			}
		}
	}
}

func (s *Server) dropNominationLocked(key string) {
	if nom := s.nominated[key]; nom != nil {
		if nom.timer != nil {
			nom.timer.Stop()
		}
		delete(s.nominated, key)
	}
}

// bindNominated binds a preemptor whose victims are gone, after the re-check of every placement.
func (s *Server) bindNominated(key string, nom *nomination) {
	s.mu.Lock()
	if s.nominated[key] != nom {
		s.mu.Unlock()
		return
	}
	s.dropNominationLocked(key)
	s.mu.Unlock()
	ctxp := s.loopCtx.Load()
	if ctxp == nil || (*ctxp).Err() != nil || !s.leader.Load() {
		s.requeue(nom.pod)
		return
	}
	ctx := *ctxp
	for _, j := range s.recheck([]scheduler.Binding{{Pod: key, Node: nom.node}}) {
		select {
		case s.binds <- j:
		case <-ctx.Done():
		}
	}
}

// nominationExpired gives up on a nomination whose victims did not go in time: the pod goes back to the queue.
func (s *Server) nominationExpired(key string, nom *nomination) {
	s.mu.Lock()
	if s.nominated[key] != nom {
		s.mu.Unlock()
		return
	}
	delete(s.nominated, key)
	s.mu.Unlock()
	s.log.Warn("victims still present after the nomination timeout; pod requeued", "pod", key, "node", nom.node, "waiting_for", len(nom.victims))
	s.requeue(nom.pod)
}

// requeue un-assumes a pod by its latest informer version, if it is still pending.
func (s *Server) requeue(p *v1.Pod) {
	cur, err := s.podLister.Pods(p.Namespace).Get(p.Name)
	if err != nil || cur.Spec.NodeName != "" {
		return
	}
	s.unassume(cur)
}
