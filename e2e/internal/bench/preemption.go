package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"gonum.org/v1/plot"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/weavesql/weave/e2e/harness"
	"github.com/weavesql/weave/scheduler"
)

// prioGroup is one of experiment 4's priority groups: a replica set of pods of one priority, created at
// a given time; the bench's controller keeps its pod count (recreating evicted or preempted pods pending).
type prioGroup struct {
	name     string
	priority int32
	replicas int
	at       time.Duration
}

// podTrace is what the bench saw of one pod, on its own clock: when its Create was sent and returned, and
// when a watch event first showed it bound, Running, and terminating or deleted (zero: not seen).
type podTrace struct {
	name                 string
	group                string
	priority             int32
	sent, created        time.Time
	bound, running, gone time.Time
	markedRunning        bool // the kubelet's status update was sent
	replaced             bool // the controller created its replacement
}

// runChange is a change of the number of Running pods of one priority, seen in a watch event.
type runChange struct {
	t       time.Duration // since the first group's burst
	running map[int32]int // every priority's count after the change
}

// burst is when a group's Creates were sent: the first one sent, the last one returned.
type burst struct{ start, end time.Time }

// preemptRun is one scheduler's run of experiment 4.
type preemptRun struct {
	t0      time.Time
	traces  []*podTrace // every pod created, in order of creation
	changes []runChange
	bursts  map[string]burst
	high    prioGroup
	done    time.Time // the last high-priority pod seen Running
}

// notConverged is a replay whose high-priority pods did not all run before the timeout; run holds what
// happened until then (done is the timeout).
type notConverged struct {
	msg string
	run *preemptRun
}

func (e *notConverged) Error() string { return e.msg }

// convergence returns the time from the high group's arrival until all its pods ran: from its last Create's
// return (the burst over) and from its first Create sent.
func (r *preemptRun) convergence() (fromEnd, fromStart time.Duration) {
	b := r.bursts[r.high.name]
	return r.done.Sub(b.end), r.done.Sub(b.start)
}

// highLatencies returns, for each pod of the high group's burst, the time from its Create sent until it
// was seen bound and Running.
func (r *preemptRun) highLatencies() (bound, running []float64) {
	for _, tr := range r.traces {
		if tr.group != r.high.name || tr.running.IsZero() {
			continue
		}
		bound = append(bound, tr.bound.Sub(tr.sent).Seconds())
		running = append(running, tr.running.Sub(tr.sent).Seconds())
	}
	return bound, running
}

