package sim

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weavesql/weave"
	"github.com/weavesql/weave/scheduler"
)

// gangStats is the independent check of a gang workload's outcome, in
// plain Go over the nodes, the jobs and where each pod is (not
// scheduler.State.Check): complete gangs and the GPUs they use, partial
// gangs (0 < placed < minCount), topology violations (a rack job on nodes
// of more than one rack, or of none), nodes over their GPUs.
type gangStats struct {
	complete, jobs, gpus, capacity, demand int64
	partial, topology, overfull            int
}

func (g gangStats) String() string {
	return fmt.Sprintf("%d/%d gangs, %d/%d GPUs (demand %d), partial %d, topology %d, overfull %d",
		g.complete, g.jobs, g.gpus, g.capacity, g.demand, g.partial, g.topology, g.overfull)
}

// idle is the measure: the lower of capacity and demand, minus the
// GPUs used by complete gangs.
func (g gangStats) idle() int64 { return min(g.capacity, g.demand) - g.gpus }

func judgeGangs(nodes []scheduler.Node, jobs []GangJob, at map[string]string) gangStats {
	st := gangStats{jobs: int64(len(jobs))}
	rack := map[string]string{}
	used := map[string]int64{}
	for _, n := range nodes {
		rack[n.Name] = n.Labels[RackLabel]
		st.capacity += n.Resources[GPU]
	}
	for _, j := range jobs {
		st.demand += j.Workers * j.GPUs
		var placed int64
		racks := map[string]bool{}
		for _, p := range j.Pods() {
			n := at[p.Name]
			if n == "" {
				continue
			}
			placed++
			used[n] += j.GPUs
			racks[rack[n]] = true
		}
		switch {
		case placed == 0:
			continue
		case placed < j.Workers:
			st.partial++
		default:
			st.complete++
			st.gpus += placed * j.GPUs
		}
		if j.Rack && (len(racks) != 1 || racks[""]) {
			st.topology++
		}
	}
	for _, n := range nodes {
		if used[n.Name] > n.Resources[GPU] {
			st.overfull++
		}
	}
	return st
}

