package bench

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/plot"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weavesql/weave/e2e/harness"
	"github.com/weavesql/weave/scheduler"
	"github.com/weavesql/weave/scheduler/sim"
)

// latencyRate is one arrival rate of the latency experiment; perSecond 0 is a burst (as fast as the
// client goes, burstInFlight Creates at a time).
type latencyRate struct {
	name      string
	perSecond float64
}

var latencyRates = []latencyRate{{"10 pods/s", 10}, {"100 pods/s", 100}, {"burst", 0}}

// latencyWorkload is one workload of the latency experiment: its pods in creation order.
type latencyWorkload struct {
	name string
	pods func() []scheduler.Pod
}

// latencyWorkloads: pods that fit any node alone (scheduler_perf's pod-default: what responsiveness is
// about), then nginx+redis as users write it (inter-pod affinity: nginx-i fits only once redis-i is
// placed, so a scheduler that tries nginx-i first also shows its requeueing).
func latencyWorkloads(apps, per int) []latencyWorkload {
	return []latencyWorkload{
		{"basic", func() []scheduler.Pod {
			var out []scheduler.Pod
			for i := range 2 * apps * per {
				out = append(out, defaultPod(fmt.Sprintf("pod-%d", i)))
			}
			return out
		}},
		{"nginx+redis", func() []scheduler.Pod { return interleaved(sim.NginxRedis(apps, per, per), apps, per) }},
	}
}

// burstInFlight is how many Creates a burst keeps in flight (TestThroughput's and TestLiveNginxRedis's 32).
const burstInFlight = 32

// latencyRun is one scheduler at one rate in one run.
type latencyRun struct {
	run       int
	scheduler string
	workload  string
	rate      latencyRate
	pods      int
	lat       []float64  // ms, Create sent → binding seen by the watch, of the pods bound, in creation order
	names     []string   // the pods of lat
	batches   batchStats // weave-scheduler's batches while the run's pods were created and bound
	err       error
}

// batchStats sums weave-scheduler's batches over a run, from its metrics scraped before and after (a
// scrape per batch would sit on the loop's path).
type batchStats struct {
	n          int     // batches
	speculated int     // of which placed from a speculation (--speculate): no solve of their own
	ahead      int     // pods placed on arrival while an extension of a speculation solved: no batch
	pods       float64 // pods in them
	decide     float64 // ms, fetch + ground + solve + extract + verify, of the batches that solved
	total      float64 // ms, the whole batch (solve, re-check, queueing the bindings, triage)
}

func batchDelta(before, after promText) batchStats {
	d := func(k string) float64 { return after[k] - before[k] }
	var decide float64
	for _, ph := range []string{"fetch", "ground", "solve", "extract", "verify"} {
		decide += d(fmt.Sprintf(phaseSum, ph))
	}
	return batchStats{n: int(d("weave_scheduler_batch_size_count")), speculated: int(d("weave_scheduler_speculations_used_total")),
		ahead: int(d("weave_scheduler_pods_placed_ahead_total")),
		pods:  d("weave_scheduler_batch_size_sum"), decide: decide * 1000, total: d(fmt.Sprintf(phaseSum, "total")) * 1000}
}

func (b batchStats) meanSize() float64 {
	if b.n == 0 {
		return 0
	}
	return b.pods / float64(b.n)
}

// meanDecide is the mean decide time of the batches that solved (not those placed from a speculation).
func (b batchStats) meanDecide() float64 {
	if b.n <= b.speculated {
		return 0
	}
	return b.decide / float64(b.n-b.speculated)
}

func (b batchStats) meanTotal() float64 {
	if b.n == 0 {
		return 0
	}
	return b.total / float64(b.n)
}

