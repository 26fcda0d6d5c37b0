package sim

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weavesql/weave/scheduler"
)

func newCluster(t testing.TB, b int, timeout time.Duration, verify bool) *Cluster {
	s, err := scheduler.New(scheduler.Config{BatchSize: b, BatchIdle: -1, Timeout: timeout, Verify: verify})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return New(s)
}

// TestNginxRedisReplay replays a small nginx+redis workload through the
// simulator: every pod is placed, redis and nginx replicas of an app never
// share a node, and every nginx sits next to a redis of its app.
func TestNginxRedisReplay(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, 20, 5*time.Second, true)
	if err := c.AddNodes(ctx, "n", 8, 2, scheduler.Node{CPU: 8000, Memory: 16000, Storage: 100000, Pods: 110}); err != nil {
		t.Fatal(err)
	}
	pods := NginxRedis(3, 4, 4)
	for len(pods) > 0 || len(c.S.Pending()) > 0 {
		k := min(10, len(pods))
		for _, p := range pods[:k] {
			if err := c.Submit(ctx, p, 0); err != nil {
				t.Fatal(err)
			}
		}
		pods = pods[k:]
		bs, us, err := c.S.ScheduleBatch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Apply(ctx, bs, nil); err != nil {
			t.Fatal(err)
		}
		c.Advance(ctx, time.Second)
		if len(bs) == 0 && len(pods) == 0 {
			t.Fatalf("stuck with %d unschedulable: %v", len(us), us)
		}
	}
	c.Advance(ctx, 10*time.Second)
	st := c.S.State()
	at := map[string]map[string]bool{} // group → nodes
	for _, p := range st.Pods {
		if p.Phase != scheduler.PhaseRunning {
			t.Errorf("%s is %s", p.Name, p.Phase)
		}
		if at[p.Group] == nil {
			at[p.Group] = map[string]bool{}
		}
		if at[p.Group][p.NodeName] {
			t.Errorf("two %s pods on %s", p.Group, p.NodeName)
		}
		at[p.Group][p.NodeName] = true
	}
	for _, p := range st.Pods {
		if p.Group[:5] == "nginx" && !at["redis"+p.Group[5:]][p.NodeName] {
			t.Errorf("%s on %s has no redis of its app", p.Name, p.NodeName)
		}
	}
	if len(st.Pods) != 24 {
		t.Errorf("%d pods", len(st.Pods))
	}
}

// TestNginxRedisTwoLabels: the nginx+redis workload as users write it
// (selectors of two labels, app and role, each shared with the other kind
// of pod), 4 apps of 30 redis and 30 nginx on 40 nodes in batches of 100:
// every pod is placed, every nginx pod shares its node with a redis pod of
// its app, no two nginx (nor two redis) of an app share a node, and the
// whole placement has an order of binding in which each pod passes
// kube-scheduler's InterPodAffinity Filter (State.Check from an empty
// cluster). Selectors narrowed to their first label (app) put most nginx
// pods next to nginx pods instead, and a second nginx of an app on a node.
func TestNginxRedisTwoLabels(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, 100, 10*time.Second, true)
	if err := c.AddNodes(ctx, "n", 40, 3, scheduler.Node{CPU: 64000, Memory: 256000, Storage: 100000, Pods: 110}); err != nil {
		t.Fatal(err)
	}
	pods := NginxRedis(4, 30, 30)
	for _, p := range pods {
		if err := c.Submit(ctx, p, 0); err != nil {
			t.Fatal(err)
		}
	}
	for len(c.S.Pending()) > 0 {
		bs, us, err := c.S.ScheduleBatch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(bs) == 0 {
			t.Fatalf("stuck: %d pending, unschedulable %v", len(c.S.Pending()), us)
		}
	}
	st := c.S.State()
	type key struct{ app, role, node string }
	on := map[key]int{}
	var all []*scheduler.Pod
	for _, p := range st.Pods {
		if p.NodeName == "" {
			t.Fatalf("%s not placed", p.Name)
		}
		on[key{p.Labels["app"], p.Labels["role"], p.NodeName}]++
		all = append(all, p)
	}
	for k, n := range on {
		if n > 1 {
			t.Errorf("%d %s pods of %s on %s", n, k.role, k.app, k.node)
		}
		if k.role == "nginx" && on[key{k.app, "redis", k.node}] == 0 {
			t.Errorf("an nginx pod of %s on %s has no redis of its app there", k.app, k.node)
		}
	}
	// From an empty cluster: every pod of the workload, bound in some order.
	empty := scheduler.NewState()
	for name, n := range st.Nodes {
		empty.Nodes[name] = n
	}
	for _, p := range all {
		q := *p
		q.Phase = scheduler.PhasePending
		empty.Pods[q.Name] = &q
	}
	var batch []*scheduler.Pod
	for _, p := range empty.Pods {
		batch = append(batch, p)
	}
	if err := empty.Check(batch); err != nil {
		t.Fatal(err)
	}
}

