package e2e

// What the live tests (parity_test.go, nginx_redis_test.go) share: pod builders, paced creation, waiting for
// a workload to settle, and the judgement of a live cluster's final state by kube-scheduler v1.37.2's own
// Filter plugins (e2e/internal/oracle, through differential.JudgeLive).

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/weavesql/weave/cmd/weave-scheduler/app"
	"github.com/weavesql/weave/e2e/harness"
	"github.com/weavesql/weave/e2e/internal/oracle"
	"github.com/weavesql/weave/e2e/internal/oracle/differential"
)

const weaveName = "weave-scheduler"

// refusalPrefix starts the message of weave-scheduler's refusals (cmd/weave-scheduler/app/refuse.go).
const refusalPrefix = "weave-scheduler does not support "

// liveWeaveConfig is weaveConfig with the policies E2E_WEAVE_DISABLE lists (comma-separated) disabled: the
// mutation check of the live tests, e.g. E2E_WEAVE_DISABLE=H5 must make them fail.
func liveWeaveConfig(identity string) app.Config {
	cfg := weaveConfig(identity)
	for _, id := range strings.Split(os.Getenv("E2E_WEAVE_DISABLE"), ",") {
		if id = strings.TrimSpace(id); id != "" {
			cfg.DisabledPolicies = append(cfg.DisabledPolicies, id)
		}
	}
	return cfg
}

func newOracle(t *testing.T) *oracle.Oracle {
	t.Helper()
	o, err := oracle.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	return o
}

// podBuilder builds a pod of one container (pause) with no grace period: without a kubelet, deleting a
// bound pod is then immediate.
type podBuilder struct{ p *v1.Pod }

func makePod(ns, name, schedulerName string) *podBuilder {
	return &podBuilder{&v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.PodSpec{
			SchedulerName:                 schedulerName,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		},
	}}
}

// labels sets labels from key, value pairs.
func (b *podBuilder) labels(kv ...string) *podBuilder {
	if b.p.Labels == nil {
		b.p.Labels = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		b.p.Labels[kv[i]] = kv[i+1]
	}
	return b
}

// req sets the container's CPU and memory requests ("" leaves one out).
func (b *podBuilder) req(cpu, mem string) *podBuilder {
	b.p.Spec.Containers[0].Resources.Requests = resourceList(cpu, mem)
	return b
}

// with applies f to the pod.
func (b *podBuilder) with(f func(p *v1.Pod)) *podBuilder {
	f(b.p)
	return b
}

func (b *podBuilder) obj() *v1.Pod { return b.p }

func resourceList(cpu, mem string) v1.ResourceList {
	l := v1.ResourceList{}
	if cpu != "" {
		l[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		l[v1.ResourceMemory] = resource.MustParse(mem)
	}
	return l
}

func affinity(p *v1.Pod) *v1.Affinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	return p.Spec.Affinity
}

