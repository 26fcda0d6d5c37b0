package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/weavesql/weave/e2e/harness"
	"github.com/weavesql/weave/e2e/internal/oracle/differential"
)

// TestLiveNginxRedis runs the nginx+redis workload as users write it, on one in-process cluster of 50 nodes
// (4 CPU, 16 GiB): per app X, redis pods labelled {app: X, role: redis}, each with required anti-affinity to
// {app: X, role: redis}, and nginx pods labelled {app: X, role: nginx}, each with required affinity to
// {app: X, role: redis} and required anti-affinity to {app: X, role: nginx}; hostname topology throughout,
// every pod owned by its app's redis or nginx ReplicaSet. (The redis anti-affinity is the paper's, as in
// scheduler/sim.NginxRedis: it puts each app's redis pods on as many nodes as it has nginx pods, so that every
// pod can be bound whatever order the pods come in.) The two Deployments of an app grow side by side: the pods
// are created in the order redis X-0, nginx X-0 of every app, then X-1, ...
//
// The pods are created at 10 pods/s, at 100 pods/s and as a burst (32 requests in flight), each time in a
// namespace of its own, once for weave-scheduler and once for kube-scheduler v1.37.2 (both run throughout,
// each placing the pods that name it); after each run the pods are deleted. For every rate and both
// schedulers it asserts that every pod is bound and that kube-scheduler's own Filter plugins (the oracle,
// with differential's replay for required affinity) reject none of the bindings.
//
// Size: 6 apps × (20 redis + 20 nginx) = 240 pods at every rate; E2E_NGINX_APPS=n runs n apps instead (at
// 10 pods/s the 240 pods take 24 s to create per scheduler). 130 s on the loaded 2-core machine (load 9;
// 2026-11-27, 1e69517), of which 62 s at 10 pods/s and about 5 s per run for the oracle's judgement.
func TestLiveNginxRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("a live cluster of 50 nodes")
	}
	apps := envInt("E2E_NGINX_APPS", 6)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := newOracle(t)
	t0 := time.Now()
	c := harness.Start(t)
	if _, err := c.CreateNodes(ctx, "node", 50, harness.NodeSpec{CPU: "4", Memory: "16Gi"}); err != nil {
		t.Fatal(err)
	}
	c.RunKubeScheduler(ctx, t)
	srv, _, _ := startWeave(t, c, liveWeaveConfig("nginx-redis"), nil)
	t.Logf("cluster of 50 nodes and both schedulers up in %v", time.Since(t0).Round(time.Millisecond))

	rates := []struct {
		name       string
		rate       float64       // pods/s; 0: a burst
		bindWithin time.Duration // after the first Create
	}{
		{"10-pods-per-s", 10, 2 * time.Minute},
		{"100-pods-per-s", 100, time.Minute},
		{"burst", 0, time.Minute},
	}
	for _, r := range rates {
		for _, sched := range []string{weaveName, ""} {
			label := "kube-scheduler"
			if sched != "" {
				label = sched
			}
			t.Run(r.name+"/"+label, func(t *testing.T) {
				ns := fmt.Sprintf("nr-%s-%s", r.name, label)
				if err := c.CreateNamespace(ctx, ns); err != nil {
					t.Fatal(err)
				}
				pods := nginxRedisPods(ns, sched, apps, 20)
				ahead := metric(t, srv, "weave_scheduler_pods_placed_ahead_total")
				t1 := time.Now()
				if err := createPaced(ctx, c, pods, r.rate); err != nil {
					t.Fatal(err)
				}
				created := time.Since(t1)
				_, err := c.WaitBound(ctx, ns, len(pods), r.bindWithin)
				t.Logf("%s, %s: %d pods created in %v, bound %v after the first Create", r.name, label, len(pods),
					created.Round(time.Millisecond), time.Since(t1).Round(time.Millisecond))
				if sched != "" {
					// Pods bound from an extension's window (scheduler.PlaceAhead) are judged with the others.
					t.Logf("%s, %s: %v pods placed ahead", r.name, label, metric(t, srv, "weave_scheduler_pods_placed_ahead_total")-ahead)
				}
				if err != nil {
					t.Errorf("%s: %v", label, err)
				}
				v := judgeLive(t, ctx, o, c, label, sched, ns)
				if len(v.bound) != len(pods) {
					t.Errorf("%s: %d of %d pods bound", label, len(v.bound), len(pods))
				}
				if n := v.count(differential.WrongBinding); n > 0 {
					t.Errorf("%s: %d bindings the Filter plugins reject (findings above)", label, n)
				}
				if n := len(v.res.Findings) - v.count(differential.WrongBinding, differential.MissedPlacement); n > 0 {
					t.Errorf("%s: %d other findings (above)", label, n)
				}
				deletePods(t, ctx, c, ns)
			})
		}
	}
}

// nginxRedisPods is the workload of apps apps, per redis and per nginx pods each, in creation order.
func nginxRedisPods(ns, sched string, apps, per int) []*v1.Pod {
	term := func(app, role string) v1.PodAffinityTerm {
		return v1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app, "role": role}},
			TopologyKey:   v1.LabelHostname,
		}
	}
	pod := func(app, role string, i int) *v1.Pod {
		rs := fmt.Sprintf("%s-%s-5d8f9c", app, role)
		b := makePod(ns, fmt.Sprintf("%s-%d", rs, i), sched).labels("app", app, "role", role).with(func(p *v1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs,
				UID: types.UID(uuid.NewSHA1(uuid.NameSpaceOID, []byte(ns+"/"+rs)).String()), Controller: ptr.To(true)}}
		})
		if role == "redis" {
			return b.req("200m", "256Mi").with(func(p *v1.Pod) {
				affinity(p).PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term(app, "redis")}}
			}).obj()
		}
		return b.req("100m", "128Mi").with(func(p *v1.Pod) {
			affinity(p).PodAffinity = &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term(app, "redis")}}
			affinity(p).PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term(app, "nginx")}}
		}).obj()
	}
	var out []*v1.Pod
	for i := range per {
		for a := range apps {
			app := fmt.Sprintf("shop%d", a)
			out = append(out, pod(app, "redis", i), pod(app, "nginx", i))
		}
	}
	return out
}