// TestLifecycleAndPreemptionReplay: low-priority pods fill the cluster,
// high-priority pods arrive, the preemption model evicts, the simulator
// recreates the victims pending, and finished pods free room.
func TestLifecycleAndPreemptionReplay(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, 10, 5*time.Second, true)
	c.Recreate = true
	c.AddNodes(ctx, "n", 3, 1, scheduler.Node{CPU: 4000, Memory: 4000, Storage: 1000, Pods: 110})
	for i := 0; i < 6; i++ {
		c.Submit(ctx, scheduler.Pod{Name: fmt.Sprintf("low-%d", i), CPU: 2000, Memory: 100, Priority: 1}, 30*time.Second)
	}
	bs, _, err := c.S.ScheduleBatch(ctx)
	if err != nil || len(bs) != 6 {
		t.Fatalf("%v %v", bs, err)
	}
	c.Apply(ctx, bs, nil)
	c.Advance(ctx, 6*time.Second)
	for i := 0; i < 3; i++ {
		c.Submit(ctx, scheduler.Pod{Name: fmt.Sprintf("high-%d", i), CPU: 2000, Memory: 100, Priority: 3}, 0)
	}
	bs, us, err := c.S.ScheduleBatch(ctx)
	if err != nil || len(bs) != 0 || len(us) != 3 {
		t.Fatalf("full cluster: %v %v %v", bs, us, err)
	}
	bs, ev, us, err := c.S.Preempt(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 3 || len(ev) != 3 || len(us) != 0 {
		t.Fatalf("preemption: bindings %v evictions %v unschedulable %v", bs, ev, us)
	}
	c.Apply(ctx, bs, ev)
	if got := len(c.S.Pending()); got != 3 {
		t.Fatalf("%d pending after recreation, want the 3 victims", got)
	}
	// The remaining low pods finish; the victims then fit.
	c.Advance(ctx, 40*time.Second)
	bs, _, err = c.S.ScheduleBatch(ctx)
	if err != nil || len(bs) != 3 {
		t.Fatalf("victims after the low pods finished: %v %v", bs, err)
	}
}

func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// BenchmarkBatchLatency: per-batch latency of the placement model with the
// paper's nginx+redis workload (30 apps; per app 40 redis then 40 nginx on
// 500 nodes and more, 20+20 on 50 nodes), b pods submitted before each
// batch, on 50, 500, 5,000 and 10,000 nodes (the larger with
// -benchtime 4x: a batch takes seconds there). It reports p50/p95 of the
// whole batch and Weave's phases.
func BenchmarkBatchLatency(b *testing.B) {
	for _, nodes := range []int{50, 500, 5000, 10000} {
		for _, bs := range []int{1, 10, 50, 100} {
			b.Run(fmt.Sprintf("nodes=%d/b=%d", nodes, bs), func(b *testing.B) { batchLatency(b, nodes, bs, 0, false) })
		}
	}
}

// BenchmarkBatchLatencyRunningPods: BatchLatency's batches of 100 on a
// cluster whose nodes already run pods (10 a node, bound before the clock
// starts): what the database reads of the running pods should follow the
// nodes a batch may use, not the cluster's pods.
func BenchmarkBatchLatencyRunningPods(b *testing.B) {
	for _, nodes := range []int{500, 5000} {
		b.Run(fmt.Sprintf("nodes=%d/running=%d/b=100", nodes, 10*nodes), func(b *testing.B) { batchLatency(b, nodes, 100, 10, false) })
	}
}

