package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
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
// the plan, a pod that fits without evicting is not placed by evicting, and the evictions are minimal. A
// plan may place only part of its pods (the solver stops once it no longer improves): the others are planned
// again at once, as long as each plan places some pod and planBudget is not spent; those left over when a
// plan placed some pod are parked (out of the queue for InitialBackoff, not reported), those no plan places
// are reported and backed off.
//
// Each preemptor is nominated to its node and stays assumed there in the state (so no other pod takes the
// room). A plan leaves out the pods a PodDisruptionBudget protects now (disruption.go). The victims are
// evicted through the policy/v1 Eviction subresource, which enforces PodDisruptionBudgets, in the background: the victims on one preemptor's node one after the other, the
// nodes in parallel (evictWorkers requests at a time), and first the victims on nodes without a preemptor
// (which the plan needs for constraints across nodes), which every preemptor of the plan waits for. The
// first refusal (429 when a budget forbids it) ends the group: no further victim of it is evicted, its
// preemptors get FailedScheduling and a backoff and are retried later. When the evictions a preemptor waits
// for are accepted, it gets status.nominatedNodeName and a Preempting event, and it is bound once the
// informer has seen those victims deleted, after the same re-check as any placement: each node's preemptor
// is bound as soon as its own node is free, not once every victim of the plan is gone. A nomination whose
// victims do not go within NominationTimeout is dropped (the pod goes back to the queue).

// evictWorkers is how many eviction requests run at a time. An eviction is a write that waits for etcd
// (about 100 ms on the loaded bench machine, whatever the number in flight): 16 at a time made 41 evictions
// take three rounds trips, 0.75 s, in experiment 4.
const evictWorkers = 64

// planBudget bounds the time spent planning again the pods that a plan left unplaced.
const planBudget = 3 * time.Second

// nomination is a preemptor waiting for its victims.
type nomination struct {
	pod     *v1.Pod
	node    string
	victims map[string]bool // victims (pod keys) not yet gone: those on its node and those on no preemptor's node
	ready   bool            // every eviction it waits for was accepted
	timer   *time.Timer
}

func priority(p *v1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// preempt runs preemption for pods that fit no node, one plan per priority (highest first). ex says why
// each pod fits no node, for the report of those preemption does not place.
func (s *Server) preempt(ctx context.Context, pods []*v1.Pod, ex *explainer) {
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
			return
		}
		s.preemptPlan(ctx, byPrio[pr], ex)
	}
}

// preemptPlan plans the preemption for pods of one priority, again for the pods a plan leaves unplaced
// while plans place some, and starts carrying the plans out.
func (s *Server) preemptPlan(ctx context.Context, pods []*v1.Pod, ex *explainer) {
	byKey := map[string]*v1.Pod{}
	for _, p := range pods {
		byKey[podKey(p)] = p
	}
	fail := func(key, why string) {
		s.unschedulable(ctx, byKey[key], ex.failure(key, why))
	}
	rest := pods
	placedAny := false
	t0 := time.Now()
	for round := 1; len(rest) > 0; round++ {
		var keys []string
		for _, p := range rest {
			keys = append(keys, podKey(p))
		}
		td := time.Now()
		s.events.drain(ctx, maxDrain)
		tp := time.Now()
		bs, ev, us, err := s.brain.PreemptPods(ctx, keys)
		if s.stateLost(err) || ctx.Err() != nil {
			return
		}
		args := []any{"round", round, "pods", len(keys), "placed", len(bs), "victims", len(ev), "unplaced", len(us), "took", time.Since(tp), "waited", tp.Sub(td)}
		if len(bs)+len(ev) > 0 { // the plan's model was solved: where a slow plan's time went
			st := s.brain.LastStats()
			args = append(args, "variables", st.Variables, "fetch", st.Fetch, "ground", st.Ground, "solve", st.Solve)
		}
		s.log.Info("preemption plan", append(args, "error", err)...)
		if err != nil {
			if placedAny {
				for _, p := range rest {
					s.park(p) // a later plan may place it
				}
				return
			}
			why := "no plan: " + err.Error()
			if errors.Is(err, scheduler.ErrNoSolution) {
				why = "the solver found no plan in time"
			}
			for _, k := range keys {
				fail(k, why)
			}
			return
		}
		// Pods neither placed nor unplaced fit without evicting: they stay in the queue.
		if len(bs) > 0 {
			placedAny = true
			s.carryOut(ctx, bs, ev, byKey, ex)
		}
		rest = rest[:0:0]
		reasons := map[string]string{}
		for _, u := range us {
			if p := byKey[u.Pod]; p != nil {
				rest = append(rest, p)
				reasons[u.Pod] = u.Reason
			}
		}
		if len(bs) == 0 || time.Since(t0) > planBudget {
			for _, p := range rest {
				if placedAny {
					s.park(p) // some were placed: the next round may place it
				} else {
					fail(podKey(p), reasons[podKey(p)])
				}
			}
			return
		}
	}
}