// createPaced creates the pods in order, one every 1/rate seconds, each Create in flight on its own (at most
// 64 at once); rate 0 creates them as fast as 32 requests in flight go (a burst).
func createPaced(ctx context.Context, c *harness.Cluster, pods []*v1.Pod, rate float64) error {
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	inFlight := 64
	if rate == 0 {
		inFlight = 32
	}
	sem := make(chan struct{}, inFlight)
	var tick <-chan time.Time
	if rate > 0 {
		tk := time.NewTicker(time.Duration(float64(time.Second) / rate))
		defer tk.Stop()
		tick = tk.C
	}
	for i, p := range pods {
		if tick != nil && i > 0 {
			<-tick
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if _, err := c.Client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("creating %s/%s: %w", p.Namespace, p.Name, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

func podKey(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// listPods lists the pods of the namespaces given (every namespace if none).
func listPods(ctx context.Context, c *harness.Cluster, namespaces ...string) ([]*v1.Pod, error) {
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	var out []*v1.Pod
	for _, ns := range namespaces {
		l, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	}
	return out, nil
}

// waitBoundKeys waits until every pod of want (namespace/name) is bound, or timeout; it returns the pods of
// want still unbound (none: all bound).
func waitBoundKeys(ctx context.Context, c *harness.Cluster, want []string, timeout time.Duration) ([]string, error) {
	deadline := time.Now().Add(timeout)
	for {
		pods, err := listPods(ctx, c)
		if err != nil {
			return nil, err
		}
		bound := map[string]bool{}
		for _, p := range pods {
			bound[podKey(p)] = p.Spec.NodeName != ""
		}
		var left []string
		for _, k := range want {
			if !bound[k] {
				left = append(left, k)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left, nil
		}
		select {
		case <-ctx.Done():
			return left, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// condition returns a pod's condition of the given type, or nil.
func condition(p *v1.Pod, typ v1.PodConditionType) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// liveVerdict is the oracle's judgement of one scheduler's run.
type liveVerdict struct {
	label   string
	res     differential.Result
	bound   map[string]string // pod → node, the scheduler's pods
	pending []string          // the scheduler's pods left without a node, in name order
}

// count returns how many findings are of the given kinds.
func (v liveVerdict) count(kinds ...differential.Kind) int {
	n := 0
	for _, f := range v.res.Findings {
		if slices.Contains(kinds, f.Kind) {
			n++
		}
	}
	return n
}

// boundOf counts the pods of keys the scheduler bound.
func (v liveVerdict) boundOf(keys []string) int {
	n := 0
	for _, k := range keys {
		if v.bound[k] != "" {
			n++
		}
	}
	return n
}

// judgeLive reads the cluster's final state (every node, namespace and pod of the namespaces given, all if
// none) and has the oracle judge the pods of schedulerName: each binding must pass every Filter plugin on its
// node given the other pods (with differential's replay for the order-dependent plugins); each pending pod is
// reported, with whether it fits a node now. A pending pod whose PodScheduled=False message is a
// weave-scheduler refusal counts as refused. Every finding is logged in full.
func judgeLive(t *testing.T, ctx context.Context, o *oracle.Oracle, c *harness.Cluster, label, schedulerName string, namespaces ...string) liveVerdict {
	t.Helper()
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nss, err := c.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := listPods(ctx, c, namespaces...)
	if err != nil {
		t.Fatal(err)
	}
	if schedulerName == "" {
		schedulerName = v1.DefaultSchedulerName
	}
	l := differential.Live{Pods: pods, Scheduler: schedulerName, Refused: map[string]string{}}
	for i := range nodes.Items {
		l.Nodes = append(l.Nodes, &nodes.Items[i])
	}
	for i := range nss.Items {
		l.Namespaces = append(l.Namespaces, &nss.Items[i])
	}
	v := liveVerdict{label: label, bound: map[string]string{}}
	var pendingLines []string
	for _, p := range pods {
		if p.Spec.SchedulerName != schedulerName {
			continue
		}
		if p.Spec.NodeName != "" {
			v.bound[podKey(p)] = p.Spec.NodeName
			continue
		}
		v.pending = append(v.pending, podKey(p))
		msg := "no PodScheduled condition"
		if cond := condition(p, v1.PodScheduled); cond != nil {
			msg = fmt.Sprintf("PodScheduled=%s %s: %s", cond.Status, cond.Reason, cond.Message)
			if cond.Status == v1.ConditionFalse && strings.HasPrefix(cond.Message, refusalPrefix) {
				l.Refused[podKey(p)] = cond.Message
			}
		}
		pendingLines = append(pendingLines, fmt.Sprintf("  %s: %s", podKey(p), msg))
	}
	sort.Strings(v.pending)
	sort.Strings(pendingLines)
	t0 := time.Now()
	v.res, err = differential.JudgeLive(ctx, o, l)
	if err != nil {
		t.Fatalf("%s: judging the final state: %v", label, err)
	}
	replay := ""
	if v.res.ReplayExhausted {
		replay = " (no order of the bindings found within the replay budget: judged in the final state)"
	}
	t.Logf("%s: %d pods bound, %d pending; the oracle judged them in %v%s; %d findings (%d wrong bindings)\n%s",
		label, len(v.bound), len(v.pending), time.Since(t0).Round(time.Millisecond), replay, len(v.res.Findings),
		v.count(differential.WrongBinding), strings.Join(pendingLines, "\n"))
	for _, f := range v.res.Findings {
		t.Logf("%s: finding:\n%s", label, v.res.Describe(f))
	}
	return v
}

// deletePods deletes every pod of ns at once and waits until they are gone.
func deletePods(t *testing.T, ctx context.Context, c *harness.Cluster, ns string) {
	t.Helper()
	if err := c.Client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pods of "+ns+" deleted", 2*time.Minute, func() bool {
		l, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 0
	})
}
