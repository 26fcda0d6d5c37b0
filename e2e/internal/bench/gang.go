package bench

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"gonum.org/v1/plot"

	"github.com/weavesql/weave/e2e/harness"
	"github.com/weavesql/weave/scheduler"
	"github.com/weavesql/weave/scheduler/sim"
)

// gangGates are the feature gates of the gang experiment, on in the API server and in kube-scheduler.
var gangGates = map[string]bool{"GenericWorkload": true, "TopologyAwareWorkloadScheduling": true}

// gangOutcome is one scheduler's result on one gang workload, judged from the pods' final nodes.
type gangOutcome struct {
	jobs, complete, partial, violations int
	gpusComplete, capacity, demand      int64
	lastDecision                        time.Duration // from the first Create sent to the last pod seen bound
}

// idle is the capacity complete gangs leave unused, of what the demand could fill.
func (o gangOutcome) idle() int64 { return min(o.capacity, o.demand) - o.gpusComplete }

// runGang is the gang experiment (issue 23): PodGroups with gang scheduling and a rack topology constraint,
// kube-scheduler v1.37.2 (GenericWorkload and TopologyAwareWorkloadScheduling on) and weave-scheduler one after
// the other on the same API server, nodes and workload; plus the stranding case of Kueue issue #4474.
func runGang(ctx context.Context, r *Runner) error {
	racks, perRack := pick(r, 8, 4, 2), pick(r, 6, 4, 2)
	seeds := pick(r, 3, 2, 1)
	const gpusPerNode = 8
	quiet := pick(r, 10*time.Second, 5*time.Second, 3*time.Second)
	timeout := pick(r, 5*time.Minute, 3*time.Minute, 90*time.Second)

	s := r.section(9)
	s.Paper = "Not in the paper: issue 23. kube-scheduler v1.37 places a PodGroup greedily, pod by pod, one group at a time (schedule_one_podgroup.go), " +
		"and preempts for a PodGroup under GenericWorkload (DefaultPreemption's PodGroupPostFilter); " +
		"weave decides the groups of a batch jointly. Goal: zero partial gangs and topology violations for weave, at least kube-scheduler's GPUs in complete gangs on every seed, " +
		"at most half its idle GPUs over all seeds; on the stranding case weave places both jobs."
	s.Setup = fmt.Sprintf("%d nodes of %d GPUs (`%s`, an extended resource) in %d racks (label `%s`); per seed, jobs of 2–16 workers × 1–8 GPUs (at most 24 GPUs a job), "+
		"about half with a rack topology constraint, until demand exceeds 115%% of capacity (scheduler/sim.GangWorkload), each a PodGroup (gang, minCount = workers) "+
		"created with its pods, job after job in the seeded order. Seeds 1–%d. Each scheduler runs alone on the cluster (kube-scheduler v1.37.2 with GenericWorkload and "+
		"TopologyAwareWorkloadScheduling on, as is the API server; weave-scheduler b = 100), until no pod is bound for %v. Idle = min(capacity, demand) − GPUs of complete gangs. "+
		"Stranding (Kueue #4474): nodes of 2, 1 and 1 GPUs in one rack, job A = 2 × 1 GPU then job B = 1 × 2 GPUs, both with the rack constraint, %d runs per scheduler. "+
		"Priority case (workload preemption): two racks of %d nodes of 8 GPUs; priority-1 gangs fill them, low-whole (%d × 8 GPUs, rack, disruptionMode all) the second rack (a nodeSelector), "+
		"%d gangs of 4 × 2 GPUs (no topology, disruptionMode single) the first; then high (priority 100, %d × 8 GPUs, rack) arrives, which fits only by emptying a rack: "+
		"%d evictions (low-whole) or %d (the small gangs). No controller recreates an evicted pod. %d runs per scheduler, alternated; time is from high's first Create to its last pod bound.",
		racks*perRack, gpusPerNode, sim.GPU, racks, sim.RackLabel, seeds, quiet, pick(r, 5, 3, 1),
		pick(r, 4, 3, 2), pick(r, 4, 3, 2), pick(r, 4, 3, 2), pick(r, 4, 3, 2), pick(r, 4, 3, 2), 4*pick(r, 4, 3, 2), pick(r, 3, 2, 1))

	t0 := time.Now()
	c, stop, err := harness.StartClusterWith(ctx, func(format string, args ...any) {
		fmt.Fprintf(r.cfg.ServerLog, format+"\n", args...)
	}, harness.Options{FeatureGates: gangGates})
	if err != nil {
		return err
	}
	defer stop()
	r.statusf("   API server up in %v (gates %v)", time.Since(t0).Round(time.Millisecond), gangGates)

	// The stranding case first, on its own three nodes, removed before the workload's.
	strand := []sim.GangJob{{Name: "job-a", Workers: 2, GPUs: 1, Rack: true}, {Name: "job-b", Workers: 1, GPUs: 2, Rack: true}}
	var strandNodes []scheduler.Node
	for i, g := range []int64{2, 1, 1} {
		strandNodes = append(strandNodes, scheduler.Node{Name: fmt.Sprintf("strand-%d", i), Labels: map[string]string{sim.RackLabel: "rack-0"}, Resources: map[string]int64{sim.GPU: g}})
	}
	if err := createGangNodes(ctx, c, strandNodes); err != nil {
		return err
	}
	// kube-scheduler breaks ties between equally scored nodes at random (the default scoring reads CPU and
	// memory, not GPUs), so the case runs several times.
	reps := pick(r, 5, 3, 1)
	var strandRows, strandTable [][]string
	for _, name := range r.schedulers() {
		both := 0
		for rep := 1; rep <= reps; rep++ {
			out, err := r.gangRun(ctx, c, fmt.Sprintf("strand-%s-%d", shortName(name), rep), name, strandNodes, strand, quiet, timeout)
			if err != nil {
				return fmt.Errorf("stranding (%s): %w", name, err)
			}
			strandRows = append(strandRows, []string{itoa(rep), name, itoa(out.complete), itoa(out.jobs), itoa(out.partial), itoa(out.violations), fmt.Sprint(out.gpusComplete), fmt.Sprint(out.capacity)})
			if out.complete == out.jobs {
				both++
			}
		}
		strandTable = append(strandTable, []string{name, fmt.Sprintf("%d of %d", both, reps)})
		r.statusf("   stranding, %s: both jobs complete in %d of %d runs", name, both, reps)
	}
	for _, n := range strandNodes {
		if err := c.Client.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil {
			return err
		}
	}

	// The priority case (workload preemption), on its own nodes too (gang_priority.go).
	prioPerRack, prioReps := pick(r, 4, 3, 2), pick(r, 3, 2, 1)
	if err := r.gangPriorityCase(ctx, c, s, prioPerRack, prioReps, quiet, timeout); err != nil {
		return err
	}

	var rows, trows [][]string
	idle := map[string]int64{}
	perSeed := map[int64]map[string]gangOutcome{}
	var nodes []scheduler.Node
	for seed := int64(1); seed <= int64(seeds); seed++ {
		ns, jobs := sim.GangWorkload(seed, racks, perRack, gpusPerNode, 1.15)
		if seed == 1 {
			nodes = ns
			if err := createGangNodes(ctx, c, nodes); err != nil {
				return err
			}
		}
		perSeed[seed] = map[string]gangOutcome{}
		for _, name := range r.schedulers() {
			out, err := r.gangRun(ctx, c, fmt.Sprintf("gang-%s-%d", shortName(name), seed), name, nodes, jobs, quiet, timeout)
			if err != nil {
				return fmt.Errorf("seed %d (%s): %w", seed, name, err)
			}
			perSeed[seed][name] = out
			idle[name] += out.idle()
			row := []string{fmt.Sprint(seed), name, itoa(out.jobs), itoa(out.complete), itoa(out.partial), itoa(out.violations),
				fmt.Sprint(out.gpusComplete), fmt.Sprint(out.capacity), fmt.Sprint(out.demand), fmt.Sprint(out.idle()),
				f2(float64(out.gpusComplete) / float64(out.capacity)), fmt.Sprintf("%.2f", out.lastDecision.Seconds())}
			rows = append(rows, row)
			trows = append(trows, []string{fmt.Sprint(seed), name, fmt.Sprintf("%d / %d", out.complete, out.jobs),
				fmt.Sprintf("%d (%.1f%%)", out.gpusComplete, 100*float64(out.gpusComplete)/float64(out.capacity)),
				itoa(out.partial), itoa(out.violations), fmt.Sprintf("%.1f s", out.lastDecision.Seconds())})
			r.statusf("   seed %d, %s: %d of %d gangs complete, %d GPUs of %d, %d partial, %d topology violations, last decision at %.1f s",
				seed, name, out.complete, out.jobs, out.gpusComplete, out.capacity, out.partial, out.violations, out.lastDecision.Seconds())
		}
	}
	if err := r.writeCSV(s, "gang", []string{"seed", "scheduler", "jobs", "complete", "partial", "topology_violations", "gpus_complete",
		"capacity", "demand", "idle", "share_of_capacity", "last_decision_s"}, rows); err != nil {
		return err
	}
	if err := r.writeCSV(s, "gang_stranding", []string{"run", "scheduler", "complete", "jobs", "partial", "topology_violations", "gpus_complete", "capacity"}, strandRows); err != nil {
		return err
	}
	if err := r.gangIdleFigure(s, seeds, perSeed); err != nil {
		return err
	}
	s.Tables = append(s.Tables, table([]string{"seed", "scheduler", "gangs fully running", "GPUs in complete gangs (of capacity)", "partial gangs",
		"topology violations", "last decision"}, trows))
	s.Tables = append(s.Tables, table([]string{"stranding case", "runs with both jobs complete"}, strandTable))
	if len(r.schedulers()) == 2 {
		var below []string
		for seed := int64(1); seed <= int64(seeds); seed++ {
			if k, w := perSeed[seed][kubeName], perSeed[seed][weaveName]; w.gpusComplete < k.gpusComplete {
				below = append(below, fmt.Sprintf("seed %d (%d < %d)", seed, w.gpusComplete, k.gpusComplete))
			}
		}
		verdict := "met"
		if len(below) > 0 || 2*idle[weaveName] > idle[kubeName] {
			verdict = "NOT met"
		}
		s.Findings = append(s.Findings, fmt.Sprintf("Idle GPUs over %d seeds: weave-scheduler %d, kube-scheduler %d; weave below kube on: %s. Goal (≥ kube on every seed, idle ≤ half of kube's): %s.",
			seeds, idle[weaveName], idle[kubeName], orNone(below), verdict))
	}
	return nil
}

