package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/plot"
	v1 "k8s.io/api/core/v1"

	"github.com/weavesql/weave/e2e/harness"
	"github.com/weavesql/weave/scheduler"
)

// scaleWorkload mirrors one of the upstream scheduler_perf workloads (test/integration/scheduler_perf,
// config/performance-config.yaml): init pods placed first, then measured pods created with the scheduler
// running.
type scaleWorkload struct {
	name              string
	initPods, measure int
	initPod, podOf    func(i int) scheduler.Pod
	// ref is the reference, by node count: kube-scheduler v1.34's throughput on this machine with
	// upstream scheduler_perf (/work/shared/ENVIRONMENT.md); 0 when not measured there. It has not been
	// measured on v1.37.2, the kube-scheduler the experiment itself runs against weave-scheduler.
	ref map[int]float64
}

const zoneKey = "topology.kubernetes.io/zone"

func defaultPod(name string) scheduler.Pod {
	return scheduler.Pod{Name: name, CPU: 100, Memory: 500} // scheduler_perf's pod-default.yaml
}

func scaleWorkloads(nodes int, r *Runner) []scaleWorkload {
	n := func(full int) int { // the pod counts of scheduler_perf's 500Nodes cases, shrunk in quick modes
		return pick(r, full, max(20, full/5), max(10, full/50))
	}
	basic := scaleWorkload{name: "SchedulingBasic", initPods: n(500), measure: n(1000),
		initPod: func(i int) scheduler.Pod { return defaultPod(fmt.Sprintf("init-%d", i)) },
		podOf:   func(i int) scheduler.Pod { return defaultPod(fmt.Sprintf("pod-%d", i)) },
		ref:     map[int]float64{500: 273, 5000: 135}}
	if nodes >= 5000 {
		basic.initPods = n(1000)
	}
	anti := func(prefix string) func(int) scheduler.Pod {
		return func(i int) scheduler.Pod {
			p := defaultPod(fmt.Sprintf("%s-%d", prefix, i))
			p.Labels = map[string]string{"color": "green"}
			p.Affinity = []scheduler.PodAffinityTerm{{Anti: true, Required: true, Selector: scheduler.SelectLabels(map[string]string{"color": "green"}), TopologyKey: scheduler.LabelHostname}}
			return p
		}
	}
	aff := func(prefix string) func(int) scheduler.Pod {
		return func(i int) scheduler.Pod {
			p := defaultPod(fmt.Sprintf("%s-%d", prefix, i))
			p.Labels = map[string]string{"foo": "bar"}
			p.Affinity = []scheduler.PodAffinityTerm{{Required: true, Selector: scheduler.SelectLabels(map[string]string{"foo": "bar"}), TopologyKey: zoneKey}}
			return p
		}
	}
	nodeAff := func(prefix string) func(int) scheduler.Pod {
		return func(i int) scheduler.Pod {
			p := defaultPod(fmt.Sprintf("%s-%d", prefix, i))
			p.RequiredNodeAffinity = [][]scheduler.NodeRequirement{{{Key: zoneKey, Operator: "In", Values: []string{"zone-0", "zone-1"}}}}
			return p
		}
	}
	spread := func(i int) scheduler.Pod {
		p := defaultPod(fmt.Sprintf("pod-%d", i))
		p.Group = "blue"
		p.Labels = map[string]string{"group": "blue"}
		p.Spread = []scheduler.SpreadConstraint{{TopologyKey: zoneKey, MaxSkew: 5, Hard: true, Selector: scheduler.SelectLabels(p.Labels)}}
		return p
	}
	low := func(i int) scheduler.Pod {
		return scheduler.Pod{Name: fmt.Sprintf("low-%d", i), CPU: 900, Memory: 500, Priority: 1}
	}
	highPod := func(i int) scheduler.Pod {
		return scheduler.Pod{Name: fmt.Sprintf("high-%d", i), CPU: 3000, Memory: 500, Priority: 10}
	}
	return []scaleWorkload{
		basic,
		{name: "SchedulingPodAntiAffinity", initPods: n(100), measure: n(400), initPod: anti("init"), podOf: anti("pod"), ref: map[int]float64{500: 158}},
		{name: "SchedulingPodAffinity", initPods: n(500), measure: n(1000), initPod: aff("init"), podOf: aff("pod"), ref: map[int]float64{500: 130}},
		{name: "SchedulingNodeAffinity", initPods: n(500), measure: n(1000), initPod: nodeAff("init"), podOf: nodeAff("pod"), ref: map[int]float64{500: 212}},
		{name: "TopologySpreading", initPods: n(1000), measure: n(1000), initPod: func(i int) scheduler.Pod { return defaultPod(fmt.Sprintf("init-%d", i)) }, podOf: spread, ref: map[int]float64{500: 166}},
		// Low-priority pods of 900m fill the 4-CPU nodes (4 each); each high-priority pod of 3 CPU needs 3 of them evicted.
		{name: "PreemptionBasic", initPods: 4 * nodes, measure: pick(r, min(500, nodes), 5, 5), initPod: low, podOf: highPod, ref: map[int]float64{1000: 22}},
	}
}

