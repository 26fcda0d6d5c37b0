package bench

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"gonum.org/v1/plot"
	v1 "k8s.io/api/core/v1"

	"github.com/weavesql/weave/e2e/harness"
	"github.com/weavesql/weave/scheduler/sim"
)

// placedRun is one scheduler's run of experiment 1.
type placedRun struct {
	label   string // "kube-scheduler" or "weave b=100"
	batch   int    // 0 for kube-scheduler
	pods    int
	took    time.Duration // first Create to last pod bound
	placed  []float64     // seconds since the first Create at which the k-th pod was bound
	e2e     []float64     // per pod, Create → seen bound, ms
	batches []Batch       // weave-scheduler's batches
	attempt histogram     // kube-scheduler's scheduling_attempt_duration_seconds over the run
	bind    time.Duration // weave-scheduler's mean Binding latency
}

// runPlaced is experiments 1 (pods placed over time), 2 (scheduling latency) and 5 (model size over time):
// the paper's nginx+redis workload on 50 nodes, for kube-scheduler and for weave-scheduler with b = 10, 50
// and 100; the latency and the model size come from the same runs' batches.
func runPlaced(ctx context.Context, r *Runner) error {
	nodes := pick(r, 50, 50, 10)
	apps := pick(r, 30, 30, 3)
	per := pick(r, 40, 5, 4) // redis and nginx pods per app
	batches := pick(r, []int{10, 50, 100}, []int{10, 50, 100}, []int{10, 100})
	timeout := pick(r, 15*time.Minute, 3*time.Minute, 2*time.Minute)
	workload := sim.NginxRedis(apps, per, per)
	total := len(workload)

	s1, s2, s5 := r.section(1), r.section(2), r.section(5)
	s1.Paper = "50 nodes, 30 apps, 2,400 pods. With b = 50 and 100 Weave places pods at the baseline's rate (identical slopes, " +
		"after a start-up gap of about 10 and 20 s from batching a slow arrival); with b = 10 it takes 2.4× longer than kube-scheduler."
	s1.Setup = fmt.Sprintf("%d nodes (64 CPU, 256 GiB, 110 pods each), %d apps × (%d redis + %d nginx) = %d pods with no requests; "+
		"redis pods anti-affine to each other, nginx pods anti-affine to each other and affine to their app's redis (required, hostname). "+
		"The scheduler runs first; then the pods are created in the workload's order, 16 requests in flight, as fast as the API server takes them. "+
		"t = 0 is the first Create; a pod counts as placed when a watch sees it bound. weave-scheduler: %s, solver timeout 2 s.",
		nodes, apps, per, per, total, r.batching())
	s2.Paper = "Per-pod latency (batch solving time / batch size) with b = 100: 50% under 40 ms, 95% under 180 ms (75% under 60 ms, 95% under 175 ms with enough batching); " +
		"b = 10: p75 145 ms. kube-scheduler p95 20 ms. The MiniZinc → FlatZinc step accounted for up to 90% of it."
	s2.Setup = "The runs of experiment 1. Weave's phases per batch come from the batch's statistics, which weave-scheduler's AfterBatch hook " +
		"passes at the end of each batch (the values its Prometheus histograms record). kube-scheduler's per-pod latency is its " +
		"scheduler_scheduling_attempt_duration_seconds histogram (algorithm + binding, buckets of powers of 2 from 1 ms: percentiles interpolated). " +
		"Create→bind is the end-to-end latency seen by a client, for both."
	s5.Paper = "Variables per solver invocation as the cluster grows from 0 to 2,400 pods: variable, with a near-constant rolling median (window 20)."
	s5.Setup = "The weave-scheduler runs of experiment 1: weave_scheduler_model_variables after each batch."

	c, stop, err := r.cluster(ctx)
	if err != nil {
		return err
	}
	defer stop()
	if _, err := c.CreateNodes(ctx, "node", nodes, harness.NodeSpec{CPU: "64", Memory: "256Gi", Pods: 110}); err != nil {
		return err
	}
	var runs []*placedRun
	one := func(label string, b int) error {
		ns := fmt.Sprintf("placed-%d", len(runs))
		if err := c.CreateNamespace(ctx, ns); err != nil {
			return err
		}
		schedName := ""
		if b > 0 {
			schedName = weaveName
		}
		pods := make([]*v1.Pod, len(workload))
		for i, sp := range workload {
			pods[i] = podObject(sp, ns, schedName)
		}
		run := &placedRun{label: label, batch: b, pods: total}
		before, _ := kubeHistogram("scheduler_scheduling_attempt_duration_seconds", map[string]string{"result": "scheduled"})
		var sch *sched
		if b == 0 {
			sch, err = startKube(ctx, c)
		} else {
			sch, err = startWeave(ctx, c, r.weaveConfig(b), r.log)
		}
		if err != nil {
			return err
		}
		w, err := c.WatchBindings(ctx, ns)
		if err != nil {
			sch.stop()
			return err
		}
		bar := r.bar("exp 1 "+label, total)
		t0 := time.Now()
		sent, err := createPods(ctx, c, pods, 16)
		if err == nil {
			err = waitBound(ctx, w, total, timeout, "experiment 1 ("+label+")", bar)
		}
		bar.done()
		bound := w.Bound()
		w.Stop()
		sch.stop()
		if err != nil {
			return err
		}
		run.placed = placedSeries(bound, t0)
		run.took = time.Duration(run.placed[len(run.placed)-1] * float64(time.Second))
		for name, at := range bound {
			run.e2e = append(run.e2e, ms(at.Sub(sent[name])))
		}
		if sch.weave != nil {
			run.batches = sch.weave.Batches()
			run.bind = sch.weave.bindMean()
		} else {
			after, _ := kubeHistogram("scheduler_scheduling_attempt_duration_seconds", map[string]string{"result": "scheduled"})
			run.attempt = after.sub(before)
		}
		runs = append(runs, run)
		r.statusf("   %s: %d pods in %v (%.1f pods/s)", label, total, run.took.Round(time.Millisecond), float64(total)/run.took.Seconds())
		return deletePods(ctx, c, ns)
	}
	if err := one(kubeName, 0); err != nil {
		return err
	}
	for _, b := range batches {
		if err := one(fmt.Sprintf("weave b=%d", b), b); err != nil {
			return err
		}
	}
	if err := placedReport(r, s1, runs, total); err != nil {
		return err
	}
	if err := latencyReport(r, s2, runs); err != nil {
		return err
	}
	return modelSizeReport(r, s5, runs)
}