// runPreemption is experiment 4: three priority groups, each of which alone fills the cluster, arrive one
// after the other (low, medium, high); only the high-priority pods fit in the end. A stand-in kubelet marks
// bound pods Running, a stand-in ReplicaSet controller recreates the pods that preemption removed, both on
// watch events; the run ends when every high-priority pod runs.
func runPreemption(ctx context.Context, r *Runner) error {
	nodes := pick(r, 20, 10, 3)
	per := 2 * nodes // pods of 2 CPU per group: each group alone fills the 4-CPU nodes
	gap := pick(r, 10*time.Second, 5*time.Second, 2*time.Second)
	timeout := pick(r, 5*time.Minute, 3*time.Minute, 90*time.Second)
	groups := []prioGroup{{"low", 1, per, 0}, {"mid", 2, per, gap}, {"high", 3, per, 2 * gap}}

	s := r.section(4)
	s.Paper = "Three priority groups (the workload of kubernetes issue 70622) sized so that only the highest-priority pods fit. kube-scheduler takes almost 100 s to place all high-priority pods; Weave just under 50 s (2× faster)."
	s.Setup = fmt.Sprintf("%d nodes of 4 CPU; three groups of %d pods of 2 CPU (each group alone fills the cluster), priorities 1, 2, 3, "+
		"each created as a burst (all its Creates at once) at t = 0, %v and %v. On watch events, a stand-in kubelet marks bound pods Running "+
		"and a stand-in ReplicaSet controller recreates, pending, the pods of a group that are deleted or evicted. "+
		"weave-scheduler (b = 100) evicts through the Eviction API, kube-scheduler deletes its victims; grace period 0. "+
		"Convergence: from the high group's arrival (its last Create returned; also from its first Create sent) until the watch shows "+
		"every high-priority pod Running. Per-pod times run from the pod's own Create sent to the watch event.", nodes, per, gap, 2*gap)

	c, stop, err := r.cluster(ctx)
	if err != nil {
		return err
	}
	defer stop()
	if _, err := c.CreateNodes(ctx, "node", nodes, harness.NodeSpec{CPU: "4", Memory: "16Gi", Pods: 110}); err != nil {
		return err
	}
	var rows, podRows, trows [][]string
	var ss, zoom []series
	runs, unconverged := map[string]*preemptRun{}, map[string]bool{}
	for _, name := range r.schedulers() {
		ns := "preempt-" + name
		if err := c.CreateNamespace(ctx, ns); err != nil {
			return err
		}
		schedName := ""
		var sch *sched
		if name == weaveName {
			schedName = weaveName
			cfg := r.weaveConfig(100)
			sch, err = startWeave(ctx, c, cfg, r.log)
		} else {
			sch, err = startKube(ctx, c)
		}
		if err != nil {
			return err
		}
		bar := r.bar("exp 4 "+name+" (high running)", per)
		run, err := replayPriorities(ctx, c, ns, schedName, groups, timeout, bar, r.log)
		bar.done()
		sch.stop()
		// kube-scheduler not converging is a result to report (a preemptor it parked as unschedulable can
		// wait for its periodic retry, five minutes); weave-scheduler not converging is a failure.
		var nc *notConverged
		if errors.As(err, &nc) && name == kubeName {
			s.Findings = append(s.Findings, fmt.Sprintf("kube-scheduler did not converge: %v.", nc))
			r.statusf("experiment 4: kube-scheduler did not converge: %v", nc)
			run, err = nc.run, nil
			unconverged[name] = true
		}
		if err != nil {
			return fmt.Errorf("experiment 4 (%s): %w", name, err)
		}
		runs[name] = run
		end := run.done.Sub(run.t0).Seconds()
		for gi, g := range groups {
			xs, ys := []float64{0}, []float64{0}
			for _, ch := range run.changes {
				t := ch.t.Seconds()
				xs, ys = append(xs, t, t), append(ys, ys[len(ys)-1], float64(ch.running[g.priority])) // a step
			}
			xs, ys = append(xs, end), append(ys, ys[len(ys)-1])
			ss = append(ss, series{name: fmt.Sprintf("%s %s (priority %d)", shortName(name), g.name, g.priority), xs: xs, ys: ys, dashed: name == kubeName, color: gi + 1})
		}
		// The high group's arrival, closer: its pods and the medium ones they preempt, from the burst's end.
		arr := run.bursts[run.high.name].end.Sub(run.t0).Seconds()
		for gi, g := range groups[1:] {
			xs, ys := []float64{}, []float64{}
			for _, ch := range run.changes {
				if t := ch.t.Seconds() - arr; t >= -0.05 {
					if len(xs) == 0 {
						xs, ys = append(xs, -0.05), append(ys, float64(prevRunning(run.changes, ch, g.priority)))
					}
					xs, ys = append(xs, t, t), append(ys, ys[len(ys)-1], float64(ch.running[g.priority]))
				}
			}
			zoom = append(zoom, series{name: fmt.Sprintf("%s %s (priority %d)", shortName(name), g.name, g.priority), xs: xs, ys: ys, dashed: name == kubeName, color: gi + 2})
		}
		for _, ch := range run.changes {
			for _, g := range groups {
				rows = append(rows, []string{name, fmt.Sprintf("%.3f", ch.t.Seconds()), g.name, fmt.Sprint(g.priority), itoa(ch.running[g.priority])})
			}
		}
		at := func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return fmt.Sprintf("%.3f", t.Sub(run.t0).Seconds())
		}
		for _, tr := range run.traces {
			podRows = append(podRows, []string{name, tr.name, tr.group, fmt.Sprint(tr.priority), at(tr.sent), at(tr.created), at(tr.bound), at(tr.running), at(tr.gone)})
		}
		fromEnd, fromStart := run.convergence()
		b := run.bursts[run.high.name]
		_, lat := run.highLatencies()
		trows = append(trows, []string{name, fmt.Sprintf("%.2f s", b.start.Sub(run.t0).Seconds()), fmt.Sprintf("%.0f ms", ms(b.end.Sub(b.start))),
			fmt.Sprintf("%.2f s", end), fmt.Sprintf("%.2f s", fromEnd.Seconds()), fmt.Sprintf("%.2f s", fromStart.Seconds()),
			fmt.Sprintf("%.2f s", percentile(lat, 50)), fmt.Sprintf("%.2f s", percentile(lat, 90)), fmt.Sprintf("%.2f s", percentile(lat, 100))})
		r.statusf("   %s: all %d high-priority pods running %v after their arrival (%v after the first Create; t = %.2f s)",
			name, per, fromEnd.Round(time.Millisecond), fromStart.Round(time.Millisecond), end)
		if err := deletePods(ctx, c, ns); err != nil {
			return err
		}
	}
	if err := r.writeCSV(s, "preemption", []string{"scheduler", "t_s", "group", "priority", "running"}, rows); err != nil {
		return err
	}
	if err := r.writeCSV(s, "preemption_pods", []string{"scheduler", "pod", "group", "priority", "create_sent_s", "created_s", "bound_s", "running_s", "gone_s"}, podRows); err != nil {
		return err
	}
	s.Tables = append(s.Tables, table([]string{"scheduler", "high burst sent at t =", "burst's Creates took", "all high-priority pods running at t =",
		"after the burst (convergence)", "after its first Create", "per pod to Running p50", "p90", "max"}, trows))
	kube, weave := runs[kubeName], runs[weaveName]
	if kube != nil && weave != nil && !unconverged[kubeName] {
		ke, ks := kube.convergence()
		we, ws := weave.convergence()
		verdict := "met"
		if ke.Seconds()/we.Seconds() < 2 {
			verdict = "NOT met"
		}
		s.Findings = append(s.Findings, fmt.Sprintf("After the high-priority burst: weave-scheduler converged in %v, kube-scheduler in %v: kube / weave = %.2f "+
			"(%v vs %v from the burst's first Create: %.2f). Paper: ≈50 s vs ≈100 s, 2×; target ≥ 2×: %s.",
			we.Round(time.Millisecond), ke.Round(time.Millisecond), ke.Seconds()/we.Seconds(),
			ws.Round(time.Millisecond), ks.Round(time.Millisecond), ks.Seconds()/ws.Seconds(), verdict))
		_, kl := kube.highLatencies()
		_, wl := weave.highLatencies()
		s.Findings = append(s.Findings, fmt.Sprintf("Per high-priority pod, Create sent → Running: weave-scheduler p50 %.2f s, p90 %.2f s; kube-scheduler p50 %.2f s, p90 %.2f s.",
			percentile(wl, 50), percentile(wl, 90), percentile(kl, 50), percentile(kl, 90)))
	}
	legend := func(p *plot.Plot) {
		p.Y.Min = 0
		p.Legend.Top = false
		p.Legend.Left = true
	}
	if err := r.lineFigure(s, "preemption", "Running pods per priority (solid: weave-scheduler, dashed: kube-scheduler)", "time (s)", "running pods", ss, legend); err != nil {
		return err
	}
	return r.lineFigure(s, "preemption_high", "After the high-priority burst (solid: weave-scheduler, dashed: kube-scheduler)", "time since the burst's last Create returned (s)", "running pods", zoom, legend)
}

