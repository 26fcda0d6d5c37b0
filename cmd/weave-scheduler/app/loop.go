package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/weavesql/weave"
	"github.com/weavesql/weave/scheduler"
)

func clientcmdConfig(path string) (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", path)
}

// maxDrain bounds how long the loop waits for the informers' events to be applied before it solves.
const maxDrain = time.Second

// scheduleLoop solves batches while this replica leads.
func (s *Server) scheduleLoop(ctx context.Context) error {
	s.loopCtx.Store(&ctx)
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// Adaptive batching (issue 24): the batch is what is pending once the loop is free (up to BatchSize;
		// BatchWait, off by default, waits for more). Pods that arrive while this batch is solved form the
		// next one. The wait is outside the batch's time ("total"); the events queued when it ends (pods
		// created together, nodes changed) are applied before the solve.
		if err := s.brain.WaitBatch(ctx); err != nil {
			return err
		}
		s.events.drain(ctx, maxDrain)
		s.metrics.pending.Set(float64(len(s.brain.Pending())))
		t0 := time.Now()
		specUsed := s.brain.SpeculationStats().Used
		bindings, unsched, err := s.brain.SchedulePending(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if s.stateLost(err) {
			return err
		}
		if err != nil {
			s.metrics.solveErrors.Inc()
			s.log.Warn("batch without a usable solution; backing off its pods", "error", err)
			s.backOffHead(err)
			continue
		}
		if len(bindings)+len(unsched) == 0 {
			continue
		}
		st := s.brain.LastStats()
		size := len(bindings) + len(unsched)
		speculated := s.brain.SpeculationStats().Used > specUsed
		s.observe(st, size, speculated)
		if s.Hooks.AfterSolve != nil {
			s.Hooks.AfterSolve(ctx, bindings)
		}
		tc := time.Now()
		ok := s.wholeGroups(bindings, s.recheck(bindings)) // podgroups.go: no partial gang
		s.metrics.phase.WithLabelValues("check").Observe(time.Since(tc).Seconds())
		for _, j := range ok {
			select {
			case s.binds <- j:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		for _, u := range unsched {
			if strings.HasPrefix(u.Reason, scheduler.ReasonCheckRejected) {
				// The model and the independent check disagree: a bug to report, not a pod to lose (it is
				// retried with the next batch like any pod left out).
				s.metrics.skipped.WithLabelValues("check_rejected").Inc()
				s.log.Warn("placement rejected by the independent check", "pod", u.Pod, "reason", u.Reason)
			}
		}
		tf := time.Now()
		unsched = s.podGroupOutcome(ctx, ok, unsched) // podgroups.go: a group left out is unschedulable whole
		if len(unsched) > 0 {
			s.failed(ctx, unsched)
		}
		failedTook := time.Since(tf)
		total := time.Since(t0)
		s.metrics.phase.WithLabelValues("total").Observe(total.Seconds())
		if s.Hooks.AfterBatch != nil {
			s.Hooks.AfterBatch(BatchReport{Start: t0, Size: size, Placed: len(bindings), Stats: st, Speculated: speculated, Total: total})
		}
		s.log.Debug("batch", "placed", len(bindings), "bound", len(ok), "unschedulable", len(unsched),
			"variables", st.Variables, "constraints", st.Constraints, "ground", st.Ground, "solve", st.Solve,
			"batch", time.Since(t0), "check", time.Since(tc)-failedTook, "unplaced_triage", failedTook)
	}
}

// observe records a batch's size and the phases of its solve; a batch placed from a speculation solved
// nothing of its own (its solve ran earlier, while the loop was idle).
func (s *Server) observe(stats weave.Stats, n int, speculated bool) {
	s.metrics.batchSize.Observe(float64(n))
	if speculated {
		return
	}
	for phase, d := range map[string]time.Duration{"fetch": stats.Fetch, "ground": stats.Ground, "solve": stats.Solve, "extract": stats.Extract, "verify": stats.Verify} {
		s.metrics.phase.WithLabelValues(phase).Observe(d.Seconds())
	}
	s.metrics.variables.Set(float64(stats.Variables))
	s.metrics.constraints.Set(float64(stats.Constraints))
}

// backOffHead backs off the pods of the batch that failed (the head of the queue), so that the next batch
// is different and the loop does not spin.
func (s *Server) backOffHead(err error) {
	head := s.brain.Pending()
	if len(head) > s.cfg.BatchSize {
		head = head[:s.cfg.BatchSize]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, key := range head {
		s.backOffLocked(key)
	}
	if len(head) == 0 {
		time.Sleep(s.cfg.InitialBackoff)
	}
}

// recheck keeps the placements that still hold on the latest informer view: the pod still exists unbound
// (same pod, not being deleted), the node still exists, and the hard policies still hold on the state as it
// is now (nodes or pods may have changed since the solve). A dropped placement is un-assumed: the pod goes
// back to the queue (or out of the state when it is gone). The state is read in place, under the brain's
// lock (WithPolicyState): a copy of it per batch cost 14–30 ms at 50,000 pods.
func (s *Server) recheck(bindings []scheduler.Binding) []bindJob {
	return s.recheckOn(s.brain.WithPolicyState, bindings) // the enabled hard policies only
}

// recheckOn is recheck on the state that with passes to its argument. That function runs under the
// brain's lock, so it calls neither the brain nor anything that takes s.mu (which is taken before the
// brain's): the pods to requeue are requeued after it.
func (s *Server) recheckOn(with func(func(*scheduler.State)), bindings []scheduler.Binding) []bindJob {
	type candidate struct {
		b        scheduler.Binding
		p        *v1.Pod
		nodeGone bool // from the informer's view
	}
	var cands []candidate
	for _, b := range bindings {
		ns, name, _ := strings.Cut(b.Pod, "/")
		p, err := s.podLister.Pods(ns).Get(name)
		if err != nil || p.Spec.NodeName != "" || p.DeletionTimestamp != nil {
			s.metrics.skipped.WithLabelValues("pod_gone").Inc()
			s.log.Info("pod gone or bound before binding; placement dropped", "pod", b.Pod, "node", b.Node)
			s.mu.Lock()
			if err != nil {
				s.must("delete pod", s.brain.DeletePod(context.Background(), b.Pod))
			} else {
				s.must("upsert pod", s.brain.UpsertPod(context.Background(), toPod(p)))
			}
			s.mu.Unlock()
			continue
		}
		_, err = s.nodeLister.Get(b.Node)
		cands = append(cands, candidate{b, p, err != nil})
	}
	// Under the brain's lock: the verdicts only.
	why := make([]string, len(cands)) // "" keeps the placement
	reason := make([]string, len(cands))
	with(func(st *scheduler.State) {
		var batch []*scheduler.Pod
		var at []int
		for i, c := range cands {
			switch sp := st.Pods[c.b.Pod]; {
			case c.nodeGone || st.Nodes[c.b.Node] == nil:
				why[i] = "node_gone"
			case sp == nil || sp.NodeName != c.b.Node:
				state := "no pod"
				if sp != nil {
					state = "on node " + strconv.Quote(sp.NodeName)
				}
				why[i], reason[i] = "state_changed", state
			default:
				batch, at = append(batch, sp), append(at, i)
			}
		}
		if err := st.Check(batch); err != nil {
			bad := 0
			for j, sp := range batch {
				if err := st.Check([]*scheduler.Pod{sp}); err != nil {
					why[at[j]], reason[at[j]] = "no_longer_fits", err.Error()
					bad++
				}
			}
			if bad == 0 { // only the combination fails: drop all but the first
				for _, i := range at[1:] {
					why[i], reason[i] = "no_longer_fits", err.Error()
				}
			}
		}
	})
	var ok []bindJob
	for i, c := range cands {
		switch why[i] {
		case "":
			s.mu.Lock()
			s.inflight[c.b.Pod] = c.b.Node
			s.mu.Unlock()
			ok = append(ok, bindJob{pod: c.p, node: c.b.Node})
			continue
		case "node_gone":
			s.log.Info("node gone before binding; pod requeued", "pod", c.b.Pod, "node", c.b.Node)
		case "state_changed":
			s.log.Info("placement no longer in the state; pod requeued", "pod", c.b.Pod, "node", c.b.Node, "state", reason[i])
		case "no_longer_fits":
			s.log.Info("placement no longer fits; pod requeued", "pod", c.b.Pod, "node", c.b.Node, "reason", reason[i])
		}
		s.metrics.skipped.WithLabelValues(why[i]).Inc()
		s.unassume(c.p)
	}
	return ok
}

// unassume puts a pod placed by the last batch back in the queue.
func (s *Server) unassume(p *v1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.inflight, podKey(p))
	sp := toPod(p)
	sp.NodeName = ""
	s.must("upsert pod", s.brain.UpsertPod(context.Background(), sp))
}

func (s *Server) bindWorker(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-s.binds:
			s.bind(ctx, j)
		}
	}
}