// runLatency is the responsiveness experiment (issue 24): the nginx+redis workload as users write it (per app
// redis pods anti-affine to one another, nginx pods anti-affine to one another and affine to their app's
// redis, hostname topology; the pods of an app created in the order redis-0, nginx-0, redis-1, ...) is
// created at 10 pods/s, at 100 pods/s and as a burst on a cluster of 500 nodes, once per scheduler, and
// each pod is timed from its Create request to a watch seeing it bound. Each run starts both schedulers
// afresh, one at a time, on the empty cluster; the runs alternate which goes first.
func runLatency(ctx context.Context, r *Runner) error {
	nodes := pick(r, 500, 100, 10)
	if len(r.cfg.Nodes) > 0 {
		nodes = r.cfg.Nodes[0]
	}
	runs := pick(r, 3, 1, 1)
	if r.cfg.Runs > 0 {
		runs = r.cfg.Runs
	}
	apps, per := pick(r, 5, 3, 2), pick(r, 20, 10, 3) // 200, 60, 12 pods per rate
	s := r.section(8)
	s.Paper = "Not in the paper. Issue 24: a pod waits no longer under weave-scheduler than under kube-scheduler, at any load: " +
		"at every rate, weave-scheduler's p50 and p99 at most kube-scheduler's, or within 5 ms where kube-scheduler's are a few milliseconds " +
		"(medians of three alternated runs)."
	s.Setup = fmt.Sprintf("%d nodes of 4 CPU / 32 GiB in three zones. Two workloads of %[5]d pods per rate: basic, pods of 100m CPU / 500 MiB "+
		"and no constraint (scheduler_perf's pod-default); nginx+redis as users write it: %[2]d apps × (%[3]d redis + %[4]d nginx), "+
		"redis anti-affine to their app's redis, nginx anti-affine to their app's nginx and affine to its redis (hostname; two-label selectors, "+
		"ReplicaSet owners), created in the order redis-0, nginx-0, redis-1, ... of every app. Rates: 10 pods/s, 100 pods/s, and a burst (%[6]d Creates "+
		"in flight). Each pod is timed from its Create request to a watch (an informer of the bench) seeing it bound. %[7]d run(s); each run starts "+
		"kube-scheduler and weave-scheduler in turn (alternating which goes first), each on the empty cluster, the other stopped, and runs "+
		"every workload at every rate. weave-scheduler: its defaults (b = 100, %[8]s).",
		nodes, apps, per, per, 2*apps*per, burstInFlight, runs, r.batching())

	c, stop, err := r.cluster(ctx)
	if err != nil {
		return err
	}
	defer stop()
	t0 := time.Now()
	if err := createZonedNodes(ctx, c, nodes, r.bar(fmt.Sprintf("latency: create %d nodes", nodes), nodes)); err != nil {
		return err
	}
	r.statusf("   %d nodes created in %v", nodes, time.Since(t0).Round(time.Second))

	var results []latencyRun
	for run := 1; run <= runs; run++ {
		order := r.schedulers()
		if run%2 == 0 && len(order) == 2 {
			order[0], order[1] = order[1], order[0]
		}
		for _, name := range order {
			res, err := latencyScheduler(ctx, r, c, run, name, apps, per)
			results = append(results, res...)
			if err != nil {
				return err
			}
		}
	}
	return rateLatencyReport(r, s, results, runs)
}

// latencyScheduler starts one scheduler and runs every rate with it.
func latencyScheduler(ctx context.Context, r *Runner, c *harness.Cluster, run int, name string, apps, per int) ([]latencyRun, error) {
	var sch *sched
	var err error
	if name == kubeName {
		sch, err = startKube(ctx, c)
	} else {
		sch, err = startWeaveProbe(ctx, c, r.weaveConfig(100), r.log, false)
	}
	if err != nil {
		return nil, err
	}
	defer sch.stop()
	var out []latencyRun
	for wi, w := range latencyWorkloads(apps, per) {
		for i, rate := range latencyRates {
			res := latencyRun{run: run, scheduler: name, workload: w.name, rate: rate, pods: 2 * apps * per}
			ns := fmt.Sprintf("lat-%d-%s-%d-%d", run, shortName(name), wi, i)
			res.names, res.lat, res.batches, res.err = latencyOne(ctx, r, c, ns, name, sch, rate, w)
			if res.err != nil {
				return append(out, res), fmt.Errorf("latency (run %d, %s, %s, %s): %w", run, name, w.name, rate.name, res.err)
			}
			r.statusf("   run %d %s %s %s: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms", run, shortName(name), w.name, rate.name,
				percentile(res.lat, 50), percentile(res.lat, 90), percentile(res.lat, 99))
			out = append(out, res)
		}
	}
	return out, nil
}

