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

// The gang experiment's priority case (workload preemption, issue 23): two racks of perRack 8-GPU nodes are
// filled by priority-1 gangs: "low-whole" (perRack × 8 GPUs, rack, disruptionMode all) takes the second rack
// (prio-rack-1, by a nodeSelector), perRack gangs "low-small-k" (4 × 2 GPUs each, no topology, disruptionMode
// single) the first. Then "high" (priority
// 100, perRack × 8 GPUs, rack) arrives: it needs a whole rack, which takes evicting low-whole (perRack pods)
// or every small gang (4 × perRack pods). kube-scheduler v1.37.2 preempts for a PodGroup under GenericWorkload
// (DefaultPreemption's PodGroupPostFilter: every lower-priority pod of the cluster removed, the group placed,
// then victims reprieved, disruptionMode-all groups as one unit); weave-scheduler plans the group with its
// preemption model (scheduler/gang_preempt.go).

// gangPriorityOutcome is one run of the priority case.
type gangPriorityOutcome struct {
	highBound, highWorkers int
	evicted                int           // low pods gone at the end
	wholeGone              int           // of them, low-whole's
	runs                   time.Duration // from high's first Create to its last member bound (0: not running)
}

// gangPriorityJob is one job of the case: its PodGroup (priority, disruptionMode) and its pods.
type gangPriorityJob struct {
	job          sim.GangJob
	priority     int32
	all          bool
	nodeSelector map[string]string // its pods' nodeSelector (nil: none)
}

func (j gangPriorityJob) objects(ns, schedName string) (*schedulingv1beta1.PodGroup, []*v1.Pod) {
	g := j.job.Group()
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: j.job.Name},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: int32(g.MinCount)}}, Priority: ptr.To(j.priority)}}
	if g.TopologyKey != "" {
		pg.Spec.SchedulingConstraints = &schedulingv1beta1.PodGroupSchedulingConstraints{
			Topology: []schedulingv1beta1.TopologyConstraint{{Key: g.TopologyKey}}}
	}
	if j.all {
		pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
	}
	var pods []*v1.Pod
	for _, sp := range j.job.Pods() {
		sp.Priority = int64(j.priority)
		sp.NodeSelector = j.nodeSelector
		p := podObject(sp, ns, schedName)
		gpus := *resource.NewQuantity(sp.Resources[sim.GPU], resource.DecimalSI)
		p.Spec.Containers[0].Resources.Requests[v1.ResourceName(sim.GPU)] = gpus
		p.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceName(sim.GPU): gpus}
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To(j.job.Name)}
		p.OwnerReferences = nil // no controller recreates an evicted pod
		pods = append(pods, p)
	}
	sort.Slice(pods, func(a, b int) bool { return pods[a].Name < pods[b].Name })
	return pg, pods
}

// gangPriorityNodes are the case's nodes: two racks of perRack nodes of 8 GPUs.
func gangPriorityNodes(perRack int) []scheduler.Node {
	var out []scheduler.Node
	for r := 0; r < 2; r++ {
		for i := 0; i < perRack; i++ {
			out = append(out, scheduler.Node{Name: fmt.Sprintf("prio-%d-%d", r, i), Labels: map[string]string{sim.RackLabel: fmt.Sprintf("prio-rack-%d", r)},
				Resources: map[string]int64{sim.GPU: 8}})
		}
	}
	return out
}

// gangPriorityRun runs one scheduler on the case in namespace ns.
func (r *Runner) gangPriorityRun(ctx context.Context, c *harness.Cluster, ns, name string, perRack int, quiet, timeout time.Duration) (gangPriorityOutcome, error) {
	out := gangPriorityOutcome{highWorkers: perRack}
	// low-whole is held to the second rack by a nodeSelector: the cheap rack to empty is not the first.
	whole := gangPriorityJob{sim.GangJob{Name: "low-whole", Workers: int64(perRack), GPUs: 8, Rack: true}, 1, true,
		map[string]string{sim.RackLabel: "prio-rack-1"}}
	var small []gangPriorityJob
	for k := 0; k < perRack; k++ {
		small = append(small, gangPriorityJob{sim.GangJob{Name: fmt.Sprintf("low-small-%d", k), Workers: 4, GPUs: 2}, 1, false, nil})
	}
	high := gangPriorityJob{sim.GangJob{Name: "high", Workers: int64(perRack), GPUs: 8, Rack: true}, 100, false, nil}
	if err := c.CreateNamespace(ctx, ns); err != nil {
		return out, err
	}
	watch, err := c.WatchBindings(ctx, ns)
	if err != nil {
		return out, err
	}
	defer watch.Stop()
	schedName := ""
	var sch *sched
	if name == weaveName {
		schedName = weaveName
		sch, err = startWeave(ctx, c, r.weaveConfig(100), r.log)
	} else {
		sch, err = startKube(ctx, c)
	}
	if err != nil {
		return out, err
	}
	defer func() { sch.stop() }()
	create := func(jobs ...gangPriorityJob) (map[string]time.Time, error) {
		sent := map[string]time.Time{}
		for _, j := range jobs {
			pg, pods := j.objects(ns, schedName)
			if _, err := c.Client.SchedulingV1beta1().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
				return nil, fmt.Errorf("create PodGroup %s/%s: %w", ns, pg.Name, err)
			}
			s, err := createPods(ctx, c, pods, 8)
			if err != nil {
				return nil, err
			}
			for k, t := range s {
				sent[k] = t
			}
		}
		return sent, nil
	}
	bar := r.bar(fmt.Sprintf("gang priority %s (bound)", ns), 2*perRack+4*perRack+perRack)
	defer bar.done()
	// The low gangs, low-whole first (it takes a rack), then the small ones.
	if _, err := create(whole); err != nil {
		return out, err
	}
	if err := waitBound(ctx, watch, perRack, timeout, ns+": low-whole", bar); err != nil {
		return out, err
	}
	if _, err := create(small...); err != nil {
		return out, err
	}
	lows := 5 * perRack
	if err := waitBound(ctx, watch, lows, timeout, ns+": the low gangs", bar); err != nil {
		return out, err
	}
	sent, err := create(high)
	if err != nil {
		return out, err
	}
	var first time.Time
	for _, t := range sent {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	if _, err := waitSettled(ctx, watch, lows+perRack, quiet, timeout, bar); err != nil {
		return out, err
	}
	bound := watch.Bound()
	var last time.Time
	for n, t := range bound {
		if strings.HasPrefix(n, "high-") {
			out.highBound++
			if t.After(last) {
				last = t
			}
		}
	}
	if out.highBound == perRack {
		out.runs = last.Sub(first)
	}
	pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return out, err
	}
	present := map[string]bool{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			present[p.Name] = true
		}
	}
	for _, j := range append([]gangPriorityJob{whole}, small...) {
		for _, sp := range j.job.Pods() {
			if !present[strings.ReplaceAll(sp.Name, "_", "-")] {
				out.evicted++
				if j.job.Name == whole.job.Name {
					out.wholeGone++
				}
			}
		}
	}
	if err := deletePods(ctx, c, ns); err != nil {
		return out, err
	}
	return out, c.Client.SchedulingV1beta1().PodGroups(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
}

