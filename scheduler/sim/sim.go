// Package sim is an in-process cluster for the scheduler: it creates nodes
// and pods, applies the scheduler's bindings and evictions, advances pod
// lifecycle (bound → Running after a start delay, Running → Succeeded after
// a lifetime) and replays workloads, with no API server.
package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"time"

	"github.com/weavesql/weave"
	"github.com/weavesql/weave/scheduler"
)

// Cluster drives a scheduler over a simulated clock.
type Cluster struct {
	S *scheduler.Scheduler
	// Now is the simulated time.
	Now time.Duration
	// StartDelay is how long a bound pod takes to run (paper: ~5s).
	StartDelay time.Duration
	bound      map[string]time.Duration // pod → bind time
	lifetime   map[string]time.Duration // pod → lifetime (0: forever)
	// Evicted counts evictions; Recreate makes evicted pods come back
	// pending (their controller recreates them).
	Evicted  int
	Recreate bool
	pods     map[string]scheduler.Pod
	// BatchLog, if set, is told of each batch RunGangs solves: pods
	// placed and left out, the time and Weave's statistics.
	BatchLog func(placed, unplaced int, d time.Duration, st weave.Stats)
}

// New wraps a scheduler.
func New(s *scheduler.Scheduler) *Cluster {
	return &Cluster{S: s, StartDelay: 5 * time.Second, bound: map[string]time.Duration{},
		lifetime: map[string]time.Duration{}, pods: map[string]scheduler.Pod{}}
}

// AddNodes creates n identical nodes named prefix-i in zones z0..z(zones-1).
func (c *Cluster) AddNodes(ctx context.Context, prefix string, n, zones int, tmpl scheduler.Node) error {
	for i := 0; i < n; i++ {
		node := tmpl
		node.Name = fmt.Sprintf("%s-%04d", prefix, i)
		if zones > 0 {
			node.Zone = fmt.Sprintf("z%d", i%zones)
		}
		if err := c.S.UpsertNode(ctx, node); err != nil {
			return err
		}
	}
	return nil
}

// Submit creates a pending pod that lives for lifetime (0: forever).
func (c *Cluster) Submit(ctx context.Context, p scheduler.Pod, lifetime time.Duration) error {
	c.pods[p.Name] = p
	c.lifetime[p.Name] = lifetime
	return c.S.UpsertPod(ctx, p)
}

// Apply records the scheduler's decisions.
func (c *Cluster) Apply(ctx context.Context, bs []scheduler.Binding, ev []scheduler.Eviction) error {
	for _, b := range bs {
		c.bound[b.Pod] = c.Now
	}
	for _, e := range ev {
		c.Evicted++
		delete(c.bound, e.Pod)
		if c.Recreate {
			p := c.pods[e.Pod]
			p.NodeName, p.Phase = "", scheduler.PhasePending
			if err := c.S.UpsertPod(ctx, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// Advance moves the clock: bound pods start, finished pods succeed and
// leave the cluster.
func (c *Cluster) Advance(ctx context.Context, d time.Duration) error {
	c.Now += d
	st := c.S.State()
	for name, t := range c.bound {
		p := st.Pods[name]
		if p == nil {
			delete(c.bound, name)
			continue
		}
		if p.Phase == scheduler.PhasePending && c.Now-t >= c.StartDelay {
			if err := c.S.SetPhase(ctx, name, scheduler.PhaseRunning); err != nil {
				return err
			}
		}
		if lt := c.lifetime[name]; lt > 0 && c.Now-t >= c.StartDelay+lt {
			if err := c.S.DeletePod(ctx, name); err != nil {
				return err
			}
			delete(c.bound, name)
		}
	}
	return nil
}

// Placed counts the pods bound to a node.
func (c *Cluster) Placed() int {
	n := 0
	for _, p := range c.S.State().Pods {
		if p.NodeName != "" {
			n++
		}
	}
	return n
}

// NginxRedis is the paper's affinity/anti-affinity workload, written as
// users write it: per app X, redis cache pods labelled {app: X, role:
// redis}, anti-affine to one another ({app: X, role: redis}, hostname),
// then nginx pods labelled {app: X, role: nginx}, anti-affine to one
// another ({app: X, role: nginx}) and affine to the app's redis on the
// same node ({app: X, role: redis}). Only the whole selector tells nginx
// from redis: each shares its app label with the other.
func NginxRedis(apps, redis, nginx int) []scheduler.Pod {
	var out []scheduler.Pod
	sel := func(app, role string) *scheduler.LabelSelector {
		return scheduler.SelectLabels(map[string]string{"app": app, "role": role})
	}
	for a := 0; a < apps; a++ {
		app := fmt.Sprintf("app-%d", a)
		cache := fmt.Sprintf("redis-%d", a)
		web := fmt.Sprintf("nginx-%d", a)
		for i := 0; i < redis; i++ {
			out = append(out, scheduler.Pod{Name: fmt.Sprintf("%s-%d", cache, i), Group: cache,
				Labels:   map[string]string{"app": app, "role": "redis"},
				Affinity: []scheduler.PodAffinityTerm{{Anti: true, Required: true, Selector: sel(app, "redis"), TopologyKey: scheduler.LabelHostname}}})
		}
		for i := 0; i < nginx; i++ {
			out = append(out, scheduler.Pod{Name: fmt.Sprintf("%s-%d", web, i), Group: web,
				Labels: map[string]string{"app": app, "role": "nginx"},
				Affinity: []scheduler.PodAffinityTerm{
					{Anti: true, Required: true, Selector: sel(app, "nginx"), TopologyKey: scheduler.LabelHostname},
					{Required: true, Selector: sel(app, "redis"), TopologyKey: scheduler.LabelHostname}}})
		}
	}
	return out
}

// Heterogeneous is the paper's placement-quality workload: apps × pods
// with exponentially distributed CPU and memory demands (means in
// millicores and MiB), in a random arrival order per seed.
func Heterogeneous(seed int64, apps, pods int, meanCPU, meanMem float64) []scheduler.Pod {
	rng := rand.New(rand.NewSource(seed))
	var out []scheduler.Pod
	for a := 0; a < apps; a++ {
		for i := 0; i < pods; i++ {
			out = append(out, scheduler.Pod{Name: fmt.Sprintf("app%02d-%02d", a, i), Group: fmt.Sprintf("app%02d", a),
				CPU:    int64(math.Max(1, rng.ExpFloat64()*meanCPU)),
				Memory: int64(math.Max(1, rng.ExpFloat64()*meanMem))})
		}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
