package bench

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/weavesql/weave/cmd/weave-scheduler/app"
	"github.com/weavesql/weave/e2e/harness"
	"github.com/weavesql/weave/scheduler"
)

// Scheduler names: kube-scheduler takes the pods with the default name, weave-scheduler its own.
const (
	kubeName  = "kube-scheduler"
	weaveName = "weave-scheduler"
)

// podObject turns a pod of the scheduler's model (the workload generators of scheduler/sim) into the
// Kubernetes pod that expresses the same thing: requests (CPU in millicores, memory in MiB), labels,
// required pod (anti-)affinity terms, node selector, priority, an owner reference for its group, and a
// grace period of 0 (there is no kubelet to finish a graceful deletion).
func podObject(sp scheduler.Pod, ns, schedulerName string) *v1.Pod {
	req := v1.ResourceList{}
	if sp.CPU > 0 {
		req[v1.ResourceCPU] = *resource.NewMilliQuantity(sp.CPU, resource.DecimalSI)
	}
	if sp.Memory > 0 {
		req[v1.ResourceMemory] = *resource.NewQuantity(sp.Memory<<20, resource.BinarySI)
	}
	labels := map[string]string{}
	for k, v := range sp.Labels {
		labels[k] = v
	}
	if sp.Group != "" {
		labels["group"] = sp.Group
	}
	name := strings.ReplaceAll(sp.Name, "_", "-")
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: v1.PodSpec{
			SchedulerName:                 schedulerName,
			NodeSelector:                  sp.NodeSelector,
			Priority:                      ptr.To(int32(sp.Priority)),
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []v1.Container{{
				Name: "c", Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: req},
			}},
		},
	}
	if sp.Group != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: sp.Group,
			UID: types.UID(uuid.NewSHA1(uuid.NameSpaceOID, []byte(ns+"/"+sp.Group)).String()), Controller: ptr.To(true)}}
	}
	if len(sp.RequiredNodeAffinity) > 0 {
		var terms []v1.NodeSelectorTerm
		for _, reqs := range sp.RequiredNodeAffinity {
			var t v1.NodeSelectorTerm
			for _, q := range reqs {
				t.MatchExpressions = append(t.MatchExpressions, v1.NodeSelectorRequirement{Key: q.Key, Operator: v1.NodeSelectorOperator(q.Operator), Values: q.Values})
			}
			terms = append(terms, t)
		}
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms}}}
	}
	for _, sc := range sp.Spread {
		when := v1.ScheduleAnyway
		if sc.Hard {
			when = v1.DoNotSchedule
		}
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, v1.TopologySpreadConstraint{
			MaxSkew: int32(sc.MaxSkew), TopologyKey: sc.TopologyKey, WhenUnsatisfiable: when,
			LabelSelector: metaSelector(sc.Selector)})
	}
	var aff, anti []v1.PodAffinityTerm
	for _, t := range sp.Affinity {
		if !t.Required {
			continue
		}
		term := v1.PodAffinityTerm{
			LabelSelector: metaSelector(t.Selector), Namespaces: t.Namespaces,
			NamespaceSelector: metaSelector(t.NamespaceSelector), TopologyKey: t.TopologyKey,
		}
		if t.Anti {
			anti = append(anti, term)
		} else {
			aff = append(aff, term)
		}
	}
	if len(aff)+len(anti) > 0 {
		if p.Spec.Affinity == nil {
			p.Spec.Affinity = &v1.Affinity{}
		}
		if len(aff) > 0 {
			p.Spec.Affinity.PodAffinity = &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: aff}
		}
		if len(anti) > 0 {
			p.Spec.Affinity.PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: anti}
		}
	}
	return p
}

// createPods creates the pods with a few requests in flight, roughly in order, and returns when each
// Create was sent.
func createPods(ctx context.Context, c *harness.Cluster, pods []*v1.Pod, workers int) (map[string]time.Time, error) {
	var mu sync.Mutex
	sent := make(map[string]time.Time, len(pods))
	var first error
	var wg sync.WaitGroup
	next := make(chan *v1.Pod)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				t := time.Now()
				_, err := c.Client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
				mu.Lock()
				sent[p.Name] = t
				if err != nil && first == nil {
					first = fmt.Errorf("create pod %s/%s: %w", p.Namespace, p.Name, err)
				}
				mu.Unlock()
			}
		}()
	}
	for _, p := range pods {
		next <- p
	}
	close(next)
	wg.Wait()
	return sent, first
}