func placedReport(r *Runner, s *Section, runs []*placedRun, total int) error {
	var rows [][]string
	var ss []series
	for _, run := range runs {
		xs, ys := []float64{0}, []float64{0}
		for k, t := range run.placed {
			rows = append(rows, []string{run.label, itoa(run.batch), fmt.Sprintf("%.4f", t), itoa(k + 1)})
			xs = append(xs, t, t)
			ys = append(ys, float64(k)/float64(total), float64(k+1)/float64(total))
		}
		ss = append(ss, series{name: run.label, xs: xs, ys: ys})
	}
	if err := r.writeCSV(s, "placed_over_time", []string{"scheduler", "batch", "t_s", "placed"}, rows); err != nil {
		return err
	}
	if err := r.lineFigure(s, "placed_over_time", fmt.Sprintf("Pods placed over time (%d pods)", total), "time since the first Create (s)", "fraction of pods placed", ss,
		func(p *plot.Plot) { p.Y.Min, p.Y.Max = 0, 1.02; p.Legend.Top = false; p.Legend.Left = false }); err != nil {
		return err
	}
	kube := runs[0]
	var trows [][]string
	for _, run := range runs {
		first := time.Duration(run.placed[0] * float64(time.Second))
		half := time.Duration(run.placed[len(run.placed)/2] * float64(time.Second))
		trows = append(trows, []string{run.label, fmt.Sprint(first.Round(time.Millisecond)), fmt.Sprint(half.Round(time.Millisecond)),
			fmt.Sprint(run.took.Round(time.Millisecond)), f1(float64(run.pods) / run.took.Seconds()), f2(run.took.Seconds() / kube.took.Seconds())})
	}
	s.Tables = append(s.Tables, table([]string{"scheduler", "first pod bound", "half bound", "all bound", "pods/s", "time vs kube-scheduler"}, trows))
	for _, run := range runs[1:] {
		s.Findings = append(s.Findings, fmt.Sprintf("%s placed all %d pods in %.2f× kube-scheduler's time (paper: ≈1× for b = 50, 100; 2.4× for b = 10).",
			run.label, run.pods, run.took.Seconds()/kube.took.Seconds()))
	}
	return nil
}

func pctRow(label, metric string, xs []float64) []string {
	row := []string{label, metric, itoa(len(xs))}
	for _, p := range Percentiles {
		row = append(row, f2(percentile(xs, p)))
	}
	return row
}

func histRow(label, metric string, h histogram) []string {
	row := []string{label, metric, fmt.Sprint(int(h.count))}
	for _, p := range Percentiles {
		row = append(row, f2(1000*h.quantile(p/100)))
	}
	return row
}