// BenchmarkBatchLatencyGPU: BatchLatency's batches with every node offering
// 32 GPUs (nvidia.com/gpu) and every other pod requesting one: what H5's
// scalar file (node_resource_free, a load per sampled node) costs when a
// batch asks for a scalar resource. 32 is more than a batch's 50 GPU pods
// need per node but less than they ask in all, so the bounds are posted
// and every pod still fits: with 8, the nginx pods' affinity to their redis
// pods packs the apps onto a few nodes whose GPUs run out, and the later
// batches leave pods without a node (no node fits them: FeasibleNodes is
// empty), which measures the fallback solve, not the policy.
func BenchmarkBatchLatencyGPU(b *testing.B) {
	for _, nodes := range []int{500, 5000} {
		b.Run(fmt.Sprintf("nodes=%d/b=100", nodes), func(b *testing.B) { batchLatency(b, nodes, 100, 0, true) })
	}
}

// batchLatency submits nginx+redis pods (30 apps) in batches of bs to a
// cluster of nodes nodes, each running the given number of small pods, and
// reports the percentiles of a batch's time and phases. The batches are
// not applied: each meets the same cluster. With gpus, every node offers 32
// GPUs and every other pod requests one.
func batchLatency(b *testing.B, nodes, bs, running int, gpus bool) {
	ctx := context.Background()
	per := 20
	if nodes >= 500 {
		per = 40
	}
	var total, fetch, ground, solve, extract []time.Duration
	var vars []int
	var c *Cluster
	var pods []scheduler.Pod
	reset := func() {
		c = newCluster(b, bs, 500*time.Millisecond, false)
		node := scheduler.Node{CPU: 64000, Memory: 256000, Storage: 100000, Pods: 110}
		if gpus {
			node.Resources = map[string]int64{"nvidia.com/gpu": 32}
		}
		c.AddNodes(ctx, "n", nodes, 3, node)
		for i := 0; i < running*nodes; i++ {
			p := scheduler.Pod{Name: fmt.Sprintf("running-%d", i), CPU: 100, Memory: 128, NodeName: fmt.Sprintf("n-%04d", i%nodes), Phase: scheduler.PhaseRunning}
			if err := c.Submit(ctx, p, 0); err != nil {
				b.Fatal(err)
			}
		}
		pods = NginxRedis(30, per, per)
		for i := range pods {
			if gpus && i%2 == 0 {
				pods[i].Resources = map[string]int64{"nvidia.com/gpu": 1}
			}
		}
	}
	b.StopTimer()
	reset()
	for i := 0; i < b.N; i++ {
		if len(pods) == 0 {
			reset()
		}
		k := min(bs, len(pods))
		for _, p := range pods[:k] {
			c.Submit(ctx, p, 0)
		}
		pods = pods[k:]
		b.StartTimer()
		t0 := time.Now()
		_, _, err := c.S.ScheduleBatch(ctx)
		d := time.Since(t0)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		st := c.S.LastStats()
		total = append(total, d)
		fetch, ground, solve, extract = append(fetch, st.Fetch), append(ground, st.Ground), append(solve, st.Solve), append(extract, st.Extract)
		vars = append(vars, st.Variables)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(percentile(total, 0.5)), "p50-ms")
	b.ReportMetric(ms(percentile(total, 0.95)), "p95-ms")
	b.ReportMetric(ms(percentile(fetch, 0.5)), "fetch-p50-ms")
	b.ReportMetric(ms(percentile(ground, 0.5)), "ground-p50-ms")
	b.ReportMetric(ms(percentile(solve, 0.5)), "solve-p50-ms")
	b.ReportMetric(ms(percentile(extract, 0.5)), "extract-p50-ms")
	sort.Ints(vars)
	b.ReportMetric(float64(vars[len(vars)/2]), "vars-p50")
}

// positiveInts reads the environment variable name as a comma-separated
// list of positive integers (the benchmark's sizes), or returns def when
// it is unset.
func positiveInts(b *testing.B, name string, def []int) []int {
	list := os.Getenv(name)
	if list == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("%s: %q is not a positive number", name, f)
		}
		out = append(out, n)
	}
	return out
}