// carryOut nominates the preemptors of a plan (assumed on their nodes by PreemptPods) and evicts the plan's
// victims in the background.
func (s *Server) carryOut(ctx context.Context, bs []scheduler.Binding, ev []scheduler.Eviction, byKey map[string]*v1.Pod, ex *explainer) {
	low := priority(byKey[bs[0].Pod])
	on := map[string][]*v1.Pod{} // preemptors per node
	var nodes []string
	for _, b := range bs {
		p := byKey[b.Pod]
		low = min(low, priority(p))
		if on[b.Node] == nil {
			nodes = append(nodes, b.Node)
		}
		on[b.Node] = append(on[b.Node], p)
	}
	// The victims as the informers see them now. Belt and braces: a victim of equal or higher priority
	// than a preemptor cancels the plan.
	victims := map[string][]*v1.Pod{} // per node of a preemptor
	var shared []*v1.Pod              // on nodes without a preemptor
	for _, e := range ev {
		ns, name, _ := strings.Cut(e.Pod, "/")
		vp, err := s.podLister.Pods(ns).Get(name)
		if err != nil {
			continue // already gone
		}
		if priority(vp) >= low {
			s.log.Error("preemption plan with a victim of equal or higher priority; plan dropped", "victim", e.Pod)
			for _, b := range bs {
				s.unschedulable(ctx, byKey[b.Pod], ex.failure(b.Pod, "internal error: a victim of equal or higher priority"))
			}
			return
		}
		if on[vp.Spec.NodeName] != nil {
			victims[vp.Spec.NodeName] = append(victims[vp.Spec.NodeName], vp)
		} else {
			shared = append(shared, vp)
		}
	}
	// Nominate before evicting: the informer may see a victim deleted before its Evict call returns.
	s.mu.Lock()
	for _, b := range bs {
		nom := &nomination{pod: byKey[b.Pod], node: b.Node, victims: map[string]bool{}}
		for _, vp := range append(append([]*v1.Pod(nil), victims[b.Node]...), shared...) {
			nom.victims[podKey(vp)] = true
		}
		s.nominated[b.Pod] = nom
	}
	s.mu.Unlock()
	go func() {
		failAll := func(ps []*v1.Pod, why string) {
			for _, p := range ps {
				s.unschedulable(ctx, p, ex.failure(podKey(p), why))
			}
		}
		sharedNames, why := s.evictAll(ctx, shared, on[nodes[0]][0])
		if why != "" {
			for _, n := range nodes {
				failAll(on[n], why)
			}
			return
		}
		var wg sync.WaitGroup
		for _, n := range nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				names, why := s.evictAll(ctx, victims[n], on[n][0])
				if why != "" {
					failAll(on[n], why)
					return
				}
				names = append(names, sharedNames...)
				sort.Strings(names)
				// Each preemptor's nominatedNodeName patch at once: one after the other, a node's second
				// preemptor was bound a patch round trip later (experiment 4: two preemptors per node).
				var nwg sync.WaitGroup
				for _, p := range on[n] {
					nwg.Add(1)
					go func() {
						defer nwg.Done()
						s.nominationReady(ctx, p, n, names)
					}()
				}
				nwg.Wait()
			}()
		}
		wg.Wait()
	}()
}

// evictAll evicts victims one after the other for preemptor by, and returns the keys of those evicted, or
// why it stopped (the first refusal or error: no further victim is evicted).
func (s *Server) evictAll(ctx context.Context, victims []*v1.Pod, by *v1.Pod) ([]string, string) {
	var names []string
	for _, vp := range victims {
		if vp.DeletionTimestamp != nil { // evicted for an earlier plan, or deleted: it is going
			names = append(names, podKey(vp))
			continue
		}
		select {
		case s.evicting <- struct{}{}:
		case <-ctx.Done():
			return names, ctx.Err().Error()
		}
		te := time.Now()
		err := s.evict(ctx, vp)
		<-s.evicting
		switch {
		case err == nil:
			s.metrics.preempted.Inc()
			names = append(names, podKey(vp))
			s.log.Info("evicted", "victim", podKey(vp), "node", vp.Spec.NodeName, "preemptor", podKey(by), "took", time.Since(te))
			s.recorder.Eventf(vp, by, v1.EventTypeNormal, "Preempted", "Preempting", "Preempted by pod %s on node %s", podKey(by), vp.Spec.NodeName)
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err): // gone, or replaced by a pod of the same name
			s.mu.Lock()
			s.victimGoneLocked(podKey(vp))
			s.mu.Unlock()
		default:
			s.log.Warn("preemption stopped", "victim", podKey(vp), "evicted", names, "error", err)
			if apierrors.IsTooManyRequests(err) {
				return names, fmt.Sprintf("evicting %s is refused, a PodDisruptionBudget forbids it (%v); no further pod evicted, retrying later", podKey(vp), err)
			}
			return names, fmt.Sprintf("evicting %s failed (%v); no further pod evicted, retrying later", podKey(vp), err)
		}
	}
	return names, ""
}