func latencyReport(r *Runner, s *Section, runs []*placedRun) error {
	header := []string{"scheduler", "metric", "n"}
	for _, p := range Percentiles {
		header = append(header, fmt.Sprintf("p%g_ms", p))
	}
	var rows, batchRows [][]string
	var groups []string
	var perPodP [][]float64
	for _, run := range runs {
		groups = append(groups, run.label)
		if run.batch == 0 {
			rows = append(rows, histRow(run.label, "per pod: scheduling attempt (histogram)", run.attempt))
			rows = append(rows, pctRow(run.label, "per pod: create→bind", run.e2e))
			var ys []float64
			for _, p := range Percentiles {
				ys = append(ys, 1000*run.attempt.quantile(p/100))
			}
			perPodP = append(perPodP, ys)
			continue
		}
		var perPod, decide, totalB, fetch, ground, solve, extract, verify []float64
		for i, b := range solvedBatches(run.batches) {
			if b.Size > 0 {
				for k := 0; k < b.Size; k++ { // one sample per pod, as the paper's CDF over placement decisions
					perPod = append(perPod, ms(b.Decide())/float64(b.Size))
				}
			}
			decide = append(decide, ms(b.Decide()))
			if b.Total > 0 {
				totalB = append(totalB, ms(b.Total))
			}
			fetch, ground, solve, extract, verify = append(fetch, ms(b.Fetch)), append(ground, ms(b.Ground)), append(solve, ms(b.Solve)), append(extract, ms(b.Extract)), append(verify, ms(b.Verify))
			batchRows = append(batchRows, []string{run.label, itoa(run.batch), itoa(i), fmt.Sprintf("%.3f", b.At.Seconds()), itoa(b.Size), itoa(b.Placed),
				f2(ms(b.Fetch)), f2(ms(b.Ground)), f2(ms(b.Solve)), f2(ms(b.Extract)), f2(ms(b.Verify)), f2(ms(b.Decide())), f2(ms(b.Total)),
				itoa(b.Variables), itoa(b.Constraints)})
		}
		rows = append(rows,
			pctRow(run.label, "per pod: batch decide / batch size", perPod),
			pctRow(run.label, "per batch: decide (fetch+ground+solve+extract+verify)", decide),
			pctRow(run.label, "per batch: total (incl. re-check, queueing binds)", totalB),
			pctRow(run.label, "per batch: fetch", fetch),
			pctRow(run.label, "per batch: ground", ground),
			pctRow(run.label, "per batch: solve", solve),
			pctRow(run.label, "per batch: extract", extract),
			pctRow(run.label, "per batch: verify", verify),
			pctRow(run.label, "per pod: create→bind", run.e2e),
		)
		var ys []float64
		for _, p := range Percentiles {
			ys = append(ys, percentile(perPod, p))
		}
		perPodP = append(perPodP, ys)
		if run.batch == 100 {
			p50, p95 := percentile(perPod, 50), percentile(perPod, 95)
			verdict := "met"
			if !(p95 < 5) {
				verdict = "NOT met"
			}
			s.Findings = append(s.Findings, fmt.Sprintf("b = 100: per-pod p50 %.2f ms and p95 %.2f ms (paper: 40 ms and 180 ms); target p95 < 5 ms: %s. Mean Binding request %.1f ms.",
				p50, p95, verdict, ms(run.bind)))
		}
	}
	if len(runs) > 0 && runs[0].batch == 0 {
		s.Findings = append(s.Findings, fmt.Sprintf("kube-scheduler: scheduling attempt p95 %.1f ms (paper: 20 ms), interpolated in 1-2-4-8… ms buckets.", 1000*runs[0].attempt.quantile(0.95)))
	}
	if err := r.writeCSV(s, "latency_percentiles", header, rows); err != nil {
		return err
	}
	if err := r.writeCSV(s, "batches", []string{"scheduler", "batch", "index", "t_s", "size", "placed", "fetch_ms", "ground_ms", "solve_ms", "extract_ms", "verify_ms", "decide_ms", "total_ms", "variables", "constraints"}, batchRows); err != nil {
		return err
	}
	var trows [][]string
	for _, row := range rows {
		if row[1] == "per pod: batch decide / batch size" || row[1] == "per pod: scheduling attempt (histogram)" || row[1] == "per batch: decide (fetch+ground+solve+extract+verify)" || row[1] == "per pod: create→bind" {
			trows = append(trows, row)
		}
	}
	th := []string{"scheduler", "metric", "n"}
	for _, p := range Percentiles {
		th = append(th, fmt.Sprintf("p%g (ms)", p))
	}
	s.Tables = append(s.Tables, table(th, trows))
	var lss []series
	for i, g := range groups {
		var xs, ys []float64
		for j, p := range Percentiles {
			if v := perPodP[i][j]; v > 0 && !math.IsNaN(v) {
				xs, ys = append(xs, p), append(ys, v)
			}
		}
		lss = append(lss, series{name: g, xs: xs, ys: ys})
	}
	if err := r.lineFigure(s, "latency_per_pod", "Per-pod scheduling latency (kube: attempt; weave: batch/size)", "percentile", "ms (log scale)", lss, func(p *plot.Plot) {
		logY(p)
		p.Legend.Top = true
		p.Legend.Left = true
	}); err != nil {
		return err
	}
	// Breakdown: median phase per batch, stacked.
	var bgroups []string
	var bvals [][]float64
	phases := []string{"fetch", "ground", "solve", "extract", "verify"}
	var brows [][]string
	for _, run := range runs {
		if run.batch == 0 || len(run.batches) == 0 {
			continue
		}
		var ph [5][]float64
		for _, b := range run.batches {
			for i, d := range []time.Duration{b.Fetch, b.Ground, b.Solve, b.Extract, b.Verify} {
				ph[i] = append(ph[i], ms(d))
			}
		}
		v := make([]float64, 5)
		row := []string{run.label}
		for i := range ph {
			v[i] = mean(ph[i])
			row = append(row, f2(v[i]))
		}
		row = append(row, f2(ms(run.bind)))
		bgroups = append(bgroups, run.label)
		bvals = append(bvals, v)
		brows = append(brows, row)
	}
	s.Tables = append(s.Tables, fmt.Sprintf("Mean time per batch by phase (ms); bind is the mean Binding request per pod (%d in parallel):\n\n", r.weaveConfig(100).BindWorkers)+
		table([]string{"scheduler", "fetch", "ground", "solve", "extract", "verify", "bind (per pod)"}, brows))
	if len(bgroups) > 0 {
		return r.stackedFigure(s, "latency_breakdown", "Mean batch time by phase", "ms per batch", bgroups, phases, bvals)
	}
	return nil
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

func modelSizeReport(r *Runner, s *Section, runs []*placedRun) error {
	var rows [][]string
	var ss []series
	var trows [][]string
	const window = 20
	for _, run := range runs {
		if run.batch == 0 || len(run.batches) == 0 {
			continue
		}
		var xs, vars []float64
		placedBefore := 0
		for i, b := range run.batches {
			rows = append(rows, []string{run.label, itoa(run.batch), itoa(i), itoa(placedBefore), itoa(b.Size), itoa(b.Variables), itoa(b.Constraints)})
			xs = append(xs, float64(placedBefore))
			vars = append(vars, float64(b.Variables))
			placedBefore += b.Placed
		}
		roll := rollingMedian(vars, window)
		if run.batch == 100 || len(runs) == 2 {
			ss = append(ss, series{name: run.label + " per batch", xs: xs, ys: vars, points: true})
		}
		ss = append(ss, series{name: run.label + " rolling median", xs: xs, ys: roll})
		// Flatness: the median variables per pod of the batch in the first and the last quarter of the run.
		// Batches vary in size (a batch is what is pending when the loop is free), so a batch's variables
		// are compared per pod: a model that grows with the cluster shows as a rising ratio.
		var first, last []float64
		for i, b := range run.batches {
			if b.Size == 0 {
				continue
			}
			perPod := float64(b.Variables) / float64(b.Size)
			if i < len(run.batches)/4 {
				first = append(first, perPod)
			} else if i >= len(run.batches)*3/4 {
				last = append(last, perPod)
			}
		}
		ratio := median(last) / median(first)
		trows = append(trows, []string{run.label, itoa(len(run.batches)), f1(median(vars)), f1(median(first)), f1(median(last)), f2(ratio)})
		if !math.IsNaN(ratio) {
			verdict := "flat"
			switch {
			case ratio > 1.25:
				verdict = "GROWING with the cluster"
			case ratio < 0.8:
				verdict = "falling as the nodes fill"
			}
			s.Findings = append(s.Findings, fmt.Sprintf("%s: median variables per pod of the batch %.1f in the first quarter of the run, %.1f in the last (×%.2f): %s.", run.label, median(first), median(last), ratio, verdict))
		}
	}
	s.Tables = append(s.Tables, table([]string{"scheduler", "batches", "median variables", "variables per pod, first quarter (median)", "variables per pod, last quarter (median)", "last/first"}, trows))
	if err := r.writeCSV(s, "model_size", []string{"scheduler", "batch", "index", "pods_placed_before", "size", "variables", "constraints"}, rows); err != nil {
		return err
	}
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].points && !ss[j].points })
	return r.lineFigure(s, "model_size", "Variables per solver invocation", "pods placed before the batch", "variables", ss, func(p *plot.Plot) {
		p.Y.Min = 0
		p.Legend.Top = false
	})
}