// gangPriorityAgg is one scheduler's runs of the priority case: runs with the high gang running, runs that
// evicted low-whole in part, and per run the pods evicted and (running runs) the time to the high gang running.
type gangPriorityAgg struct {
	running, wholePartial int
	evicted, times        []float64
}

// gangPriorityFigure draws the pods each scheduler evicted per run of the priority case, side by side; fewest is
// the least any plan needs (low-whole's pods).
func (r *Runner) gangPriorityFigure(s *Section, reps, fewest int, res map[string]*gangPriorityAgg) error {
	names := r.schedulers()
	var groups []string
	var vals [][]float64
	for rep := 0; rep < reps; rep++ {
		groups = append(groups, fmt.Sprintf("run %d", rep+1))
		row := make([]float64, len(names))
		for i, name := range names {
			if a := res[name]; a != nil && rep < len(a.evicted) {
				row[i] = a.evicted[rep]
			}
		}
		vals = append(vals, row)
	}
	title := fmt.Sprintf("Priority case: pods evicted for the high gang (fewest possible %d)", fewest)
	return r.barFigure(s, "gang_priority", title, "pods evicted", groups, names, vals, func(p *plot.Plot) { p.Y.Min, p.Y.Max = 0, 1.3*maxOf(vals) })
}

// gangPriorityCase runs the priority case for each scheduler, reps times alternated, on its own nodes
// (removed afterwards), and adds its CSV, table and finding to s.
func (r *Runner) gangPriorityCase(ctx context.Context, c *harness.Cluster, s *Section, perRack, reps int, quiet, timeout time.Duration) error {
	nodes := gangPriorityNodes(perRack)
	if err := createGangNodes(ctx, c, nodes); err != nil {
		return err
	}
	var rows, trows [][]string
	res := map[string]*gangPriorityAgg{}
	for rep := 1; rep <= reps; rep++ {
		for _, name := range r.schedulers() {
			out, err := r.gangPriorityRun(ctx, c, fmt.Sprintf("prio-%s-%d", shortName(name), rep), name, perRack, quiet, timeout)
			if err != nil {
				return fmt.Errorf("priority case (%s, run %d): %w", name, rep, err)
			}
			a := res[name]
			if a == nil {
				a = &gangPriorityAgg{}
				res[name] = a
			}
			runs := out.highBound == out.highWorkers
			t := ""
			if runs {
				a.running++
				a.times = append(a.times, out.runs.Seconds())
				t = fmt.Sprintf("%.2f", out.runs.Seconds())
			}
			if out.wholeGone > 0 && out.wholeGone < perRack {
				a.wholePartial++
			}
			a.evicted = append(a.evicted, float64(out.evicted))
			rows = append(rows, []string{itoa(rep), name, fmt.Sprint(runs), itoa(out.highBound), itoa(out.highWorkers), itoa(out.evicted), itoa(out.wholeGone), t})
			r.statusf("   priority case, %s, run %d: high gang %d of %d bound, %d evicted (%d of low-whole's %d), %s", name, rep, out.highBound, out.highWorkers,
				out.evicted, out.wholeGone, perRack, map[bool]string{true: "running after " + t + " s", false: "not running"}[runs])
		}
	}
	for _, n := range nodes {
		if err := c.Client.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil {
			return err
		}
	}
	if err := r.writeCSV(s, "gang_priority", []string{"run", "scheduler", "high_running", "high_bound", "high_workers", "evicted", "evicted_low_whole", "high_running_after_s"}, rows); err != nil {
		return err
	}
	if err := r.gangPriorityFigure(s, reps, perRack, res); err != nil {
		return err
	}
	for _, name := range r.schedulers() {
		a := res[name]
		if a == nil {
			continue
		}
		t := "–"
		if len(a.times) > 0 {
			t = fmt.Sprintf("%.2f s", median(a.times))
		}
		trows = append(trows, []string{name, fmt.Sprintf("%d of %d", a.running, reps), fmt.Sprintf("%v", a.evicted), fmt.Sprintf("%d", perRack),
			itoa(a.wholePartial), t})
	}
	s.Tables = append(s.Tables, table([]string{"priority case", "runs with the high gang running", "pods evicted, per run", "fewest possible",
		"runs evicting low-whole (disruptionMode all) in part", "median time to the high gang running"}, trows))
	return nil
}
