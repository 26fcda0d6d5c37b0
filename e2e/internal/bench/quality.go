package bench

import (
	"context"
	"fmt"
	"time"

	"gonum.org/v1/plot"
	v1 "k8s.io/api/core/v1"

	"github.com/weavesql/weave/e2e/harness"
	"github.com/weavesql/weave/scheduler/sim"
)

// runQuality is experiment 3: the heterogeneous workload (30 apps × 10 pods, exponential CPU and memory
// requests, one arrival order per seed) on nodes it loads to about 94%; each scheduler places what it can.
func runQuality(ctx context.Context, r *Runner) error {
	seeds := pick(r, 35, 3, 1)
	apps := pick(r, 30, 30, 6)
	nodes := pick(r, 20, 20, 4)
	const nodeCPU, nodeMem = 16000, 32000 // millicores, MiB
	quiet := pick(r, 4*time.Second, 3*time.Second, 2*time.Second)
	timeout := pick(r, 3*time.Minute, 2*time.Minute, time.Minute)

	s := r.section(3)
	s.Paper = "30 apps × 10 pods, exponential CPU and memory requests, 35 arrival orders. Weave places 100% of the pods in 29 of 35 runs and at least 93% in every run; kube-scheduler places all pods in 3 of 35."
	s.Setup = fmt.Sprintf("%d nodes of 16 CPU / 32,000 MiB; %d apps × 10 pods with requests drawn from exponential distributions "+
		"(means 1,000 m CPU and 2,000 MiB; scheduler/sim.Heterogeneous, seed = run), created in the seed's shuffled order, 16 in flight, "+
		"with the scheduler running (weave-scheduler: b = 100, %s); a run ends when every pod is bound or none has been bound for %v. %d runs.",
		nodes, apps, r.weaveConfig(100).BatchWait, quiet, seeds)

	c, stop, err := r.cluster(ctx)
	if err != nil {
		return err
	}
	defer stop()
	if _, err := c.CreateNodes(ctx, "node", nodes, harness.NodeSpec{CPU: fmt.Sprintf("%dm", nodeCPU), Memory: fmt.Sprintf("%dMi", nodeMem), Pods: 110}); err != nil {
		return err
	}
	var rows [][]string
	var rates, weaveBatches []float64 // pods created per second (every run), weave-scheduler's mean batch size
	frac := map[string][]float64{}
	full := map[string]int{}
	worst := map[string]float64{kubeName: 1, weaveName: 1}
	bothFull, packable, weaveOnPackable := 0, 0, 0
	underCap, weaveUnderCap, kubeUnderCap := 0, 0, 0
	bar := r.bar("exp 3 runs", 2*seeds)
	done := 0
	for seed := 1; seed <= seeds; seed++ {
		workload := sim.Heterogeneous(int64(seed), apps, 10, 1000, 2000)
		var cpu, mem int64
		for _, p := range workload {
			cpu += p.CPU
			mem += p.Memory
		}
		placedBy := map[string]int{}
		for _, name := range []string{kubeName, weaveName} {
			ns := fmt.Sprintf("quality-%d-%s", seed, name)
			if err := c.CreateNamespace(ctx, ns); err != nil {
				return err
			}
			schedName := ""
			if name == weaveName {
				schedName = weaveName
			}
			pods := make([]*v1.Pod, len(workload))
			for i, sp := range workload {
				pods[i] = podObject(sp, ns, schedName)
			}
			var sch *sched
			if name == kubeName {
				sch, err = startKube(ctx, c)
			} else {
				sch, err = startWeave(ctx, c, r.weaveConfig(100), r.log)
			}
			if err != nil {
				return err
			}
			w, err := c.WatchBindings(ctx, ns)
			if err != nil {
				sch.stop()
				return err
			}
			var before promText
			if sch.weave != nil {
				before = sch.weave.scrape()
			}
			var sent map[string]time.Time
			sent, err = createPods(ctx, c, pods, 16)
			var n int
			if err == nil {
				n, err = waitSettled(ctx, w, len(pods), quiet, timeout, nil)
			}
			// The rate at which the pods were created, and weave-scheduler's batches: whether a burst was
			// seen as one (Config.BurstLinger starts above 200 pods/s) and how large its batches were.
			rate := creationRate(sent)
			var batches batchStats
			if sch.weave != nil {
				batches = batchDelta(before, sch.weave.scrape())
				weaveBatches = append(weaveBatches, batches.meanSize())
			}
			rates = append(rates, rate)
			w.Stop()
			sch.stop()
			if err != nil {
				return fmt.Errorf("experiment 3, seed %d, %s: %w", seed, name, err)
			}
			placedBy[name] = n
			f := float64(n) / float64(len(pods))
			frac[name] = append(frac[name], f)
			worst[name] = min(worst[name], f)
			if n == len(pods) {
				full[name]++
			}
			rows = append(rows, []string{itoa(seed), name, itoa(len(pods)), itoa(n), fmt.Sprintf("%.4f", f),
				fmt.Sprint(cpu), fmt.Sprint(mem), fmt.Sprint(int64(nodes) * nodeCPU), fmt.Sprint(int64(nodes) * nodeMem),
				fmt.Sprintf("%.0f", rate), itoa(batches.n), fmt.Sprintf("%.1f", batches.meanSize())})
			if err := deletePods(ctx, c, ns); err != nil {
				return err
			}
			done++
			bar.set(done)
		}
		all := len(workload)
		if placedBy[kubeName] == all || placedBy[weaveName] == all {
			packable++
			if placedBy[weaveName] == all {
				weaveOnPackable++
			}
		}
		if placedBy[kubeName] == all && placedBy[weaveName] == all {
			bothFull++
		}
		if cpu <= int64(nodes)*nodeCPU && mem <= int64(nodes)*nodeMem {
			underCap++
			if placedBy[weaveName] == all {
				weaveUnderCap++
			}
			if placedBy[kubeName] == all {
				kubeUnderCap++
			}
		}
		r.statusf("   seed %d: kube-scheduler %d, weave-scheduler %d of %d (CPU demand %.0f%%, memory %.0f%% of capacity)", seed, placedBy[kubeName], placedBy[weaveName], all,
			100*float64(cpu)/float64(int64(nodes)*nodeCPU), 100*float64(mem)/float64(int64(nodes)*nodeMem))
	}
	bar.done()
	if err := r.writeCSV(s, "quality", []string{"seed", "scheduler", "pods", "placed", "fraction", "cpu_demand_m", "mem_demand_mib", "cpu_capacity_m", "mem_capacity_mib", "created_per_s", "weave_batches", "weave_mean_batch"}, rows); err != nil {
		return err
	}
	var trows [][]string
	for _, name := range []string{weaveName, kubeName} {
		trows = append(trows, []string{name, fmt.Sprintf("%d / %d", full[name], seeds), fmt.Sprintf("%.1f%%", 100*worst[name]), fmt.Sprintf("%.1f%%", 100*mean(frac[name]))})
	}
	s.Tables = append(s.Tables, table([]string{"scheduler", "runs with 100% placed", "worst run", "mean placed"}, trows))
	s.Findings = append(s.Findings,
		fmt.Sprintf("weave-scheduler placed every pod in %d of %d runs (paper: 29/35), worst %.1f%% (paper: 93%%); kube-scheduler in %d of %d (paper: 3/35), worst %.1f%%.",
			full[weaveName], seeds, 100*worst[weaveName], full[kubeName], seeds, 100*worst[kubeName]),
		fmt.Sprintf("Runs known to have a packing (one of the schedulers placed everything): %d; weave-scheduler placed everything in %d of them (target: all).", packable, weaveOnPackable),
		fmt.Sprintf("Runs whose total CPU and memory demand fit the cluster's capacity (a necessary condition for a packing, not a sufficient one): %d; all pods placed in %d of them by weave-scheduler, %d by kube-scheduler. In the other %d runs no scheduler can place everything.",
			underCap, weaveUnderCap, kubeUnderCap, seeds-underCap),
		fmt.Sprintf("Pods created at a median %.0f per second (16 Creates in flight); weave-scheduler's batches held %.1f pods at the median of the runs' means.",
			median(rates), median(weaveBatches)))
	var ss []series
	for _, name := range []string{weaveName, kubeName} {
		var xs []float64
		for i := range frac[name] {
			xs = append(xs, float64(i+1))
		}
		ss = append(ss, series{name: name, xs: xs, ys: frac[name]})
	}
	return r.lineFigure(s, "quality", "Fraction of pods placed per run (heterogeneous demands)", "run (seed)", "fraction placed", ss, func(p *plot.Plot) {
		p.Y.Max = 1.01
		p.Legend.Top = false
	})
}

// creationRate is how many pods per second were created, from the first Create sent to the last.
func creationRate(sent map[string]time.Time) float64 {
	var first, last time.Time
	for _, t := range sent {
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
	}
	if d := last.Sub(first).Seconds(); d > 0 {
		return float64(len(sent)-1) / d
	}
	return 0
}