func (s *Server) bind(ctx context.Context, j bindJob) {
	p := j.pod
	key := podKey(p)
	t0 := time.Now()
	err := s.client.CoreV1().Pods(p.Namespace).Bind(ctx, &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, UID: p.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: j.node},
	}, metav1.CreateOptions{})
	s.metrics.phase.WithLabelValues("bind").Observe(time.Since(t0).Seconds())
	if err != nil {
		s.metrics.bindErrors.Inc()
		if apierrors.IsNotFound(err) {
			s.log.Info("pod deleted before binding", "pod", key)
			s.mu.Lock()
			delete(s.inflight, key)
			s.must("delete pod", s.brain.DeletePod(context.Background(), key))
			s.mu.Unlock()
			return
		}
		s.log.Warn("binding failed; backing off", "pod", key, "node", j.node, "error", err)
		s.recorder.Eventf(p, nil, v1.EventTypeWarning, "FailedScheduling", "Scheduling", truncate(fmt.Sprintf("Binding rejected: %v", err)))
		s.backOff(p)
		return
	}
	s.mu.Lock()
	delete(s.inflight, key)
	delete(s.attempts, key)
	s.mu.Unlock()
	s.metrics.scheduled.Inc()
	if !p.CreationTimestamp.IsZero() {
		s.metrics.e2eLatencies.Observe(time.Since(p.CreationTimestamp.Time).Seconds())
	}
	s.recorder.Eventf(p, nil, v1.EventTypeNormal, "Scheduled", "Binding", "Successfully assigned %s to %s", key, j.node)
}