// latencyOne creates the workload in namespace ns at one rate and returns the pods bound and
// their latencies in ms, in creation order.
func latencyOne(ctx context.Context, r *Runner, c *harness.Cluster, ns, name string, sch *sched, rate latencyRate, w latencyWorkload) ([]string, []float64, batchStats, error) {
	if err := c.CreateNamespace(ctx, ns); err != nil {
		return nil, nil, batchStats{}, err
	}
	schedName := ""
	if name == weaveName {
		schedName = weaveName
	}
	var pods []*v1.Pod
	for _, sp := range w.pods() {
		pods = append(pods, podObject(sp, ns, schedName))
	}
	watch, err := c.WatchBindings(ctx, ns)
	if err != nil {
		return nil, nil, batchStats{}, err
	}
	defer watch.Stop()
	var before promText
	if sch.weave != nil {
		before = sch.weave.scrape()
	}
	bar := r.bar(fmt.Sprintf("latency %s %s %s", shortName(name), w.name, rate.name), len(pods))
	sent, err := createPaced(ctx, c, pods, rate.perSecond)
	if err == nil {
		err = waitMeasured(ctx, watch, sent, 3*time.Minute, "latency", bar)
	}
	bar.done()
	bound := watch.Bound()
	var names []string
	var lat []float64
	for _, p := range pods {
		at, sentOK := sent[p.Name]
		if b, ok := bound[p.Name]; ok && sentOK {
			names, lat = append(names, p.Name), append(lat, ms(b.Sub(at)))
		}
	}
	var batches batchStats
	if sch.weave != nil {
		batches = batchDelta(before, sch.weave.scrape())
	}
	if derr := deletePods(ctx, c, ns); err == nil {
		err = derr
	}
	return names, lat, batches, err
}

// interleaved orders NginxRedis(apps, per, per) (per app: its redis pods, then its nginx pods) as users'
// Deployments grow side by side: redis-0 and nginx-0 of every app, then redis-1 and nginx-1, ...
func interleaved(pods []scheduler.Pod, apps, per int) []scheduler.Pod {
	var out []scheduler.Pod
	for i := range per {
		for a := range apps {
			out = append(out, pods[a*2*per+i], pods[a*2*per+per+i])
		}
	}
	return out
}

// createPaced creates pods at perSecond pods per second (each Create on its own goroutine, so a slow
// request does not delay the next), or as a burst with burstInFlight requests in flight when perSecond is
// 0, and returns when each Create request was sent.
func createPaced(ctx context.Context, c *harness.Cluster, pods []*v1.Pod, perSecond float64) (map[string]time.Time, error) {
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	sent := make(map[string]time.Time, len(pods))
	inFlight := 256
	if perSecond == 0 {
		inFlight = burstInFlight
	}
	sem := make(chan struct{}, inFlight)
	start := time.Now()
	for i, p := range pods {
		if perSecond > 0 {
			at := start.Add(time.Duration(float64(i) / perSecond * float64(time.Second)))
			if d := time.Until(at); d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
					return sent, ctx.Err()
				}
			}
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			t := time.Now()
			_, err := c.Client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
			mu.Lock()
			defer mu.Unlock()
			sent[p.Name] = t
			if err != nil && first == nil {
				first = fmt.Errorf("create pod %s/%s: %w", p.Namespace, p.Name, err)
			}
		}()
	}
	wg.Wait()
	return sent, first
}

// latencyMet is the verdict for one percentile: weave's at most kube's, or within 5 ms of it where
// kube's is a few milliseconds (under 20 ms).
func latencyMet(weave, kube float64) bool {
	return weave <= kube || (kube < 20 && weave <= kube+5)
}