// gangIdleFigure draws the GPUs each scheduler leaves idle per seed (min(capacity, demand) − GPUs of complete
// gangs), and over all seeds, side by side: the goal is weave's bar at most half of kube's in the last
// group and at most kube's in every other.
func (r *Runner) gangIdleFigure(s *Section, seeds int, perSeed map[int64]map[string]gangOutcome) error {
	names := r.schedulers()
	var groups []string
	var vals [][]float64
	total := make([]float64, len(names))
	for seed := int64(1); seed <= int64(seeds); seed++ {
		groups = append(groups, fmt.Sprintf("seed %d", seed))
		row := make([]float64, len(names))
		for i, name := range names {
			row[i] = float64(perSeed[seed][name].idle())
			total[i] += row[i]
		}
		vals = append(vals, row)
	}
	groups = append(groups, "all seeds")
	vals = append(vals, total)
	return r.barFigure(s, "gang_idle", "Idle GPUs: min(capacity, demand) − GPUs in complete gangs (fewer is better)", "GPUs", groups, names, vals,
		func(p *plot.Plot) { p.Y.Min, p.Y.Max = 0, 1.3*maxOf(vals) })
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// createGangNodes creates nodes of the gang workloads: 64 CPUs, 512 GiB, the node's GPUs and labels.
func createGangNodes(ctx context.Context, c *harness.Cluster, nodes []scheduler.Node) error {
	for _, n := range nodes {
		res := v1.ResourceList{}
		for k, q := range n.Resources {
			res[v1.ResourceName(k)] = *resource.NewQuantity(q, resource.DecimalSI)
		}
		if err := c.CreateNode(ctx, n.Name, harness.NodeSpec{CPU: "64", Memory: "512Gi", Labels: n.Labels, Resources: res}); err != nil {
			return err
		}
	}
	return nil
}

// gangRun runs one scheduler on one gang workload in namespace ns: it starts the scheduler, creates each job's
// PodGroup and pods in order, waits until no pod is bound for quiet, judges the pods' nodes, stops the
// scheduler and deletes the pods and PodGroups.
func (r *Runner) gangRun(ctx context.Context, c *harness.Cluster, ns, name string, nodes []scheduler.Node, jobs []sim.GangJob, quiet, timeout time.Duration) (gangOutcome, error) {
	out := gangOutcome{jobs: len(jobs)}
	for _, n := range nodes {
		out.capacity += n.Resources[sim.GPU]
	}
	if err := c.CreateNamespace(ctx, ns); err != nil {
		return out, err
	}
	watch, err := c.WatchBindings(ctx, ns)
	if err != nil {
		return out, err
	}
	defer watch.Stop()
	var sch *sched
	schedName := ""
	if name == weaveName {
		schedName = weaveName
		sch, err = startWeave(ctx, c, r.weaveConfig(100), r.log)
	} else {
		sch, err = startKube(ctx, c)
	}
	if err != nil {
		return out, err
	}
	total := 0
	for _, j := range jobs {
		total += int(j.Workers)
		out.demand += j.Workers * j.GPUs
	}
	bar := r.bar(fmt.Sprintf("gang %s (bound)", ns), total)
	start := time.Now()
	err = createGangJobs(ctx, c, ns, schedName, jobs)
	if err == nil {
		_, err = waitSettled(ctx, watch, total, quiet, timeout, bar)
	}
	bar.done()
	sch.stop()
	if err != nil {
		return out, err
	}
	var last time.Time
	for _, t := range watch.Bound() {
		if t.After(last) {
			last = t
		}
	}
	if !last.IsZero() {
		out.lastDecision = last.Sub(start)
	}
	pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return out, err
	}
	rackOf := map[string]string{}
	for _, n := range nodes {
		rackOf[n.Name] = n.Labels[sim.RackLabel]
	}
	bound := map[string]int64{}
	racksOf := map[string]map[string]bool{}
	for _, p := range pods.Items {
		g := podGroupName(&p)
		if p.Spec.NodeName == "" || g == "" {
			continue
		}
		bound[g]++
		if racksOf[g] == nil {
			racksOf[g] = map[string]bool{}
		}
		racksOf[g][rackOf[p.Spec.NodeName]] = true
	}
	for _, j := range jobs {
		switch b := bound[j.Name]; {
		case b == j.Workers:
			out.complete++
			out.gpusComplete += j.Workers * j.GPUs
		case b > 0:
			out.partial++
		}
		if j.Rack && len(racksOf[j.Name]) > 1 {
			out.violations++
		}
	}
	if err := deletePods(ctx, c, ns); err != nil {
		return out, err
	}
	return out, c.Client.SchedulingV1beta1().PodGroups(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
}

// podGroupName is the PodGroup a pod names, "" for none.
func podGroupName(p *v1.Pod) string {
	if g := p.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
		return *g.PodGroupName
	}
	return ""
}