// nominationReady records that the evictions a preemptor waits for were accepted: it gets its
// nominatedNodeName and a Preempting event, and is bound once those victims are gone.
func (s *Server) nominationReady(ctx context.Context, p *v1.Pod, node string, names []string) {
	key := podKey(p)
	s.mu.Lock()
	live := s.nominated[key] != nil && s.nominated[key].node == node
	s.mu.Unlock()
	if !live {
		return // dropped meanwhile (deleted, backed off)
	}
	s.setNominatedNode(ctx, p, node)
	s.recorder.Eventf(p, nil, v1.EventTypeNormal, "Preempting", "Preempting",
		"%s", truncate(fmt.Sprintf("Evicted %d pod(s) of lower priority (%s) to place the pod on node %s", len(names), strings.Join(names, ", "), node)))
	s.mu.Lock()
	defer s.mu.Unlock()
	nom := s.nominated[key]
	if nom == nil || nom.node != node {
		return
	}
	nom.ready = true
	nom.timer = time.AfterFunc(s.cfg.NominationTimeout, func() { s.nominationExpired(key, nom) })
	if len(nom.victims) == 0 {
		go s.bindNominated(key, nom)
	}
}

// evict asks the API server to evict a pod (the same request as EvictV1). A 429 is not retried: while a new
// PodDisruptionBudget is not yet processed the server answers 429 with Retry-After 10 s, which client-go
// would wait for and retry up to 10 times; the plan stops at the first refusal instead, and is retried with
// the pod's backoff.
func (s *Server) evict(ctx context.Context, vp *v1.Pod) error { return s.evictRequest(ctx, vp, false) }

// evictRequest is evict, or with dryRun the same request as a dry run: the API server checks the
// PodDisruptionBudgets and evicts nothing (preempt_gang.go).
func (s *Server) evictRequest(ctx context.Context, vp *v1.Pod, dryRun bool) error {
	ev := &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Namespace: vp.Namespace, Name: vp.Name},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &vp.UID}},
	}
	if dryRun {
		ev.DeleteOptions.DryRun = []string{metav1.DryRunAll}
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

// bindNominated binds a preemptor whose victims are gone, after the re-check of every placement. The
// preemptors that become ready while a re-check runs are re-checked together by the next one: their victims
// go in bursts (a plan's evictions), and each re-check reads every bound pod.
func (s *Server) bindNominated(key string, nom *nomination) {
	s.mu.Lock()
	s.readyNoms = append(s.readyNoms, readyNomination{key, nom})
	start := !s.bindingNoms
	s.bindingNoms = true
	s.mu.Unlock()
	if !start {
		return // the running binder takes it
	}
	for {
		s.mu.Lock()
		ready := s.readyNoms
		s.readyNoms = nil
		if len(ready) == 0 {
			s.bindingNoms = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		s.bindReadyNominations(ready)
	}
}

// readyNomination is a preemptor whose victims are gone, waiting for its re-check.
type readyNomination struct {
	key string
	nom *nomination
}

// bindReadyNominations re-checks preemptors whose victims are gone, together, and sends those that still fit
// to the bind workers.
func (s *Server) bindReadyNominations(ready []readyNomination) {
	var bindings []scheduler.Binding
	var pods []*v1.Pod
	inBatch := map[string]bool{}
	s.mu.Lock()
	for _, r := range ready {
		if s.nominated[r.key] != r.nom {
			continue
		}
		s.dropNominationLocked(r.key)
		bindings = append(bindings, scheduler.Binding{Pod: r.key, Node: r.nom.node})
		pods = append(pods, r.nom.pod)
		inBatch[r.key] = true
	}
	// The re-check leaves out the preemptors still waiting for victims: each is assumed on its node while
	// its victims are still there, which counts the room twice. A later plan that nominated another pod to
	// one of these nodes saw this one assumed there, so binding this one keeps that plan valid.
	var waiting []string
	for k, other := range s.nominated {
		if !inBatch[k] && len(other.victims) > 0 {
			waiting = append(waiting, k)
		}
	}
	s.mu.Unlock()
	if len(bindings) == 0 {
		return
	}
	ctxp := s.loopCtx.Load()
	if ctxp == nil || (*ctxp).Err() != nil || !s.leader.Load() {
		for _, p := range pods {
			s.requeue(p)
		}
		return
	}
	ctx := *ctxp
	with := func(f func(*scheduler.State)) { s.brain.WithPolicyStateWithout(waiting, f) }
	for _, j := range s.recheckOn(with, bindings) {
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
