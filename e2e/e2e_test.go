// Integration tests: weave-scheduler and kube-scheduler against a real kube-apiserver and etcd, in-process.
//
//	cd e2e && go test ./... -args -v=0
//	E2E_NODES=500 E2E_PODS=300 go test -run Throughput -v . -args -v=0   # the comparison
package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/weavesql/weave/cmd/weave-scheduler/app"
	"github.com/weavesql/weave/e2e/harness"
	"github.com/weavesql/weave/scheduler"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("E2E_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func weaveConfig(identity string) app.Config {
	cfg := app.DefaultConfig()
	cfg.LeaderElect = false
	cfg.Serving = nil       // no HTTPS server: the tests read the metrics registry (Server.Metrics)
	cfg.Identity = identity // BatchWait: the default, no wait (a batch is what is pending when the loop is free)
	cfg.SolverTimeout = 2 * time.Second
	cfg.InitialBackoff = 200 * time.Millisecond
	cfg.MaxBackoff = 2 * time.Second
	return cfg
}

// startWeave runs a weave-scheduler replica until the returned cancel is called (or the test ends).
func startWeave(t *testing.T, c *harness.Cluster, cfg app.Config, setup func(*app.Server)) (*app.Server, context.CancelFunc, <-chan struct{}) {
	t.Helper()
	s, err := app.New(cfg, c.Config, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}) // closed when Run returns
	go func() {
		defer close(done)
		if err := s.Run(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("weave-scheduler %s: %v", cfg.Identity, err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(30 * time.Second)
	for !s.Ready() {
		if time.Now().After(deadline) {
			t.Fatal("weave-scheduler informers did not sync")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s, cancel, done
}

func metric(t *testing.T, s *app.Server, name string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	s.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	total := 0.0
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, name+" ") || strings.HasPrefix(line, name+"{") {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			total += v
		}
	}
	return total
}

// waitMetric waits until the counter name of s reads want, failing at once if it passes want and after
// 10 s if it never gets there. A counter is bumped after the API server has answered, so a test that has
// just seen the pods bound through its own watch can read it a moment before it catches up.
func waitMetric(t *testing.T, s *app.Server, name string, want float64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v := metric(t, s, name)
		switch {
		case v == want:
			return
		case v > want:
			t.Fatalf("%s %v, want %v", name, v, want)
		case time.Now().After(deadline):
			t.Fatalf("%s %v after 10 s, want %v", name, v, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func eventsFor(t *testing.T, c *harness.Cluster, ns, pod string) []string {
	t.Helper()
	evs, err := c.Client.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs.Items {
		if e.Regarding.Name == pod {
			out = append(out, e.Reason+": "+e.Note)
		}
	}
	return out
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestKubeSchedulerBindsPods runs the harness's kube-scheduler (v1.37.2, default profile and feature gates)
// on 50 pods and checks that it binds them all through its OpportunisticBatching path, on by default since
// v1.35: every scheduling cycle asks the batch for a node hint (pkg/scheduler/schedule_one.go), and each
// answer, hint or none, counts in scheduler_batch_attempts_total (framework/runtime/batch.go).
func TestKubeSchedulerBindsPods(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	c := harness.Start(t)
	t.Logf("API server ready in %v", time.Since(start))
	if _, err := c.CreateNodes(ctx, "node", 10, harness.NodeSpec{CPU: "4", Memory: "16Gi"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateNamespace(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	attempts0 := kubeCounter(t, "scheduler_batch_attempts_total") // the registry is the process's: count the difference
	c.RunKubeScheduler(ctx, t)
	if _, err := c.CreatePods(ctx, "w", "p", 50, harness.PodSpec{CPU: "100m", Memory: "128Mi"}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if _, err := c.WaitBound(ctx, "w", 50, time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Logf("kube-scheduler: 50 pods bound in %v", time.Since(t0))
	if n := kubeCounter(t, "scheduler_batch_attempts_total") - attempts0; n < 50 {
		t.Errorf("scheduler_batch_attempts_total grew by %v for 50 pods bound, want at least 50: OpportunisticBatching is off", n)
	}
}

func TestWeaveSchedulerBindsPods(t *testing.T) {
	ctx := context.Background()
	c := harness.Start(t)
	if _, err := c.CreateNodes(ctx, "node", 10, harness.NodeSpec{CPU: "2", Memory: "8Gi", Labels: map[string]string{"disk": "hdd"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateNode(ctx, "ssd-node", harness.NodeSpec{CPU: "2", Memory: "8Gi", Labels: map[string]string{"disk": "ssd"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateNamespace(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	s, _, _ := startWeave(t, c, weaveConfig("a"), nil)
	spec := harness.PodSpec{SchedulerName: "weave-scheduler", CPU: "200m", Memory: "256Mi"}
	if _, err := c.CreatePods(ctx, "w", "p", 40, spec); err != nil {
		t.Fatal(err)
	}
	// Not ours: another scheduler's pod stays pending.
	if err := c.CreatePod(ctx, "w", "other", harness.PodSpec{SchedulerName: "someone-else", CPU: "100m"}); err != nil {
		t.Fatal(err)
	}
	// A node selector honoured, and a pod that fits nowhere.
	if err := c.CreatePod(ctx, "w", "wants-ssd", harness.PodSpec{SchedulerName: "weave-scheduler", CPU: "100m", NodeSelector: map[string]string{"disk": "ssd"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreatePod(ctx, "w", "too-big", harness.PodSpec{SchedulerName: "weave-scheduler", CPU: "64"}); err != nil {
		t.Fatal(err)
	}
	bound, err := c.WaitBound(ctx, "w", 41, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if bound["wants-ssd"] != "ssd-node" {
		t.Errorf("wants-ssd on %q, want ssd-node", bound["wants-ssd"])
	}
	if _, ok := bound["other"]; ok {
		t.Error("bound another scheduler's pod")
	}
	if _, ok := bound["too-big"]; ok {
		t.Error("bound a pod that fits nowhere")
	}
	perNode := map[string]int{}
	for _, n := range bound {
		perNode[n]++
	}
	for n, k := range perNode {
		if k*200 > 2000 {
			t.Errorf("node %s holds %d pods of 200m: over capacity", n, k)
		}
	}
	// Binding: PodScheduled=True (set by the API server's binding) and a Scheduled event.
	p, err := c.Client.CoreV1().Pods("w").Get(ctx, "p-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasCondition(p, v1.PodScheduled, v1.ConditionTrue) {
		t.Errorf("p-0 conditions %+v", p.Status.Conditions)
	}
	waitFor(t, "Scheduled event", 10*time.Second, func() bool {
		for _, e := range eventsFor(t, c, "w", "p-0") {
			if strings.HasPrefix(e, "Scheduled: Successfully assigned w/p-0 to ") {
				return true
			}
		}
		return false
	})
	// The unschedulable pod: FailedScheduling event with the reason, PodScheduled=False.
	waitFor(t, "too-big reported", 20*time.Second, func() bool {
		p, err := c.Client.CoreV1().Pods("w").Get(ctx, "too-big", metav1.GetOptions{})
		if err != nil || !hasCondition(p, v1.PodScheduled, v1.ConditionFalse) {
			return false
		}
		for _, e := range eventsFor(t, c, "w", "too-big") {
			if strings.HasPrefix(e, "FailedScheduling: 0/11 nodes are available") {
				t.Logf("too-big: %s", e)
				return true
			}
		}
		return false
	})
	waitMetric(t, s, "weave_scheduler_pods_scheduled_total", 41)
	if metric(t, s, "weave_scheduler_batch_phase_duration_seconds_count") == 0 {
		t.Error("no batch phase observed")
	}
	// A node added later makes room: the backed-off pod is retried and bound.
	if err := c.CreateNode(ctx, "huge", harness.NodeSpec{CPU: "128", Memory: "64Gi"}); err != nil {
		t.Fatal(err)
	}
	bound, err = c.WaitBound(ctx, "w", 42, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if bound["too-big"] != "huge" {
		t.Errorf("too-big on %q", bound["too-big"])
	}
}

func hasCondition(p *v1.Pod, typ v1.PodConditionType, status v1.ConditionStatus) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == typ && c.Status == status {
			return true
		}
	}
	return false
}

func TestPodDeletedMidBatchIsNotBound(t *testing.T) {
	ctx := context.Background()
	c := harness.Start(t)
	if _, err := c.CreateNodes(ctx, "node", 3, harness.NodeSpec{CPU: "4", Memory: "8Gi"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateNamespace(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	var victim atomic.Value
	s, _, _ := startWeave(t, c, weaveConfig("a"), func(s *app.Server) {
		s.Hooks.AfterSolve = func(ctx context.Context, bs []scheduler.Binding) {
			once.Do(func() {
				ns, name, _ := strings.Cut(bs[0].Pod, "/")
				victim.Store(name)
				if err := c.Client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
					t.Error(err)
				}
				for s.HasPod(ns, name) { // let the informer see the deletion
					time.Sleep(10 * time.Millisecond)
				}
			})
		}
	})
	if _, err := c.CreatePods(ctx, "w", "p", 10, harness.PodSpec{SchedulerName: "weave-scheduler", CPU: "100m"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitBound(ctx, "w", 9, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	name := victim.Load().(string)
	if _, err := c.Client.CoreV1().Pods("w").Get(ctx, name, metav1.GetOptions{}); err == nil {
		t.Errorf("%s still exists", name)
	}
	if v := metric(t, s, "weave_scheduler_placements_dropped_total"); v != 1 {
		t.Errorf("placements dropped %v, want 1", v)
	}
	if v := metric(t, s, "weave_scheduler_bind_errors_total"); v != 0 {
		t.Errorf("bind errors %v: the deleted pod reached the API", v)
	}
	waitMetric(t, s, "weave_scheduler_pods_scheduled_total", 9)
}

func TestNodeRemovedMidBatchIsNotUsed(t *testing.T) {
	ctx := context.Background()
	c := harness.Start(t)
	if _, err := c.CreateNodes(ctx, "node", 2, harness.NodeSpec{CPU: "4", Memory: "8Gi"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateNamespace(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	var removed atomic.Value
	startWeave(t, c, weaveConfig("a"), func(s *app.Server) {
		s.Hooks.AfterSolve = func(ctx context.Context, bs []scheduler.Binding) {
			once.Do(func() {
				node := bs[0].Node
				removed.Store(node)
				if err := c.Client.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{}); err != nil {
					t.Error(err)
				}
				for s.HasNode(node) {
					time.Sleep(10 * time.Millisecond)
				}
			})
		}
	})
	if _, err := c.CreatePods(ctx, "w", "p", 10, harness.PodSpec{SchedulerName: "weave-scheduler", CPU: "100m"}); err != nil {
		t.Fatal(err)
	}
	bound, err := c.WaitBound(ctx, "w", 10, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	gone := removed.Load().(string)
	for p, n := range bound {
		if n == gone {
			t.Errorf("%s bound to removed node %s", p, n)
		}
	}
}

func TestLeaderElectionTwoReplicas(t *testing.T) {
	ctx := context.Background()
	c := harness.Start(t)
	if _, err := c.CreateNodes(ctx, "node", 5, harness.NodeSpec{CPU: "8", Memory: "16Gi"}); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"w", "kube-system"} {
		if err := c.CreateNamespace(ctx, ns); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatal(err)
		}
	}
	le := func(id string) app.Config {
		cfg := weaveConfig(id)
		cfg.LeaderElect = true
		cfg.LeaseDuration, cfg.RenewDeadline, cfg.RetryPeriod = 3*time.Second, 2*time.Second, 200*time.Millisecond
		return cfg
	}
	a, cancelA, doneA := startWeave(t, c, le("replica-a"), nil)
	waitFor(t, "replica-a leads", 20*time.Second, a.Leader)
	b, _, _ := startWeave(t, c, le("replica-b"), nil)
	if _, err := c.CreatePods(ctx, "w", "first", 20, harness.PodSpec{SchedulerName: "weave-scheduler", CPU: "100m"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitBound(ctx, "w", 20, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if b.Leader() || metric(t, b, "weave_scheduler_pods_scheduled_total") != 0 {
		t.Fatal("the standby replica scheduled pods")
	}
	waitMetric(t, a, "weave_scheduler_pods_scheduled_total", 20)
	// Failover: the leader stops (releasing the Lease); the standby takes over.
	t0 := time.Now()
	cancelA()
	<-doneA
	waitFor(t, "replica-b leads", 30*time.Second, b.Leader)
	t.Logf("failover in %v", time.Since(t0))
	if _, err := c.CreatePods(ctx, "w", "second", 20, harness.PodSpec{SchedulerName: "weave-scheduler", CPU: "100m"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitBound(ctx, "w", 40, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	waitMetric(t, b, "weave_scheduler_pods_scheduled_total", 20)
	lease, err := c.Client.CoordinationV1().Leases("kube-system").Get(ctx, "weave-scheduler", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *lease.Spec.HolderIdentity != "replica-b" {
		t.Fatalf("lease held by %s", *lease.Spec.HolderIdentity)
	}
}

// TestThroughput runs kube-scheduler, then weave-scheduler, on the same API server and nodes with the same
// pods (E2E_PODS pods of 100m/128Mi on E2E_NODES nodes of 4 CPU/16Gi).
//   - Throughput: the pods are created first, then the scheduler starts; the clock runs until the last pod is
//     bound (bind included).
//   - Latency: with the scheduler running (and the throughput pods deleted), E2E_PODS pods more are created
//     as fast as the client goes (32 in flight); each pod's latency runs from its Create request (client
//     clock: creationTimestamp and the PodScheduled condition have a resolution of one second) until a watch
//     sees it bound.
func TestThroughput(t *testing.T) {
	nodes, pods := envInt("E2E_NODES", 500), envInt("E2E_PODS", 300)
	ctx := context.Background()
	c := harness.Start(t)
	if _, err := c.CreateNodes(ctx, "node", nodes, harness.NodeSpec{CPU: "4", Memory: "16Gi"}); err != nil {
		t.Fatal(err)
	}
	deleteAll := func(ns string) {
		if err := c.Client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "pods deleted", 2*time.Minute, func() bool {
			l, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			return err == nil && len(l.Items) == 0
		})
	}
	type result struct {
		rate          float64
		p50, p90, p99 time.Duration
	}
	run := func(name, schedulerName string, start func() context.CancelFunc) result {
		if err := c.CreateNamespace(ctx, name); err != nil {
			t.Fatal(err)
		}
		spec := harness.PodSpec{SchedulerName: schedulerName, CPU: "100m", Memory: "128Mi"}
		if _, err := c.CreatePods(ctx, name, "p", pods, spec); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		stop := start()
		defer stop()
		bound, err := c.WaitBound(ctx, name, pods, 5*time.Minute)
		el := time.Since(t0)
		if err != nil {
			t.Fatal(err)
		}
		used := map[string]bool{}
		for _, n := range bound {
			used[n] = true
		}
		r := result{rate: float64(pods) / el.Seconds()}
		t.Logf("%s: %d pods on %d nodes bound in %v: %.1f pods/s (%d nodes used)", name, pods, nodes, el.Round(time.Millisecond), r.rate, len(used))
		deleteAll(name) // free the nodes: the latency run starts from the same empty cluster

		// Latency, the scheduler running.
		w, err := c.WatchBindings(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		sent, err := c.CreatePodsTimed(ctx, name, "l", pods, spec)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Minute)
		for len(w.Bound()) < pods {
			if time.Now().After(deadline) {
				t.Fatalf("%s latency run: %d of %d pods bound after 5m", name, len(w.Bound()), pods)
			}
			time.Sleep(20 * time.Millisecond)
		}
		var lat []time.Duration
		for pod, at := range w.Bound() {
			lat = append(lat, at.Sub(sent[pod]))
		}
		r.p50, r.p90, r.p99 = percentile(lat, 0.5), percentile(lat, 0.9), percentile(lat, 0.99)
		t.Logf("%s: latency of %d pods created with the scheduler running: p50 %v p90 %v p99 %v max %v", name, pods, r.p50, r.p90, r.p99, percentile(lat, 1))
		deleteAll(name)
		return r
	}
	kube := run("kube", "", func() context.CancelFunc {
		kctx, cancel := context.WithCancel(ctx)
		c.RunKubeScheduler(kctx, t)
		return cancel
	})
	weave := run("weave", "weave-scheduler", func() context.CancelFunc {
		cfg := weaveConfig("bench")
		cfg.BatchSize = envInt("E2E_BATCH", 100)
		if d, err := time.ParseDuration(os.Getenv("E2E_SOLVER_TIMEOUT")); err == nil {
			cfg.SolverTimeout = d
		}
		if d, err := time.ParseDuration(os.Getenv("E2E_BATCH_WAIT")); err == nil {
			cfg.BatchWait = d
		}
		_, cancel, done := startWeave(t, c, cfg, nil)
		return func() { cancel(); <-done }
	})
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0fms", float64(d)/float64(time.Millisecond)) }
	fmt.Printf("THROUGHPUT nodes=%d pods=%d kube-scheduler=%.1f pods/s latency p50=%s p90=%s p99=%s weave-scheduler=%.1f pods/s latency p50=%s p90=%s p99=%s\n",
		nodes, pods, kube.rate, ms(kube.p50), ms(kube.p90), ms(kube.p99), weave.rate, ms(weave.p50), ms(weave.p90), ms(weave.p99))
}

// percentile returns the q-quantile (0 < q <= 1) of ds by the nearest-rank method.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	k := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(k, 0)]
}