// BenchmarkPlacementQuality: the paper's heterogeneous workload (30 apps ×
// 10 pods, exponential CPU and memory demands), one pod at a time (b = 1,
// like kube-scheduler), in batches of 100, and all 300 in one batch, over
// WEAVE_QUALITY_SEEDS seeds (default 5; the paper ran 35), or in the batch
// sizes WEAVE_QUALITY_BATCHES lists (e.g. "10,25,50"): the fraction of
// pods placed on 20 nodes of 16 cores / 32 GiB (load ≈ 94%). Each seed's
// count is logged (-v): a seed on which some batch size places all 300 pods
// has a packing, which the others should find too.
//
// The target is "100% where a packing exists", so each seed is
// also classified: a seed whose total CPU or memory demand exceeds the
// cluster's capacity has no packing (7 of the first 35 seeds), and
// runs-all-placed-packable is the share of the other seeds on which all
// 300 pods were placed.
func BenchmarkPlacementQuality(b *testing.B) {
	seedCount := int64(5)
	if n, err := strconv.ParseInt(os.Getenv("WEAVE_QUALITY_SEEDS"), 10, 64); err == nil && n > 0 {
		seedCount = n
	}
	sizes := positiveInts(b, "WEAVE_QUALITY_BATCHES", []int{1, 100, 300})
	for _, bs := range sizes {
		b.Run(fmt.Sprintf("b=%d", bs), func(b *testing.B) {
			ctx := context.Background()
			timeout := 2 * time.Second
			if bs > 100 {
				timeout = 10 * time.Second
			}
			var placed, all int
			full, fullPackable := 0, 0
			seeds, packable := 0, 0
			for i := 0; i < b.N; i++ {
				for seed := int64(1); seed <= seedCount; seed++ {
					c := newCluster(b, bs, timeout, false)
					node := scheduler.Node{CPU: 16000, Memory: 32000, Storage: 100000, Pods: 110}
					c.AddNodes(ctx, "n", 20, 2, node)
					pods := Heterogeneous(seed, 30, 10, 1000, 2000)
					over := demandOverCapacity(pods, node, 20)
					if over == "" {
						packable++
					}
					for len(pods) > 0 {
						k := min(bs, len(pods))
						for _, p := range pods[:k] {
							c.Submit(ctx, p, 0)
						}
						pods = pods[k:]
						_, us, err := c.S.ScheduleBatch(ctx)
						if err != nil {
							b.Fatal(err)
						}
						for _, u := range us { // unschedulable pods leave the queue
							c.S.DeletePod(ctx, u.Pod)
						}
					}
					n := c.Placed()
					if over != "" {
						b.Logf("seed %d: %d of 300 placed (no packing: %s)", seed, n, over)
					} else {
						b.Logf("seed %d: %d of 300 placed", seed, n)
					}
					placed += n
					all += 300
					seeds++
					if n == 300 {
						full++
						if over == "" {
							fullPackable++
						}
					}
				}
			}
			b.ReportMetric(float64(placed)/float64(all), "placed-frac")
			b.ReportMetric(float64(full)/float64(seeds), "runs-all-placed")
			b.ReportMetric(float64(fullPackable)/float64(max(packable, 1)), "runs-all-placed-packable")
		})
	}
}

// demandOverCapacity says which resource the pods' total demand exceeds
// on nodes identical copies of node ("" when neither does): then no
// placement of all of them exists.
func demandOverCapacity(pods []scheduler.Pod, node scheduler.Node, nodes int64) string {
	var cpu, mem int64
	for _, p := range pods {
		cpu += p.CPU
		mem += p.Memory
	}
	switch {
	case cpu > node.CPU*nodes:
		return fmt.Sprintf("CPU demand %d > capacity %d", cpu, node.CPU*nodes)
	case mem > node.Memory*nodes:
		return fmt.Sprintf("memory demand %d > capacity %d", mem, node.Memory*nodes)
	}
	return ""
}