// prevRunning is the Running count of priority prio just before change ch.
func prevRunning(changes []runChange, ch runChange, prio int32) int {
	n := 0
	for _, c := range changes {
		if c.t >= ch.t {
			break
		}
		n = c.running[prio]
	}
	return n
}

func shortName(s string) string {
	if s == kubeName {
		return "kube"
	}
	return "weave"
}

// replayer plays the groups' arrivals, the kubelet and the ReplicaSet controller for one run, on watch events.
type replayer struct {
	c         *harness.Cluster
	ns        string
	schedName string
	groups    []prioGroup
	high      prioGroup
	log       *slog.Logger
	bar       *progress
	run       *preemptRun

	mu       sync.Mutex
	byName   map[string]*podTrace
	arrived  map[string]bool // groups whose burst was sent: the controller keeps them at their size
	next     map[string]int  // group → index of its next pod's name (group-k)
	running  map[int32]int
	stopped  bool
	actions  sync.WaitGroup // API calls in flight
	converge chan struct{}  // closed when every high-priority pod runs
	failure  chan error     // the first API error of an action
}

// replayPriorities creates the groups as bursts at their times, plays kubelet and ReplicaSet controller on
// the namespace's watch events, and records every pod's times until every pod of the last group runs.
func replayPriorities(ctx context.Context, c *harness.Cluster, ns, schedName string, groups []prioGroup, timeout time.Duration, bar *progress, log *slog.Logger) (*preemptRun, error) {
	high := groups[len(groups)-1]
	rp := &replayer{c: c, ns: ns, schedName: schedName, groups: groups, high: high, log: log, bar: bar,
		run:    &preemptRun{bursts: map[string]burst{}, high: high},
		byName: map[string]*podTrace{}, arrived: map[string]bool{}, next: map[string]int{}, running: map[int32]int{},
		converge: make(chan struct{}), failure: make(chan error, 1)}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := informers.NewSharedInformerFactoryWithOptions(c.Client, 0, informers.WithNamespace(ns))
	inf := f.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { rp.seen(wctx, obj, false) },
		UpdateFunc: func(_, obj any) { rp.seen(wctx, obj, false) },
		DeleteFunc: func(obj any) { rp.seen(wctx, obj, true) },
	}); err != nil {
		return nil, err
	}
	f.Start(wctx.Done())
	f.WaitForCacheSync(wctx.Done())
	var bursts sync.WaitGroup
	defer func() { // stop acting before the caller deletes the pods, and let the API calls in flight end
		rp.mu.Lock()
		rp.stopped = true
		rp.mu.Unlock()
		cancel()
		bursts.Wait()
		rp.actions.Wait()
		f.Shutdown()
	}()

	rp.run.t0 = time.Now()
	for _, g := range groups {
		bursts.Add(1)
		go func() {
			defer bursts.Done()
			select {
			case <-time.After(time.Until(rp.run.t0.Add(g.at))):
			case <-wctx.Done():
				return
			}
			rp.burst(wctx, g)
		}()
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	select {
	case <-rp.converge:
		return rp.run, nil
	case err := <-rp.failure:
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-deadline.C:
		rp.mu.Lock()
		defer rp.mu.Unlock()
		rp.run.done = time.Now()
		return nil, &notConverged{run: rp.run, msg: fmt.Sprintf("%d of %d high-priority pods running after %v (low %d, mid %d)",
			rp.running[high.priority], high.replicas, timeout, rp.running[groups[0].priority], rp.running[groups[1].priority])}
	}
}

