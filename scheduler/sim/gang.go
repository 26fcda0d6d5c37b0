package sim

import (
	"context"
	"fmt"
	"math/rand"
	"time"

	"github.com/weavesql/weave/scheduler"
)

// GPU is the extended resource of the gang workloads.
const GPU = "nvidia.com/gpu"

// RackLabel is the node label of the gang workloads' racks.
const RackLabel = "topology.example.com/rack"

// GangJob is one job of a gang workload: Workers pods of GPUs GPUs each,
// one PodGroup with minCount Workers and, when Rack, a rack topology
// constraint.
type GangJob struct {
	Name          string
	Workers, GPUs int64
	Rack          bool
}

// Group is the job's PodGroup.
func (j GangJob) Group() scheduler.PodGroup {
	g := scheduler.PodGroup{Name: j.Name, MinCount: j.Workers}
	if j.Rack {
		g.TopologyKey = RackLabel
	}
	return g
}

// Pods are the job's workers.
func (j GangJob) Pods() []scheduler.Pod {
	out := make([]scheduler.Pod, j.Workers)
	for i := range out {
		out[i] = scheduler.Pod{Name: fmt.Sprintf("%s-%02d", j.Name, i), Group: j.Name, PodGroup: j.Name,
			CPU: 100, Memory: 128, Resources: map[string]int64{GPU: j.GPUs}}
	}
	return out
}

// maxJobGPUs bounds a job's GPUs in GangWorkload (workers × GPUs each, a
// worker's GPUs drawn from 1 to min(8, maxJobGPUs / workers)): about 37
// jobs fill 48 nodes × 8 GPUs at 115%, as in the kube-scheduler
// run (37–42 gangs).
const maxJobGPUs = 24

// GangWorkload is the gang experiment in-process: racks × perRack
// nodes of gpusPerNode GPUs (label RackLabel), and jobs of 2–16 workers
// with 1–8 GPUs each (at most a node's, and at most maxJobGPUs a job), about half with a rack topology
// constraint, in a seeded random order, until their GPUs exceed demand ×
// the capacity (demand 1.15: 115%).
func GangWorkload(seed int64, racks, perRack int, gpusPerNode int64, demand float64) ([]scheduler.Node, []GangJob) {
	rng := rand.New(rand.NewSource(seed))
	var nodes []scheduler.Node
	for r := 0; r < racks; r++ {
		for i := 0; i < perRack; i++ {
			nodes = append(nodes, scheduler.Node{Name: fmt.Sprintf("r%02d-n%02d", r, i), CPU: 64000, Memory: 512000,
				Storage: 100000, Pods: 110, Labels: map[string]string{RackLabel: fmt.Sprintf("rack-%02d", r)},
				Resources: map[string]int64{GPU: gpusPerNode}})
		}
	}
	capacity := float64(int64(racks*perRack) * gpusPerNode)
	var jobs []GangJob
	var total int64
	for float64(total) <= demand*capacity {
		w := 2 + rng.Int63n(15)
		j := GangJob{Name: fmt.Sprintf("job-%03d", len(jobs)), Workers: w, GPUs: 1 + rng.Int63n(max(1, min(8, gpusPerNode, maxJobGPUs/w))), Rack: rng.Intn(2) == 0}
		jobs = append(jobs, j)
		total += j.Workers * j.GPUs
	}
	return nodes, jobs
}

// RunGangs submits the jobs' PodGroups and pods in order and schedules
// until nothing more fits: batches as ScheduleBatch takes them; a batch's
// unplaced pods are set aside (as weave-scheduler backs them off) until
// the queue is empty, then queued again while the last pass placed
// something. Nothing finishes: the cluster only fills.
func (c *Cluster) RunGangs(ctx context.Context, jobs []GangJob) error {
	for _, j := range jobs {
		if err := c.S.UpsertPodGroup(ctx, j.Group()); err != nil {
			return err
		}
		for _, p := range j.Pods() {
			if err := c.Submit(ctx, p, 0); err != nil {
				return err
			}
		}
	}
	for {
		var parked []scheduler.Pod
		progress := false
		for len(c.S.Pending()) > 0 {
			t0 := time.Now()
			bs, us, err := c.S.ScheduleBatch(ctx)
			if c.BatchLog != nil {
				c.BatchLog(len(bs), len(us), time.Since(t0), c.S.LastStats())
			}
			if err != nil {
				return err
			}
			if err := c.Apply(ctx, bs, nil); err != nil {
				return err
			}
			progress = progress || len(bs) > 0
			for _, u := range us {
				parked = append(parked, c.pods[u.Pod])
				if err := c.S.DeletePod(ctx, u.Pod); err != nil {
					return err
				}
			}
		}
		if len(parked) == 0 || !progress {
			// Put the parked pods back, pending, for the caller to see.
			for _, p := range parked {
				if err := c.S.UpsertPod(ctx, p); err != nil {
					return err
				}
			}
			return nil
		}
		for _, p := range parked {
			if err := c.S.UpsertPod(ctx, p); err != nil {
				return err
			}
		}
	}
}