// deletePods deletes every pod of ns and waits until they are gone.
func deletePods(ctx context.Context, c *harness.Cluster, ns string) error {
	if err := c.Client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{}); err != nil {
		return err
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		l, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err == nil && len(l.Items) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pods of %s not deleted after 3m", ns)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sched is one scheduler started for a run.
type sched struct {
	name  string
	stop  func()
	weave *weaveProbe // nil for kube-scheduler
}

// startKube starts the real kube-scheduler.
func startKube(ctx context.Context, c *harness.Cluster) (*sched, error) {
	kctx, cancel := context.WithCancel(ctx)
	if err := c.StartKubeScheduler(kctx); err != nil {
		cancel()
		return nil, fmt.Errorf("start kube-scheduler: %w", err)
	}
	return &sched{name: kubeName, stop: cancel}, nil
}

// batching describes weave-scheduler's batching rule in the benchmarks, for the reports' setups.
func (r *Runner) batching() string {
	cfg := r.weaveConfig(100)
	linger := "burst linger " + scheduler.DefaultBurstLinger.String()
	switch {
	case cfg.BurstLinger < 0:
		linger = "burst linger off"
	case cfg.BurstLinger > 0:
		linger = "burst linger " + cfg.BurstLinger.String()
	}
	return fmt.Sprintf("batch wait %v, %s", cfg.BatchWait, linger)
}

// weaveConfig is weave-scheduler's configuration in the benchmarks: the defaults (b = 100, no batch
// wait, a 50 ms burst linger, 2 s solver timeout) without leader election or HTTP server; batch sets b,
// Config.BatchWait the batch wait and Config.BurstLinger the linger.
func (r *Runner) weaveConfig(batch int) app.Config {
	cfg := app.DefaultConfig()
	if r.cfg.BatchWait != 0 {
		cfg.BatchWait = r.cfg.BatchWait
	}
	if r.cfg.BurstLinger != 0 {
		cfg.BurstLinger = r.cfg.BurstLinger
	}
	cfg.LeaderElect = false
	cfg.Serving = nil
	cfg.Identity = "weave-bench"
	cfg.BatchSize = batch
	cfg.InitialBackoff = 200 * time.Millisecond
	cfg.MaxBackoff = 2 * time.Second
	return cfg
}

// startWeave starts weave-scheduler in-process with a probe recording every batch.
func startWeave(ctx context.Context, c *harness.Cluster, cfg app.Config, log *slog.Logger) (*sched, error) {
	return startWeaveProbe(ctx, c, cfg, log, true)
}

// startWeaveProbe is startWeave; with perBatch false the probe records no batch (Batches is empty): the
// latency experiment reads the metrics before and after each of its runs instead.
func startWeaveProbe(ctx context.Context, c *harness.Cluster, cfg app.Config, log *slog.Logger, perBatch bool) (*sched, error) {
	s, err := app.New(cfg, c.Config, log)
	if err != nil {
		return nil, fmt.Errorf("start weave-scheduler: %w", err)
	}
	probe := &weaveProbe{srv: s, start: time.Now()}
	if perBatch {
		s.Hooks.AfterBatch = probe.afterBatch
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var runErr error
	go func() {
		defer close(done)
		if err := s.Run(wctx); err != nil && wctx.Err() == nil {
			runErr = err
		}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for !s.Ready() {
		if time.Now().After(deadline) {
			cancel()
			<-done
			return nil, fmt.Errorf("weave-scheduler informers did not sync in 60s (%v)", runErr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &sched{name: weaveName, stop: func() { cancel(); <-done; probe.finish() }, weave: probe}, nil
}

// Batch is one placement batch of weave-scheduler, as its AfterBatch hook reports it: Weave's phases and
// model size (the batch's weave.Stats, which the phase histograms and model gauges also record), the batch
// size and its whole time.
type Batch struct {
	At                                    time.Duration // when the batch started, since the scheduler started
	Size                                  int           // pods in the batch (placed or not)
	Placed                                int
	Fetch, Ground, Solve, Extract, Verify time.Duration
	Total                                 time.Duration // the whole batch incl. re-check and queueing the bindings
	Variables, Constraints                int
	Speculated                            bool // placed from a speculation: the phases are of its solve, done before
}

// solvedBatches leaves out the batches placed from a speculation: their phases are of a solve that ran
// before them, while the scheduler was idle, and no pod waited for it.
func solvedBatches(bs []Batch) []Batch {
	var out []Batch
	for _, b := range bs {
		if !b.Speculated {
			out = append(out, b)
		}
	}
	return out
}

// Decide is the time Weave took to decide the batch: fetch + ground + solve + extract + verify (the paper's
// "solving time per batch").
func (b Batch) Decide() time.Duration { return b.Fetch + b.Ground + b.Solve + b.Extract + b.Verify }

// weaveProbe records weave-scheduler's batches.
type weaveProbe struct {
	srv   *app.Server
	start time.Time

	mu      sync.Mutex
	batches []Batch
	end     promText // the metrics once stopped
}

func (p *weaveProbe) scrape() promText {
	return scrapeHandler(func(rec *httptest.ResponseRecorder) {
		p.srv.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	})
}

const phaseSum = `weave_scheduler_batch_phase_duration_seconds_sum{phase="%s"}`

// afterBatch records a batch. It runs on the loop's path: it copies the report and nothing more (a scrape
// of the metrics here took 10 ms a batch, which kube-scheduler's runs do not pay).
func (p *weaveProbe) afterBatch(r app.BatchReport) {
	st := r.Stats
	b := Batch{
		At: r.Start.Sub(p.start), Size: r.Size, Placed: r.Placed,
		Fetch: st.Fetch, Ground: st.Ground, Solve: st.Solve, Extract: st.Extract, Verify: st.Verify,
		Total: r.Total, Variables: st.Variables, Constraints: st.Constraints, Speculated: r.Speculated,
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.batches = append(p.batches, b)
}

// finish reads the metrics once the scheduler has stopped (bindMean).
func (p *weaveProbe) finish() {
	now := p.scrape()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.end = now
}

// Batches returns the batches recorded so far.
func (p *weaveProbe) Batches() []Batch {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Batch(nil), p.batches...)
}

// bindMean is the mean Binding request latency over the run.
func (p *weaveProbe) bindMean() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.end // nil before finish: no binding counted
	s, n := m[fmt.Sprintf(phaseSum, "bind")], m[`weave_scheduler_batch_phase_duration_seconds_count{phase="bind"}`]
	if n == 0 {
		return 0
	}
	return time.Duration(s / n * float64(time.Second))
}

// placedSeries turns first-bound times into a step series: the k-th pod bound at t, sorted.
func placedSeries(bound map[string]time.Time, t0 time.Time) []float64 {
	ts := make([]float64, 0, len(bound))
	for _, at := range bound {
		ts = append(ts, at.Sub(t0).Seconds())
	}
	sort.Float64s(ts)
	return ts
}

// waitBound waits until want pods of w are bound; on timeout it fails naming the experiment and the counts.
func waitBound(ctx context.Context, w *harness.BindWatch, want int, timeout time.Duration, what string, bar *progress) error {
	deadline := time.Now().Add(timeout)
	for {
		n := len(w.Bound())
		bar.set(n)
		if n >= want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %d of %d pods bound after %v", what, n, want, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitSettled waits until all want pods are bound, or the bound count has not changed for quiet (the
// scheduler gave up on the rest), or timeout; it returns the count.
func waitSettled(ctx context.Context, w *harness.BindWatch, want int, quiet, timeout time.Duration, bar *progress) (int, error) {
	deadline := time.Now().Add(timeout)
	last, since := -1, time.Now()
	for {
		n := len(w.Bound())
		bar.set(n)
		if n >= want {
			return n, nil
		}
		if n != last {
			last, since = n, time.Now()
		}
		if time.Since(since) >= quiet || time.Now().After(deadline) {
			return n, nil
		}
		select {
		case <-ctx.Done():
			return n, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func isGoneOrConflict(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.IsConflict(err)
}

// metaSelector writes a scheduler package selector as the API's (nil stays nil).
func metaSelector(s *scheduler.LabelSelector) *metav1.LabelSelector {
	if s == nil {
		return nil
	}
	out := &metav1.LabelSelector{MatchLabels: s.MatchLabels}
	for _, r := range s.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, metav1.LabelSelectorRequirement{Key: r.Key, Operator: metav1.LabelSelectorOperator(r.Operator), Values: r.Values})
	}
	return out
}