// burst creates all the pods of a group at once and records when the first Create was sent and the last
// returned.
func (rp *replayer) burst(ctx context.Context, g prioGroup) {
	rp.mu.Lock()
	rp.arrived[g.name] = true
	var trs []*podTrace
	for range g.replicas {
		trs = append(trs, rp.newPodLocked(g))
	}
	rp.mu.Unlock()
	rp.log.Info("exp 4 creating", "namespace", rp.ns, "group", g.name, "pods", g.replicas, "t", time.Since(rp.run.t0).Seconds())
	start := time.Now()
	var wg sync.WaitGroup
	for _, tr := range trs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rp.create(ctx, tr)
		}()
	}
	wg.Wait()
	end := time.Now()
	rp.mu.Lock()
	rp.run.bursts[g.name] = burst{start: start, end: end}
	rp.mu.Unlock()
}

// newPodLocked names the next pod of group g and records it.
func (rp *replayer) newPodLocked(g prioGroup) *podTrace {
	tr := &podTrace{name: fmt.Sprintf("%s-%d", g.name, rp.next[g.name]), group: g.name, priority: g.priority}
	rp.next[g.name]++
	rp.byName[tr.name] = tr
	rp.run.traces = append(rp.run.traces, tr)
	return tr
}

// create sends a pod's Create and records when it was sent and returned.
func (rp *replayer) create(ctx context.Context, tr *podTrace) {
	pod := podObject(scheduler.Pod{Name: tr.name, Group: tr.group, CPU: 2000, Memory: 512, Priority: int64(tr.priority)}, rp.ns, rp.schedName)
	sent := time.Now()
	_, err := rp.c.Client.CoreV1().Pods(rp.ns).Create(ctx, pod, metav1.CreateOptions{})
	created := time.Now()
	rp.mu.Lock()
	tr.sent, tr.created = sent, created
	rp.mu.Unlock()
	if err != nil && ctx.Err() == nil {
		rp.fail(fmt.Errorf("create pod %s: %w", tr.name, err))
	}
}