// TestDemandOverCapacity: the classification the quality benchmark relies
// on — the pods of seed 7 ask for more memory than 20 nodes have, those
// of seed 1 fit in total, and one more CPU-heavy pod tips seed 1 over.
func TestDemandOverCapacity(t *testing.T) {
	node := scheduler.Node{CPU: 16000, Memory: 32000, Storage: 100000, Pods: 110}
	if got := demandOverCapacity(Heterogeneous(7, 30, 10, 1000, 2000), node, 20); !strings.HasPrefix(got, "memory demand") {
		t.Errorf("seed 7: %q, want memory demand over capacity", got)
	}
	pods := Heterogeneous(1, 30, 10, 1000, 2000)
	if got := demandOverCapacity(pods, node, 20); got != "" {
		t.Errorf("seed 1: %q, want it to fit in total", got)
	}
	pods = append(pods, scheduler.Pod{Name: "big", CPU: 60000})
	if got := demandOverCapacity(pods, node, 20); !strings.HasPrefix(got, "CPU demand") {
		t.Errorf("seed 1 plus a 60-core pod: %q, want CPU demand over capacity", got)
	}
}

// BenchmarkNodeAffinityBatch: batches of 100 pods with required node
// affinity (zone In z0, z1) on 500 nodes in three zones, the pods staying
// bound (scheduler_perf's SchedulingNodeAffinity shape). The database
// computes the (pod, term, node) pairs a term fails on; before commit
// c980ebc it re-read every bound pod's terms for each pair (9 s, 33 s, then 75 s
// for the first three batches).
//
//	go test ./scheduler/sim -run XXX -bench NodeAffinityBatch -benchtime 8x
func BenchmarkNodeAffinityBatch(b *testing.B) {
	ctx := context.Background()
	c := newCluster(b, 100, 2*time.Second, false)
	if err := c.AddNodes(ctx, "n", 500, 3, scheduler.Node{CPU: 64000, Memory: 256000, Storage: 100000, Pods: 110}); err != nil {
		b.Fatal(err)
	}
	var total, fetch []time.Duration
	placed := 0
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		for k := 0; k < 100; k++ {
			p := scheduler.Pod{Name: fmt.Sprintf("p%d-%d", i, k), CPU: 100, Memory: 500}
			p.RequiredNodeAffinity = [][]scheduler.NodeRequirement{{{Key: scheduler.LabelZone, Operator: "In", Values: []string{"z0", "z1"}}}}
			c.Submit(ctx, p, 0)
		}
		b.StartTimer()
		t0 := time.Now()
		bs, _, err := c.S.ScheduleBatch(ctx)
		total = append(total, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		placed += len(bs)
		fetch = append(fetch, c.S.LastStats().Fetch)
	}
	if placed != 100*len(total) {
		b.Fatalf("%d of %d pods placed", placed, 100*len(total))
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(percentile(total, 0.5)), "p50-ms")
	b.ReportMetric(ms(percentile(fetch, 0.5)), "fetch-p50-ms")
}

// TestModelSizeFollowsTheBatch: batch after batch of one group's pods (S1
// spreads a group, N2/N3 count its pods per zone), the placement model
// stays the size of the batch while the group's bound pods grow. S1 had a
// literal per (pending pod, node holding the group), and the zone counts
// one per (pending pod, node): 150,000 variables per 100-pod batch on 500
// nodes, growing by 10,000 a batch.
func TestModelSizeFollowsTheBatch(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, 20, 5*time.Second, true)
	if err := c.AddNodes(ctx, "n", 60, 3, scheduler.Node{CPU: 64000, Memory: 256000, Storage: 100000, Pods: 110}); err != nil {
		t.Fatal(err)
	}
	var vars []int
	blue := map[string]string{"color": "blue"}
	for b := 0; b < 5; b++ {
		for i := 0; i < 20; i++ {
			p := scheduler.Pod{Name: fmt.Sprintf("blue-%d-%d", b, i), Group: "blue", CPU: 100, Memory: 100, Labels: blue,
				Spread: []scheduler.SpreadConstraint{{TopologyKey: scheduler.LabelZone, MaxSkew: 5, Hard: true, Selector: scheduler.SelectLabels(blue)}}}
			if err := c.Submit(ctx, p, 0); err != nil {
				t.Fatal(err)
			}
		}
		bs, us, err := c.S.ScheduleBatch(ctx)
		if err != nil || len(bs) != 20 || len(us) != 0 {
			t.Fatalf("batch %d: %d bound, unschedulable %v, %v", b, len(bs), us, err)
		}
		if err := c.Apply(ctx, bs, nil); err != nil {
			t.Fatal(err)
		}
		vars = append(vars, c.S.LastStats().Variables)
	}
	// 20 pods × 60 nodes would be 1,200 literals per source of growth.
	if vars[4] > vars[1]+100 || vars[4] > 20*60 {
		t.Fatalf("variables per batch %v: the model grows with the bound pods or the nodes", vars)
	}
}