// createGangJobs creates each job's PodGroup, then its pods (a few Creates in flight), job after job.
func createGangJobs(ctx context.Context, c *harness.Cluster, ns, schedName string, jobs []sim.GangJob) error {
	for _, j := range jobs {
		g := j.Group()
		pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: j.Name},
			Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
				Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: int32(g.MinCount)}}}}
		if g.TopologyKey != "" {
			pg.Spec.SchedulingConstraints = &schedulingv1beta1.PodGroupSchedulingConstraints{
				Topology: []schedulingv1beta1.TopologyConstraint{{Key: g.TopologyKey}}}
		}
		if _, err := c.Client.SchedulingV1beta1().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create PodGroup %s/%s: %w", ns, j.Name, err)
		}
		var pods []*v1.Pod
		for _, sp := range j.Pods() {
			p := podObject(sp, ns, schedName)
			gpus := *resource.NewQuantity(sp.Resources[sim.GPU], resource.DecimalSI)
			p.Spec.Containers[0].Resources.Requests[v1.ResourceName(sim.GPU)] = gpus
			p.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceName(sim.GPU): gpus}
			p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To(j.Name)}
			pods = append(pods, p)
		}
		sort.Slice(pods, func(a, b int) bool { return pods[a].Name < pods[b].Name })
		if _, err := createPods(ctx, c, pods, 8); err != nil {
			return err
		}
	}
	return nil
}

// maxOf is the largest of vals (0 if none), for an axis with room above the bars for the legend.
func maxOf(vals [][]float64) float64 {
	m := 0.0
	for _, row := range vals {
		for _, v := range row {
			m = max(m, v)
		}
	}
	return max(m, 1)
}