func (rp *replayer) fail(err error) {
	select {
	case rp.failure <- err:
	default:
	}
}

// act runs an API call in the background unless the run has stopped; called with rp.mu held.
func (rp *replayer) actLocked(f func()) {
	if rp.stopped {
		return
	}
	rp.actions.Add(1)
	go func() {
		defer rp.actions.Done()
		f()
	}()
}

// seen handles one watch event of a pod: it records the pod's first time bound, Running, and gone, marks a
// bound pod Running (the kubelet), and replaces a pod that is going (the ReplicaSet controller).
func (rp *replayer) seen(ctx context.Context, obj any, deleted bool) {
	now := time.Now()
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	rp.mu.Lock()
	defer rp.mu.Unlock()
	tr := rp.byName[p.Name]
	if tr == nil {
		return // not the bench's
	}
	if deleted || p.DeletionTimestamp != nil {
		if tr.gone.IsZero() {
			tr.gone = now
			if !tr.running.IsZero() {
				rp.runningLocked(now, tr.priority, -1)
			}
		}
		if !tr.replaced && rp.arrived[tr.group] {
			tr.replaced = true
			g := rp.group(tr.group)
			next := rp.newPodLocked(g)
			rp.actLocked(func() { rp.create(ctx, next) })
		}
		return
	}
	if p.Spec.NodeName != "" && tr.bound.IsZero() {
		tr.bound = now
	}
	if p.Spec.NodeName != "" && p.Status.Phase != v1.PodRunning && !tr.markedRunning {
		tr.markedRunning = true
		name := p.Name
		rp.actLocked(func() { rp.markRunning(ctx, name) })
	}
	if p.Status.Phase == v1.PodRunning && tr.running.IsZero() {
		tr.running = now
		rp.runningLocked(now, tr.priority, +1)
	}
}

func (rp *replayer) group(name string) prioGroup {
	for _, g := range rp.groups {
		if g.name == name {
			return g
		}
	}
	panic("exp 4: unknown group " + name)
}

// runningLocked records a change of the Running count of a priority, and the convergence.
func (rp *replayer) runningLocked(now time.Time, prio int32, delta int) {
	rp.running[prio] += delta
	cp := make(map[int32]int, len(rp.running))
	for k, v := range rp.running {
		cp[k] = v
	}
	rp.run.changes = append(rp.run.changes, runChange{t: now.Sub(rp.run.t0), running: cp})
	if prio == rp.high.priority {
		rp.bar.set(rp.running[prio])
		if rp.running[prio] >= rp.high.replicas && rp.run.done.IsZero() {
			rp.run.done = now
			rp.log.Info("exp 4 converged", "namespace", rp.ns, "t", now.Sub(rp.run.t0).Seconds())
			close(rp.converge)
		}
	}
}

// markRunning is the kubelet: it sets the pod Running and Ready (a status patch, so no conflict with the
// scheduler's writes).
func (rp *replayer) markRunning(ctx context.Context, name string) {
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{
		"phase":      v1.PodRunning,
		"conditions": []map[string]any{{"type": v1.PodReady, "status": v1.ConditionTrue, "lastTransitionTime": metav1.Now()}},
	}})
	_, err := rp.c.Client.CoreV1().Pods(rp.ns).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil && !isGoneOrConflict(err) && ctx.Err() == nil {
		rp.fail(fmt.Errorf("mark pod %s Running: %w", name, err))
	}
}