// BenchmarkScaleWorkloads: in-process batches of scheduler_perf's 500-node
// workloads (the live ones are weave-bench scale's): init pods, then the
// measured pods, 100 per batch, on 500 nodes of 4 CPUs and 32 GiB in 3
// zones. It reports the p50 and p95 of the measured batches and the
// variables of the last (flat: the model follows the batch).
// WEAVE_SCALE_NODES (a comma-separated list, e.g. 500,15000) runs each
// workload on those cluster sizes instead, as sub-benchmarks nodes=N, with
// the same pods: how the per-batch cost grows with the cluster.
func BenchmarkScaleWorkloads(b *testing.B) {
	sizes := positiveInts(b, "WEAVE_SCALE_NODES", []int{500})
	def := func(name string) scheduler.Pod { return scheduler.Pod{Name: name, CPU: 100, Memory: 500} }
	plain := func(prefix string) func(int) scheduler.Pod {
		return func(i int) scheduler.Pod { return def(fmt.Sprintf("%s-%d", prefix, i)) }
	}
	anti := func(prefix string) func(int) scheduler.Pod {
		return func(i int) scheduler.Pod {
			p := def(fmt.Sprintf("%s-%d", prefix, i))
			p.Labels = map[string]string{"color": "green"}
			p.Affinity = []scheduler.PodAffinityTerm{{Anti: true, Required: true, Selector: scheduler.SelectLabels(map[string]string{"color": "green"}), TopologyKey: scheduler.LabelHostname}}
			return p
		}
	}
	aff := func(prefix string) func(int) scheduler.Pod {
		return func(i int) scheduler.Pod {
			p := def(fmt.Sprintf("%s-%d", prefix, i))
			p.Labels = map[string]string{"foo": "bar"}
			p.Affinity = []scheduler.PodAffinityTerm{{Required: true, Selector: scheduler.SelectLabels(map[string]string{"foo": "bar"}), TopologyKey: scheduler.LabelZone}}
			return p
		}
	}
	nodeAff := func(prefix string) func(int) scheduler.Pod {
		return func(i int) scheduler.Pod {
			p := def(fmt.Sprintf("%s-%d", prefix, i))
			p.RequiredNodeAffinity = [][]scheduler.NodeRequirement{{{Key: scheduler.LabelZone, Operator: "In", Values: []string{"z0", "z1"}}}}
			return p
		}
	}
	spread := func(i int) scheduler.Pod {
		p := def(fmt.Sprintf("pod-%d", i))
		p.Group = "blue"
		p.Labels = map[string]string{"color": "blue"}
		p.Spread = []scheduler.SpreadConstraint{{TopologyKey: scheduler.LabelZone, MaxSkew: 5, Hard: true, Selector: scheduler.SelectLabels(p.Labels)}}
		return p
	}
	for _, w := range []struct {
		name          string
		init, measure int
		initPod, pod  func(int) scheduler.Pod
	}{
		{"SchedulingBasic", 500, 1000, plain("init"), plain("pod")},
		{"SchedulingPodAntiAffinity", 100, 400, anti("init"), anti("pod")},
		{"SchedulingPodAffinity", 500, 1000, aff("init"), aff("pod")},
		{"SchedulingNodeAffinity", 500, 1000, nodeAff("init"), nodeAff("pod")},
		{"TopologySpreading", 1000, 1000, plain("init"), spread},
	} {
		for _, nodes := range sizes {
			name := w.name
			if len(sizes) > 1 || nodes != 500 {
				name += fmt.Sprintf("/nodes=%d", nodes)
			}
			b.Run(name, func(b *testing.B) { scaleWorkload(b, nodes, w.init, w.measure, w.initPod, w.pod) })
		}
	}
	for _, nodes := range sizes {
		name := "PreemptionBasic"
		if len(sizes) > 1 || nodes != 500 {
			name += fmt.Sprintf("/nodes=%d", nodes)
		}
		b.Run(name, func(b *testing.B) { preemptionWorkload(b, nodes) })
	}
}