func rateLatencyReport(r *Runner, s *Section, results []latencyRun, runs int) error {
	var rows, podRows [][]string
	type key struct{ sched, workload, rate string }
	type wr struct{ workload, rate string }
	per := map[key][][3]float64{} // p50, p90, p99 of each run
	pooled := map[key][]float64{}
	batchSizes := map[wr][]float64{}
	batchDecide := map[wr][]float64{}
	batchSpec := map[wr][]float64{} // weave batches placed from a speculation, % of a run's
	var workloads []string
	for _, res := range results {
		if !slices.Contains(workloads, res.workload) {
			workloads = append(workloads, res.workload)
		}
		k := key{res.scheduler, res.workload, res.rate.name}
		p := [3]float64{percentile(res.lat, 50), percentile(res.lat, 90), percentile(res.lat, 99)}
		per[k] = append(per[k], p)
		pooled[k] = append(pooled[k], res.lat...)
		errText := ""
		if res.err != nil {
			errText = oneLine(res.err.Error())
		}
		w := wr{res.workload, res.rate.name}
		bs := res.batches
		if res.scheduler == weaveName {
			batchSizes[w] = append(batchSizes[w], bs.meanSize())
			batchDecide[w] = append(batchDecide[w], bs.meanDecide())
			if bs.n > 0 {
				batchSpec[w] = append(batchSpec[w], 100*float64(bs.speculated)/float64(bs.n))
			}
		}
		rows = append(rows, []string{itoa(res.run), res.scheduler, res.workload, res.rate.name, itoa(res.pods), itoa(len(res.lat)),
			f1(p[0]), f1(p[1]), f1(p[2]), f1(percentile(res.lat, 100)), itoa(bs.n), itoa(bs.speculated), itoa(bs.ahead), f1(bs.meanSize()), f1(bs.meanDecide()), f1(bs.meanTotal()), errText})
		for i, l := range res.lat {
			podRows = append(podRows, []string{itoa(res.run), res.scheduler, res.workload, res.rate.name, res.names[i], fmt.Sprintf("%.2f", l)})
		}
	}
	if err := r.writeCSV(s, "latency_runs", []string{"run", "scheduler", "workload", "rate", "pods", "bound", "p50_ms", "p90_ms", "p99_ms", "max_ms",
		"weave_batches", "weave_speculated_batches", "weave_placed_ahead", "weave_batch_size_mean", "weave_decide_mean_ms", "weave_batch_total_mean_ms", "error"}, rows); err != nil {
		return err
	}
	if err := r.writeCSV(s, "latency_pods", []string{"run", "scheduler", "workload", "rate", "pod", "latency_ms"}, podRows); err != nil {
		return err
	}
	med := func(k key, i int) float64 {
		var xs []float64
		for _, p := range per[k] {
			xs = append(xs, p[i])
		}
		return median(xs)
	}
	each := func(k key, i int) string {
		var xs []string
		for _, p := range per[k] {
			xs = append(xs, f1(p[i]))
		}
		return strings.Join(xs, ", ")
	}
	var trows [][]string
	for _, wl := range workloads {
		for _, rate := range latencyRates {
			k, w := key{kubeName, wl, rate.name}, key{weaveName, wl, rate.name}
			if len(per[k]) == 0 || len(per[w]) == 0 {
				continue
			}
			verdict := "yes"
			for i := range 3 {
				if i != 1 && !latencyMet(med(w, i), med(k, i)) { // p50 and p99 decide
					verdict = "no"
				}
			}
			b := wr{wl, rate.name}
			trows = append(trows, []string{wl, rate.name,
				f1(med(k, 0)), f1(med(k, 1)), f1(med(k, 2)),
				f1(med(w, 0)), f1(med(w, 1)), f1(med(w, 2)),
				f1(median(batchSizes[b])), f1(median(batchDecide[b])), f1(median(batchSpec[b])), verdict})
			s.Findings = append(s.Findings, fmt.Sprintf("%s, %s, each run (ms): kube-scheduler p50 %s, p99 %s; weave-scheduler p50 %s, p99 %s.",
				wl, rate.name, each(k, 0), each(k, 2), each(w, 0), each(w, 2)))
		}
	}
	s.Tables = append(s.Tables, table([]string{"workload", "rate", "kube p50 (ms)", "kube p90", "kube p99", "weave p50 (ms)", "weave p90", "weave p99",
		"weave pods per batch (mean)", "weave decide per solved batch (mean, ms)", "weave batches from a speculation (%)", "met"}, trows))
	s.Findings = append(s.Findings, fmt.Sprintf("Medians over %d run(s); met: weave-scheduler's p50 and p99 at most kube-scheduler's, or within 5 ms of them where kube-scheduler's are under 20 ms.", runs))
	for _, wl := range workloads {
		var ss []series
		for ri, rate := range latencyRates {
			for _, name := range []string{kubeName, weaveName} {
				xs := append([]float64(nil), pooled[key{name, wl, rate.name}]...)
				if len(xs) == 0 {
					continue
				}
				sort.Float64s(xs)
				ys := make([]float64, len(xs))
				for i := range xs {
					xs[i] = max(xs[i], 0.1) // the log axis
					ys[i] = float64(i+1) / float64(len(xs))
				}
				ss = append(ss, series{name: fmt.Sprintf("%s, %s", shortName(name), rate.name), xs: xs, ys: ys, dashed: name == kubeName, color: ri + 1})
			}
		}
		name := "latency_cdf_" + strings.NewReplacer("+", "_", " ", "_").Replace(wl)
		if err := r.lineFigure(s, name, wl+": Create → bound, per pod (solid: weave-scheduler, dashed: kube-scheduler)", "latency (ms)", "fraction of pods",
			ss, func(p *plot.Plot) {
				logX(p)
				p.Y.Min, p.Y.Max = 0, 1
				p.Legend.Top = false
				p.Legend.Left = false
			}); err != nil {
			return err
		}
	}
	return nil
}