// triageBudget bounds the time failed spends checking unplaced pods after a batch; the pods it leaves
// unchecked stay in the queue and are checked after a later batch.
const triageBudget = time.Second

// failed handles the pods a batch left without a node, in the loop, before the next batch. Most lost to
// their batch or to the solver's time limit and fit some node: they stay in the queue for the next batch,
// without an event. The others fit no node as the state is (State.FitsSomewhere: the reference filter of
// package scheduler on the nodes with room for the pod's requests): preemption is tried for them (preempt.go), and
// those it cannot place get a FailedScheduling event, the PodScheduled=False condition with the reason, and
// a backoff. This runs before the next batch so that a pod that fits no node is not solved again and again
// while it waits (PreemptionBasic: 722 batches for 20 pods). The reason (State.Diagnose: per node, the
// policies that reject the pod, in kube-scheduler's words) is worked out off the loop, by the goroutine that
// reports the pod (explainer).
func (s *Server) failed(ctx context.Context, us []scheduler.Unschedulable) {
	s.metrics.deferred.Add(float64(len(us)))
	t0 := time.Now()
	st := s.brain.PolicyState() // the enabled hard policies only
	fits := st.Fitter()         // the nodes' use summed once, not once per pod
	var stuck []*v1.Pod
	checked := 0
	for _, u := range us {
		if time.Since(t0) > triageBudget {
			break
		}
		checked++
		sp := st.Pods[u.Pod]
		if sp == nil || sp.NodeName != "" || fits(sp) {
			continue
		}
		ns, name, _ := strings.Cut(u.Pod, "/")
		p, err := s.podLister.Pods(ns).Get(name)
		if err != nil || p.Spec.NodeName != "" || p.DeletionTimestamp != nil {
			continue
		}
		stuck = append(stuck, p)
	}
	s.log.Debug("triage", "unplaced", len(us), "checked", checked, "fit_no_node", len(stuck), "took", time.Since(t0))
	if len(stuck) == 0 {
		return
	}
	ex := newExplainer(st) // st is the explainer's from here on
	if s.cfg.DisablePreemption {
		for _, p := range stuck {
			s.unschedulable(ctx, p, ex.failure(podKey(p), ""))
		}
		return
	}
	s.preempt(ctx, stuck, ex)
}

// unschedulable reports a pod that no node takes and backs it off; the message is worked out, and the event
// and the condition sent, in the background (a diagnosis and API calls, not on the loop's path).
func (s *Server) unschedulable(ctx context.Context, p *v1.Pod, msg func() string) {
	s.metrics.unschedule.Inc()
	s.backOff(p)
	go func() {
		m := msg()
		s.recorder.Eventf(p, nil, v1.EventTypeWarning, "FailedScheduling", "Scheduling", "%s", truncate(m))
		s.setUnschedulable(ctx, p, m)
	}()
}

func truncate(s string) string {
	if len(s) > 1000 {
		return s[:997] + "..."
	}
	return s
}

func (s *Server) setUnschedulable(ctx context.Context, p *v1.Pod, msg string) {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Message == msg {
			return
		}
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []map[string]any{{
		"type": "PodScheduled", "status": "False", "reason": v1.PodReasonUnschedulable, "message": msg,
		"lastTransitionTime": metav1.Now(),
	}}}})
	if _, err := s.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil && !apierrors.IsNotFound(err) {
		s.log.Warn("setting PodScheduled=False failed", "pod", podKey(p), "error", err)
	}
}