// preemptionWorkload is scheduler_perf's PreemptionBasic in-process, as
// weave-bench scale runs it live: low-priority pods of 900m fill the
// 4-CPU nodes (four each), then min(500, nodes) high-priority pods of 3
// CPUs arrive, 100 at a time, each needing three of them evicted. A
// measured batch is the placement batch that finds no room and the
// preemption plan for its pods (PreemptPods, as weave-scheduler plans),
// whose victims are deleted and bindings applied before the next.
func preemptionWorkload(b *testing.B, nodes int) {
	ctx := context.Background()
	var ds []time.Duration
	vars, evicted := 0, 0
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		c := newCluster(b, 100, 2*time.Second, false)
		if err := c.AddNodes(ctx, "n", nodes, 3, scheduler.Node{CPU: 4000, Memory: 32768, Storage: 100000, Pods: 110}); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < 4*nodes; i += 100 {
			for j := i; j < min(4*nodes, i+100); j++ {
				if err := c.Submit(ctx, scheduler.Pod{Name: fmt.Sprintf("low-%d", j), CPU: 900, Memory: 500, Priority: 1}, 0); err != nil {
					b.Fatal(err)
				}
			}
			bs, us, err := c.S.ScheduleBatch(ctx)
			if err != nil || len(us) != 0 {
				b.Fatalf("init batch %d: %v, unschedulable %v", i/100, err, us)
			}
			if err := c.Apply(ctx, bs, nil); err != nil {
				b.Fatal(err)
			}
		}
		measure := min(500, nodes)
		for i := 0; i < measure; i += 100 {
			n := min(measure, i+100) - i
			for j := i; j < i+n; j++ {
				if err := c.Submit(ctx, scheduler.Pod{Name: fmt.Sprintf("high-%d", j), CPU: 3000, Memory: 500, Priority: 10}, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
			t0 := time.Now()
			bs, us, err := c.S.ScheduleBatch(ctx)
			if err != nil || len(bs) != 0 || len(us) != n {
				b.Fatalf("batch %d: %d bound, %d unschedulable of %d, %v (the nodes should be full)", i/100, len(bs), len(us), n, err)
			}
			var names []string
			for _, u := range us {
				names = append(names, u.Pod)
			}
			bs, ev, us, err := c.S.PreemptPods(ctx, names)
			d := time.Since(t0)
			b.StopTimer()
			if err != nil || len(us) != 0 || len(bs) != n || len(ev) != 3*n {
				b.Fatalf("preemption %d: %d bound, %d evicted, unschedulable %v of %d, %v", i/100, len(bs), len(ev), us, n, err)
			}
			for _, e := range ev {
				if err := c.S.DeletePod(ctx, e.Pod); err != nil {
					b.Fatal(err)
				}
			}
			if err := c.Apply(ctx, bs, nil); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, d)
			vars, evicted = c.S.LastStats().Variables, evicted+len(ev)
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(percentile(ds, 0.5)), "p50-ms")
	b.ReportMetric(ms(percentile(ds, 0.95)), "p95-ms")
	b.ReportMetric(float64(vars), "vars-last")
	b.ReportMetric(float64(evicted)/float64(b.N), "evicted")
}

// scaleWorkload is one workload of BenchmarkScaleWorkloads on a cluster of
// the given size.
func scaleWorkload(b *testing.B, nodes, init, measure int, initPod, pod func(int) scheduler.Pod) {
	ctx := context.Background()
	var ds []time.Duration
	vars := 0
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		c := newCluster(b, 100, 2*time.Second, false)
		if err := c.AddNodes(ctx, "n", nodes, 3, scheduler.Node{CPU: 4000, Memory: 32768, Storage: 100000, Pods: 110}); err != nil {
			b.Fatal(err)
		}
		run := func(n int, pod func(int) scheduler.Pod, timed bool) {
			for i := 0; i < n; i += 100 {
				for j := i; j < min(n, i+100); j++ {
					if err := c.Submit(ctx, pod(j), 0); err != nil {
						b.Fatal(err)
					}
				}
				if timed {
					b.StartTimer()
				}
				t0 := time.Now()
				bs, us, err := c.S.ScheduleBatch(ctx)
				d := time.Since(t0)
				b.StopTimer()
				if err != nil || len(us) != 0 {
					b.Fatalf("batch %d: %v, unschedulable %v", i/100, err, us)
				}
				if err := c.Apply(ctx, bs, nil); err != nil {
					b.Fatal(err)
				}
				if timed {
					ds = append(ds, d)
					vars = c.S.LastStats().Variables
				}
			}
		}
		run(init, initPod, false)
		run(measure, pod, true)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(percentile(ds, 0.5)), "p50-ms")
	b.ReportMetric(ms(percentile(ds, 0.95)), "p95-ms")
	b.ReportMetric(float64(vars), "vars-last")
}