type scaleResult struct {
	workload  string
	nodes     int
	scheduler string
	pods      int
	bound     int
	rate      float64 // measured pods / (last bound - first Create)
	lat       []float64
	elapsed   time.Duration // first Create to last bound (or to the timeout)
	batches   []Batch       // weave-scheduler's batches over the whole run (init pods included)
	err       error
}

// runScale is experiment 6: the scheduler_perf workloads at 500 nodes (quick: fewer pods; tiny: 50 nodes)
// and SchedulingBasic at 5,000 nodes (full mode only; the other workloads there when --workloads names them).
func runScale(ctx context.Context, r *Runner) error {
	sizes := pick(r, []int{500, 5000}, []int{500}, []int{50})
	if len(r.cfg.Nodes) > 0 {
		sizes = r.cfg.Nodes
	}
	timeout := pick(r, 6*time.Minute, 2*time.Minute, 2*time.Minute)
	s := r.section(6)
	s.Paper = "The issue's reference, measured with kube-scheduler v1.34 (not re-measured on v1.37.2, the kube-scheduler run below) on this 2-core machine, upstream scheduler_perf (bind included): SchedulingBasic 273, " +
		"SchedulingPodAntiAffinity 158, SchedulingPodAffinity 130, SchedulingNodeAffinity 212, TopologySpreading 166 pods/s at 500 nodes, " +
		"PreemptionBasic 22 pods/s (1,000 nodes); SchedulingBasic 135 pods/s at 5,000 nodes. Target: weave-scheduler's throughput at least kube-scheduler's on every workload."
	s.Setup = fmt.Sprintf("Node counts %v, nodes of 4 CPU / 32 GiB / 110 pods in three zones. Workloads after scheduler_perf's templates "+
		"(pods of 100m / 500 MiB; anti-affinity on hostname; affinity on zone; node affinity to 2 of the 3 zones; spreading over zones with maxSkew 5; "+
		"preemption: 900m low-priority pods fill the nodes, 3-CPU high-priority pods need 3 evictions each). Per workload and scheduler: "+
		"the init pods are created and bound first (untimed), then the measured pods are created with the scheduler running, 16 requests in flight. "+
		"Throughput = measured pods / (last bound − first Create); latency = Create → seen bound. weave-scheduler: b = 100, %s. "+
		"Differences from upstream: one namespace, a client-side watch instead of scheduler_perf's collectors, and at 5,000 nodes or more SchedulingBasic only unless --workloads names others.", sizes, r.batching())
	var results []scaleResult
	for _, nodes := range sizes {
		c, stop, err := r.cluster(ctx)
		if err != nil {
			return err
		}
		t0 := time.Now()
		if err := createZonedNodes(ctx, c, nodes, r.bar(fmt.Sprintf("exp 6 create %d nodes", nodes), nodes)); err != nil {
			stop()
			return err
		}
		r.statusf("   %d nodes created in %v", nodes, time.Since(t0).Round(time.Second))
		for _, w := range scaleWorkloads(nodes, r) {
			if !r.wantWorkload(w.name) || nodes >= 5000 && len(r.cfg.Workloads) == 0 && w.name != "SchedulingBasic" {
				continue // 5,000 nodes and more: SchedulingBasic unless --workloads names others
			}
			for _, name := range r.schedulers() {
				res := runScaleOne(ctx, r, c, nodes, w, name, timeout)
				results = append(results, res)
				if res.err != nil {
					r.statusf("   %s %d nodes %s: %v", w.name, nodes, name, res.err)
				} else {
					r.statusf("   %s %d nodes %s: %.1f pods/s, p50 %.0f ms p99 %.0f ms", w.name, nodes, name, res.rate, percentile(res.lat, 50), percentile(res.lat, 99))
				}
				if ctx.Err() != nil {
					stop()
					return ctx.Err()
				}
			}
		}
		stop()
	}
	return scaleReport(r, s, results, sizes)
}