// greedyGangs is kube-scheduler v1.37's algorithm for PodGroups, restated:
// one group at a time in arrival order, pod by pod with no backtracking, no
// look-ahead across groups; a group that cannot place minCount pods
// places none. With a topology key each rack is tried greedily and the
// placement leaving the fewest GPUs free in its rack is kept (the
// TopologyPlacement plugin's MostAllocated choice). Within a placement a
// pod goes to the node score picks: most allocated (bin packing) or
// least allocated (the default scoring, spreading), ties by name.
func greedyGangs(nodes []scheduler.Node, jobs []GangJob, mostAllocated bool) map[string]string {
	free := map[string]int64{}
	rackOf := map[string]string{}
	var racks []string
	for _, n := range nodes {
		free[n.Name] = n.Resources[GPU]
		r := n.Labels[RackLabel]
		if _, ok := rackOf[n.Name]; !ok && !contains(racks, r) {
			racks = append(racks, r)
		}
		rackOf[n.Name] = r
	}
	at := map[string]string{}
	// try places the job's pods on the nodes in allowed, pod by pod; it
	// returns the placement and the free GPUs after it, or nil.
	try := func(j GangJob, allowed func(string) bool) (map[string]string, map[string]int64) {
		f := map[string]int64{}
		for k, v := range free {
			f[k] = v
		}
		out := map[string]string{}
		for _, p := range j.Pods() {
			best := ""
			for _, n := range nodes {
				if !allowed(n.Name) || f[n.Name] < j.GPUs {
					continue
				}
				if best == "" {
					best = n.Name
					continue
				}
				a, b := f[n.Name]-j.GPUs, f[best]-j.GPUs
				if mostAllocated && a < b || !mostAllocated && a > b {
					best = n.Name
				}
			}
			if best == "" {
				return nil, nil
			}
			out[p.Name] = best
			f[best] -= j.GPUs
		}
		return out, f
	}
	for _, j := range jobs {
		var place map[string]string
		var after map[string]int64
		if !j.Rack {
			place, after = try(j, func(string) bool { return true })
		} else {
			bestLeft := int64(-1)
			for _, r := range racks {
				p, f := try(j, func(n string) bool { return rackOf[n] == r })
				if p == nil {
					continue
				}
				var left int64
				for n, v := range f {
					if rackOf[n] == r {
						left += v
					}
				}
				if bestLeft < 0 || left < bestLeft {
					place, after, bestLeft = p, f, left
				}
			}
		}
		if place == nil {
			continue
		}
		free = after
		for k, v := range place {
			at[k] = v
		}
	}
	return at
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func weaveGangs(t testing.TB, nodes []scheduler.Node, jobs []GangJob, cfg scheduler.Config) (map[string]string, time.Duration) {
	ctx := context.Background()
	if cfg.BatchSize == 0 {
		cfg.BatchSize = 100
	}
	cfg.BatchIdle = -1
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Second
	}
	if cfg.DisabledPolicies == nil {
		cfg.DisabledPolicies = gangBenchDisabled()
	}
	s, err := scheduler.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := New(s)
	if os.Getenv("WEAVE_GANG_BATCHES") != "" {
		c.BatchLog = func(placed, unplaced int, d time.Duration, st weave.Stats) {
			t.Logf("batch: placed %d, unplaced %d, %v (fetch %v ground %v solve %v, %d vars)", placed, unplaced, d.Round(time.Millisecond),
				st.Fetch.Round(time.Millisecond), st.Ground.Round(time.Millisecond), st.Solve.Round(time.Millisecond), st.Variables)
		}
	}
	for _, n := range nodes {
		if err := s.UpsertNode(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now()
	if err := c.RunGangs(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	d := time.Since(t0)
	at := map[string]string{}
	for name, p := range s.State().Pods {
		if p.NodeName != "" {
			at[name] = p.NodeName
		}
	}
	return at, d
}

// TestGangStrandingSim is Kueue issue #4474 replayed: nodes with 2, 1 and
// 1 GPUs in one rack, job A = 2 pods × 1 GPU then job B = 1 pod × 2 GPUs,
// both with the rack constraint. The greedy baseline with the default
// (least allocated) scoring puts A on the 2-GPU node and strands B; weave
// places both. The second case strands B under best fit (the greedy
// baseline with most-allocated scoring, and weave's own starting point,
// gangHint): nodes of 4 and 3 GPUs, A = 2 pods × 2 GPUs, B = 1 pod × 3
// GPUs; best fit puts A's first pod on the 3-GPU node. Deciding both
// groups in one model places both.
func TestGangStrandingSim(t *testing.T) {
	for _, c := range []struct {
		name       string
		gpus       []int64
		a, b       GangJob
		greedyMost bool
	}{
		{"kueue-4474", []int64{2, 1, 1}, GangJob{Name: "job-a", Workers: 2, GPUs: 1, Rack: true}, GangJob{Name: "job-b", Workers: 1, GPUs: 2, Rack: true}, false},
		{"best-fit", []int64{4, 3}, GangJob{Name: "job-a", Workers: 2, GPUs: 2, Rack: true}, GangJob{Name: "job-b", Workers: 1, GPUs: 3, Rack: true}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var nodes []scheduler.Node
			for i, g := range c.gpus {
				nodes = append(nodes, scheduler.Node{Name: fmt.Sprintf("n%d", i), CPU: 8000, Memory: 32000, Storage: 100000, Pods: 110,
					Labels: map[string]string{RackLabel: "rack-0"}, Resources: map[string]int64{GPU: g}})
			}
			jobs := []GangJob{c.a, c.b}
			greedy := judgeGangs(nodes, jobs, greedyGangs(nodes, jobs, c.greedyMost))
			// The joint placement is an improvement on the greedy hint, found in milliseconds; under a
			// loaded -race run those milliseconds of CPU can take longer than the default 100 ms wait for
			// it (UnplacedImprovementTimeout): a second makes the test about the model, not the machine.
			at, _ := weaveGangs(t, nodes, jobs, scheduler.Config{Verify: true, UnplacedImprovementTimeout: time.Second})
			w := judgeGangs(nodes, jobs, at)
			t.Logf("greedy (most allocated: %v): %v; weave: %v", c.greedyMost, greedy, w)
			if greedy.complete != 1 {
				t.Errorf("the greedy baseline should strand job B: %v", greedy)
			}
			if w.complete != 2 || w.partial != 0 || w.topology != 0 || w.overfull != 0 {
				t.Errorf("weave: %v", w)
			}
		})
	}
}

// TestGangWorkloads: the gang workload in-process (48 nodes × 8
// GPUs in 8 racks, jobs of 2–16 workers × 1–8 GPUs, half with a rack
// constraint, demand 115%) over WEAVE_GANG_SEEDS seeds (default 3): weave
// leaves no partial gang, no topology violation and no node over its GPUs
// (judged by judgeGangs, independently of the scheduler's check), and is
// compared with the greedy one-group-at-a-time baseline, both scorings.
func TestGangWorkloads(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds per seed")
	}
	seeds := int64(3)
	if n, err := strconv.ParseInt(os.Getenv("WEAVE_GANG_SEEDS"), 10, 64); err == nil && n > 0 {
		seeds = n
	}
	var idleW, idleMost, idleLeast int64
	for seed := int64(1); seed <= seeds; seed++ {
		nodes, jobs := GangWorkload(seed, 8, 6, 8, 1.15)
		at, d := weaveGangs(t, nodes, jobs, scheduler.Config{Seed: seed})
		w := judgeGangs(nodes, jobs, at)
		most := judgeGangs(nodes, jobs, greedyGangs(nodes, jobs, true))
		least := judgeGangs(nodes, jobs, greedyGangs(nodes, jobs, false))
		idleW, idleMost, idleLeast = idleW+w.idle(), idleMost+most.idle(), idleLeast+least.idle()
		t.Logf("seed %d: weave %v in %v; greedy most-allocated %v; greedy least-allocated %v", seed, w, d.Round(time.Millisecond), most, least)
		if w.partial != 0 || w.topology != 0 || w.overfull != 0 {
			t.Errorf("seed %d: weave %v", seed, w)
		}
		if most.partial != 0 || most.topology != 0 || least.partial != 0 || least.topology != 0 {
			t.Errorf("seed %d: the baseline is wrong: %v / %v", seed, most, least)
		}
	}
	t.Logf("GPUs idle over %d seeds: weave %d, greedy most-allocated %d, greedy least-allocated %d", seeds, idleW, idleMost, idleLeast)
	if idleW > idleLeast {
		t.Errorf("weave leaves more GPUs idle (%d) than the greedy baseline with kube-scheduler's default scoring (%d)", idleW, idleLeast)
	}
}

// cpuTime is the process's user and system CPU time so far: on a loaded
// machine a batch's CPU time says what its wall time would be alone (at
// most that, as fetch and ground overlap).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBatchLatencyGang: BatchLatency's measure for batches of about
// 100 pods in PodGroups (GangWorkload's jobs, half with a rack
// constraint, whole jobs per batch) on 500 nodes of 8 GPUs in 50 racks;
// the batches are kept (assumed bound), so the cluster fills up, and a
// fresh one starts once the jobs (100% of its GPUs) run out.
func BenchmarkBatchLatencyGang(b *testing.B) {
	b.Run("nodes=500/b=100", func(b *testing.B) { gangLatency(b, 50, 10, 100, nil) })
	b.Run("nodes=500/b=100/without-N5", func(b *testing.B) { gangLatency(b, 50, 10, 100, []string{"N5"}) })
}

// BenchmarkBatchLatencyGroups: BatchLatency's batch of 100 pods, all in
// PodGroups: jobs of 2–16 workers drawn as GangWorkload draws them (1–8
// GPUs a worker, at most 24 a job, about half with a rack constraint), the
// last one cut so that a batch is exactly 100 pods, on 500 nodes of 8 GPUs
// in 50 racks. As in BatchLatency the batches are assumed bound and the
// cluster fills; it starts afresh before a batch would take it past 90% of
// its GPUs. The budget: p50 under 50 ms, as an ordinary batch
// (run it beside BatchLatency/nodes=500/b=100). without-N5: the same
// batches with N5 disabled, what anti-fragmentation costs.
func BenchmarkBatchLatencyGroups(b *testing.B) {
	b.Run("nodes=500/b=100", func(b *testing.B) { groupLatency(b, 50, 10, 100, nil) })
	b.Run("nodes=500/b=100/without-N5", func(b *testing.B) { groupLatency(b, 50, 10, 100, []string{"N5"}) })
}

// groupBatch draws jobs of 2–16 workers (GangWorkload's rule) that add up
// to exactly size pods, named from the counter *next.
func groupBatch(rng *rand.Rand, size int, next *int) []GangJob {
	var jobs []GangJob
	for left := int64(size); left > 0; {
		w := 2 + rng.Int63n(15)
		if w > left || left-w == 1 {
			w = left
		}
		j := GangJob{Name: fmt.Sprintf("job-%04d", *next), Workers: w, GPUs: 1 + rng.Int63n(max(1, min(8, maxJobGPUs/w))), Rack: rng.Intn(2) == 0}
		*next++
		jobs = append(jobs, j)
		left -= w
	}
	return jobs
}

func groupLatency(b *testing.B, racks, perRack, bs int, disabled []string) {
	ctx := context.Background()
	var total, fetch, ground, solve, cpu []time.Duration
	var vars []int
	var s *scheduler.Scheduler
	var capacity, used int64
	rng := rand.New(rand.NewSource(1))
	next := 0
	reset := func() {
		if s != nil {
			s.Close()
		}
		var err error
		s, err = scheduler.New(scheduler.Config{BatchSize: bs, BatchIdle: -1, Timeout: 2 * time.Second, DisabledPolicies: append(gangBenchDisabled(), disabled...)})
		if err != nil {
			b.Fatal(err)
		}
		nodes, _ := GangWorkload(1, racks, perRack, 8, 0)
		capacity, used = 0, 0
		for _, n := range nodes {
			capacity += n.Resources[GPU]
			if err := s.UpsertNode(ctx, n); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	reset()
	defer func() { s.Close() }()
	placed, pods := 0, 0
	for i := 0; i < b.N; i++ {
		jobs := groupBatch(rng, bs, &next)
		var gpus int64
		for _, j := range jobs {
			gpus += j.Workers * j.GPUs
		}
		if used+gpus > capacity*9/10 {
			reset()
		}
		used += gpus
		for _, j := range jobs {
			if err := s.UpsertPodGroup(ctx, j.Group()); err != nil {
				b.Fatal(err)
			}
			for _, p := range j.Pods() {
				if err := s.UpsertPod(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.StartTimer()
		c0 := cpuTime()
		t0 := time.Now()
		bnd, us, err := s.ScheduleBatch(ctx)
		d := time.Since(t0)
		cpu = append(cpu, cpuTime()-c0)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		for _, u := range us { // left out: not retried
			if err := s.DeletePod(ctx, u.Pod); err != nil {
				b.Fatal(err)
			}
		}
		placed, pods = placed+len(bnd), pods+len(bnd)+len(us)
		st := s.LastStats()
		total = append(total, d)
		fetch, ground, solve = append(fetch, st.Fetch), append(ground, st.Ground), append(solve, st.Solve)
		vars = append(vars, st.Variables)
	}
	reportGangBatches(b, total, cpu, fetch, ground, solve, vars, pods, placed)
}

// gangBenchDisabled: WEAVE_GANG_DISABLE lists policies to leave out of
// BenchmarkBatchLatencyGang, BenchmarkBatchLatencyGroups and the gang
// workload runs (G1,G2: what the gang policies cost; N5: what
// anti-fragmentation costs and is worth).
func gangBenchDisabled() []string {
	if v := os.Getenv("WEAVE_GANG_DISABLE"); v != "" {
		return strings.Split(v, ",")
	}
	return nil
}

func gangLatency(b *testing.B, racks, perRack, bs int, disabled []string) {
	ctx := context.Background()
	var total, fetch, ground, solve, cpu []time.Duration
	var vars []int
	var s *scheduler.Scheduler
	var jobs []GangJob
	seed := int64(0)
	reset := func() {
		if s != nil {
			s.Close()
		}
		var err error
		s, err = scheduler.New(scheduler.Config{BatchSize: bs, BatchIdle: -1, Timeout: 2 * time.Second, DisabledPolicies: append(gangBenchDisabled(), disabled...)})
		if err != nil {
			b.Fatal(err)
		}
		seed++
		var nodes []scheduler.Node
		nodes, jobs = GangWorkload(seed, racks, perRack, 8, 1.0)
		for _, n := range nodes {
			if err := s.UpsertNode(ctx, n); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	reset()
	defer func() { s.Close() }()
	placed, pods := 0, 0
	for i := 0; i < b.N; i++ {
		if len(jobs) == 0 {
			reset()
		}
		n := 0
		for len(jobs) > 0 && n+int(jobs[0].Workers) <= bs {
			j := jobs[0]
			jobs = jobs[1:]
			if err := s.UpsertPodGroup(ctx, j.Group()); err != nil {
				b.Fatal(err)
			}
			for _, p := range j.Pods() {
				if err := s.UpsertPod(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
			n += int(j.Workers)
		}
		b.StartTimer()
		c0 := cpuTime()
		t0 := time.Now()
		bnd, us, err := s.ScheduleBatch(ctx)
		d := time.Since(t0)
		cpu = append(cpu, cpuTime()-c0)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		for _, u := range us { // left out: not retried, the next batch is new jobs
			if err := s.DeletePod(ctx, u.Pod); err != nil {
				b.Fatal(err)
			}
		}
		placed, pods = placed+len(bnd), pods+len(bnd)+len(us)
		st := s.LastStats()
		total = append(total, d)
		fetch, ground, solve = append(fetch, st.Fetch), append(ground, st.Ground), append(solve, st.Solve)
		vars = append(vars, st.Variables)
	}
	reportGangBatches(b, total, cpu, fetch, ground, solve, vars, pods, placed)
}

// reportGangBatches reports the gang batch benchmarks' metrics: the
// percentiles of the batches' times and phases, the pods per batch, the
// share placed and the median variables.
func reportGangBatches(b *testing.B, total, cpu, fetch, ground, solve []time.Duration, vars []int, pods, placed int) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(percentile(total, 0.5)), "p50-ms")
	b.ReportMetric(ms(percentile(total, 0.95)), "p95-ms")
	b.ReportMetric(ms(percentile(cpu, 0.5)), "cpu-p50-ms")
	b.ReportMetric(ms(percentile(fetch, 0.5)), "fetch-p50-ms")
	b.ReportMetric(ms(percentile(ground, 0.5)), "ground-p50-ms")
	b.ReportMetric(ms(percentile(solve, 0.5)), "solve-p50-ms")
	b.ReportMetric(float64(pods)/float64(b.N), "pods/batch")
	b.ReportMetric(float64(placed)/float64(max(pods, 1)), "placed-share")
	sort.Ints(vars)
	b.ReportMetric(float64(vars[len(vars)/2]), "vars-p50")
}