// BenchmarkBurstQuality: BenchmarkPlacementQuality's workload arriving as a
// burst while the loop runs, as weave-bench's experiment 3 creates it live:
// the 300 pods come one every burstEvery (WEAVE_BURST_EVERY, default 2ms,
// 500 pods/s) and the loop takes batches (up to 100) as WaitBatch gives
// them, with the burst linger at its default and off. Reported: the pods
// placed, the runs with every pod placed among those whose demand fits,
// and the mean batch size, over WEAVE_QUALITY_SEEDS seeds (default 5).
func BenchmarkBurstQuality(b *testing.B) {
	seedCount := int64(5)
	if n, err := strconv.ParseInt(os.Getenv("WEAVE_QUALITY_SEEDS"), 10, 64); err == nil && n > 0 {
		seedCount = n
	}
	every := 2 * time.Millisecond
	if d, err := time.ParseDuration(os.Getenv("WEAVE_BURST_EVERY")); err == nil && d > 0 {
		every = d
	}
	for _, v := range []struct {
		name   string
		linger time.Duration
	}{{"linger=default", 0}, {"linger=off", -1}} {
		b.Run(v.name, func(b *testing.B) {
			ctx := context.Background()
			var placed, all, batches, fullPackable, packable int
			for i := 0; i < b.N; i++ {
				for seed := int64(1); seed <= seedCount; seed++ {
					s, err := scheduler.New(scheduler.Config{BatchSize: 100, BurstLinger: v.linger, Timeout: 2 * time.Second})
					if err != nil {
						b.Fatal(err)
					}
					c := New(s)
					node := scheduler.Node{CPU: 16000, Memory: 32000, Storage: 100000, Pods: 110}
					if err := c.AddNodes(ctx, "n", 20, 2, node); err != nil {
						b.Fatal(err)
					}
					pods := Heterogeneous(seed, 30, 10, 1000, 2000)
					if demandOverCapacity(pods, node, 20) == "" {
						packable++
					}
					fed := make(chan error, 1)
					go func() { // the burst: UpsertPod is safe for concurrent use; Submit's maps are not
						t := time.NewTicker(every)
						defer t.Stop()
						for _, p := range pods {
							<-t.C
							if err := s.UpsertPod(ctx, p); err != nil {
								fed <- err
								return
							}
						}
						fed <- nil
					}()
					decided := 0
					for decided < len(pods) {
						bs, us, err := s.ScheduleBatch(ctx)
						if err != nil {
							b.Fatal(err)
						}
						batches++
						decided += len(bs) + len(us)
						for _, u := range us { // unschedulable pods leave the queue, as in PlacementQuality
							s.DeletePod(ctx, u.Pod)
						}
					}
					if err := <-fed; err != nil {
						b.Fatal(err)
					}
					n := c.Placed()
					b.Logf("seed %d: %d of 300 placed", seed, n)
					placed += n
					all += len(pods)
					if n == len(pods) {
						fullPackable++ // a full placement proves the demand fits
					}
					s.Close()
				}
			}
			b.ReportMetric(float64(placed)/float64(all), "placed-frac")
			b.ReportMetric(float64(fullPackable)/float64(max(packable, 1)), "runs-all-placed-packable")
			b.ReportMetric(float64(all)/float64(batches), "pods/batch")
		})
	}
}