// wantWorkload reports whether Config.Workloads selects the workload (all when it is empty).
func (r *Runner) wantWorkload(name string) bool {
	if len(r.cfg.Workloads) == 0 {
		return true
	}
	for _, w := range r.cfg.Workloads {
		if strings.EqualFold(w, name) || strings.EqualFold(w, shortWorkload[name]) {
			return true
		}
	}
	return false
}

func createZonedNodes(ctx context.Context, c *harness.Cluster, n int, bar *progress) error {
	var mu sync.Mutex
	var first error
	done := 0
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			err := c.CreateNode(ctx, fmt.Sprintf("node-%d", i), harness.NodeSpec{CPU: "4", Memory: "32Gi", Pods: 110,
				Labels: map[string]string{zoneKey: fmt.Sprintf("zone-%d", i%3)}})
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = err
			}
			done++
			bar.set(done)
		}()
	}
	wg.Wait()
	bar.done()
	return first
}

func runScaleOne(ctx context.Context, r *Runner, c *harness.Cluster, nodes int, w scaleWorkload, name string, timeout time.Duration) (res scaleResult) {
	res = scaleResult{workload: w.name, nodes: nodes, scheduler: name, pods: w.measure}
	ns := strings.ToLower(fmt.Sprintf("%s-%d-%s", w.name, nodes, shortName(name)))
	if err := c.CreateNamespace(ctx, ns); err != nil {
		res.err = err
		return res
	}
	defer func() {
		if err := deletePods(ctx, c, ns); err != nil && res.err == nil {
			res.err = err
		}
	}()
	schedName := ""
	if name == weaveName {
		schedName = weaveName
	}
	mk := func(n int, f func(int) scheduler.Pod) []*v1.Pod {
		out := make([]*v1.Pod, n)
		for i := range out {
			out[i] = podObject(f(i), ns, schedName)
		}
		return out
	}
	var sch *sched
	var err error
	if name == kubeName {
		sch, err = startKube(ctx, c)
	} else {
		sch, err = startWeave(ctx, c, r.weaveConfig(100), r.log)
	}
	if err != nil {
		res.err = err
		return res
	}
	defer func() {
		sch.stop()
		if sch.weave != nil {
			res.batches = sch.weave.Batches()
		}
	}()
	watch, err := c.WatchBindings(ctx, ns)
	if err != nil {
		res.err = err
		return res
	}
	defer watch.Stop()
	label := fmt.Sprintf("exp 6 %s %d %s", w.name, nodes, shortName(name))
	bar := r.bar(label+" init", w.initPods)
	if _, err := createPods(ctx, c, mk(w.initPods, w.initPod), 16); err != nil {
		res.err = err
		return res
	}
	err = waitBound(ctx, watch, w.initPods, timeout, fmt.Sprintf("experiment 6 (%s, %d nodes, %s, init pods)", w.name, nodes, name), bar)
	bar.done()
	if err != nil {
		res.err = err
		return res
	}
	bar = r.bar(label, w.measure)
	sent, err := createPods(ctx, c, mk(w.measure, w.podOf), 16)
	if err == nil {
		// Preemption deletes init pods; the measured pods are the ones named by podOf.
		err = waitMeasured(ctx, watch, sent, timeout, fmt.Sprintf("experiment 6 (%s, %d nodes, %s)", w.name, nodes, name), bar)
	}
	bar.done()
	bound := watch.Bound()
	var first, last time.Time
	for pod, at := range sent {
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if b, ok := bound[pod]; ok {
			res.bound++
			res.lat = append(res.lat, ms(b.Sub(at)))
			if b.After(last) {
				last = b
			}
		}
	}
	res.elapsed = last.Sub(first)
	if err != nil {
		res.elapsed = time.Since(first)
	}
	res.rate = float64(res.bound) / res.elapsed.Seconds()
	res.err = err
	return res
}

// waitMeasured waits until every pod of sent is bound.
func waitMeasured(ctx context.Context, w *harness.BindWatch, sent map[string]time.Time, timeout time.Duration, what string, bar *progress) error {
	deadline := time.Now().Add(timeout)
	for {
		bound := w.Bound()
		n := 0
		for pod := range sent {
			if _, ok := bound[pod]; ok {
				n++
			}
		}
		bar.set(n)
		if n >= len(sent) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %d of %d measured pods bound after %v", what, n, len(sent), timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

var shortWorkload = map[string]string{
	"SchedulingBasic": "Basic", "SchedulingPodAntiAffinity": "AntiAff", "SchedulingPodAffinity": "PodAff",
	"SchedulingNodeAffinity": "NodeAff", "TopologySpreading": "Spread", "PreemptionBasic": "Preempt",
}

func scaleReport(r *Runner, s *Section, results []scaleResult, sizes []int) error {
	header := []string{"workload", "nodes", "scheduler", "pods", "bound", "pods_per_s"}
	for _, p := range Percentiles {
		header = append(header, fmt.Sprintf("p%g_ms", p))
	}
	header = append(header, "weave_batches", "weave_decide_p50_ms", "weave_decide_max_ms", "weave_variables_p50", "error")
	var rows [][]string
	byKey := map[string]scaleResult{}
	var keys []string
	for _, res := range results {
		row := []string{res.workload, itoa(res.nodes), res.scheduler, itoa(res.pods), itoa(res.bound), f1(res.rate)}
		for _, p := range Percentiles {
			row = append(row, f1(percentile(res.lat, p)))
		}
		e := ""
		if res.err != nil {
			e = oneLine(res.err.Error())
		}
		var dec, vars []float64
		for _, b := range solvedBatches(res.batches) {
			dec, vars = append(dec, ms(b.Decide())), append(vars, float64(b.Variables))
		}
		row = append(row, itoa(len(res.batches)), f1(percentile(dec, 50)), f1(percentile(dec, 100)), f1(percentile(vars, 50)))
		rows = append(rows, append(row, e))
		k := fmt.Sprintf("%s@%d", res.workload, res.nodes)
		if _, ok := byKey[k+"/"+kubeName]; !ok && res.scheduler == kubeName {
			keys = append(keys, k)
		}
		byKey[k+"/"+res.scheduler] = res
	}
	if err := r.writeCSV(s, "scale", header, rows); err != nil {
		return err
	}
	// weave-scheduler's batches, one row each (init pods included): which batches are slow, and in which phase.
	var brows [][]string
	for _, res := range results {
		for _, b := range res.batches {
			brows = append(brows, []string{res.workload, itoa(res.nodes), f1(b.At.Seconds()), itoa(b.Size), itoa(b.Placed),
				f1(ms(b.Fetch)), f1(ms(b.Ground)), f1(ms(b.Solve)), f1(ms(b.Decide())), f1(ms(b.Total)), itoa(b.Variables), itoa(b.Constraints)})
		}
	}
	if err := r.writeCSV(s, "scale_batches", []string{"workload", "nodes", "at_s", "size", "placed", "fetch_ms", "ground_ms", "solve_ms", "decide_ms", "total_ms", "variables", "constraints"}, brows); err != nil {
		return err
	}
	var trows [][]string
	var groups []string
	var vals [][]float64
	met, total := 0, 0
	for _, k := range keys {
		kube, weave := byKey[k+"/"+kubeName], byKey[k+"/"+weaveName]
		cell := func(res scaleResult) string {
			if res.err != nil && res.elapsed == 0 {
				return "failed before the measured pods (see below)"
			}
			if res.err != nil {
				return fmt.Sprintf("failed: %d of %d in %v (%.1f)", res.bound, res.pods, res.elapsed.Round(time.Second), res.rate)
			}
			return f1(res.rate)
		}
		lat := func(res scaleResult) string {
			if len(res.lat) == 0 {
				return "–"
			}
			return fmt.Sprintf("%.0f / %.0f / %.0f", percentile(res.lat, 50), percentile(res.lat, 95), percentile(res.lat, 99))
		}
		ref := "–"
		for _, w := range scaleWorkloads(kube.nodes, r) {
			if w.name == kube.workload {
				if v, ok := w.ref[kube.nodes]; ok {
					ref = f1(v)
				} else if kube.workload == "PreemptionBasic" {
					ref = fmt.Sprintf("%.0f (1,000 nodes)", w.ref[1000])
				}
			}
		}
		verdict := "–"
		if kube.err == nil && weave.err == nil {
			total++
			if weave.rate >= kube.rate {
				verdict = "yes"
				met++
			} else {
				verdict = "no"
			}
		}
		trows = append(trows, []string{kube.workload, itoa(kube.nodes), itoa(kube.pods), cell(kube), cell(weave), ref, verdict, lat(kube), lat(weave)})
		groups = append(groups, fmt.Sprintf("%s\n%d", shortWorkload[kube.workload], kube.nodes))
		vals = append(vals, []float64{kube.rate, weave.rate})
	}
	s.Tables = append(s.Tables, table([]string{"workload", "nodes", "measured pods", "kube-scheduler pods/s", "weave-scheduler pods/s", "reference kube pods/s", "weave ≥ kube", "kube p50/p95/p99 ms", "weave p50/p95/p99 ms"}, trows))
	s.Findings = append(s.Findings, fmt.Sprintf("weave-scheduler's throughput is at least kube-scheduler's on %d of %d workloads completed by both (target: all).", met, total))
	for _, res := range results {
		var dec []float64
		for _, b := range solvedBatches(res.batches) {
			dec = append(dec, ms(b.Decide()))
		}
		if len(dec) > 0 {
			s.Findings = append(s.Findings, fmt.Sprintf("%s at %d nodes, weave-scheduler: %d batches, decide p50 %.0f ms, max %.0f ms.", res.workload, res.nodes, len(dec), percentile(dec, 50), percentile(dec, 100)))
		}
		if res.err != nil {
			s.Findings = append(s.Findings, fmt.Sprintf("%s at %d nodes, %s: %s", res.workload, res.nodes, res.scheduler, oneLine(res.err.Error())))
		}
	}
	return r.barFigure(s, "scale_throughput", "Throughput (pods/s)", "pods/s", groups, []string{kubeName, weaveName}, vals, func(p *plot.Plot) {
		p.Y.Min = 0
		p.X.Tick.Label.Rotation = 0
	})
}
