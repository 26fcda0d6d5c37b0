package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/weavesql/weave/e2e/harness"
	"github.com/weavesql/weave/e2e/internal/oracle/differential"
)

const (
	gangRack = "topology.example.com/rack"
	gangGPU  = v1.ResourceName("nvidia.com/gpu")
)

// gangPod is worker i of PodGroup group: gpus GPUs (request and limit, as extended resources need).
func gangPod(ns, group string, i int, gpus int64, sched string) *v1.Pod {
	q := *resource.NewQuantity(gpus, resource.DecimalSI)
	return makePod(ns, fmt.Sprintf("%s-%d", group, i), sched).with(func(p *v1.Pod) {
		p.Spec.Containers[0].Resources = v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("64Mi"), gangGPU: q},
			Limits:   v1.ResourceList{gangGPU: q},
		}
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To(group)}
	}).obj()
}

// gangGroup is a PodGroup gang of minCount, with the rack topology constraint when rack.
func gangGroup(ns, name string, minCount int32, rack bool) *schedulingv1beta1.PodGroup {
	g := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}}}}
	if rack {
		g.Spec.SchedulingConstraints = &schedulingv1beta1.PodGroupSchedulingConstraints{
			Topology: []schedulingv1beta1.TopologyConstraint{{Key: gangRack}}}
	}
	return g
}

// TestLiveGangs: weave-scheduler reads PodGroups from an API server with GenericWorkload and
// TopologyAwareWorkloadScheduling on. Three racks of two nodes with 8 GPUs each; gangs a and b (4 × 4 GPUs, rack)
// each need a whole rack; c (3 × 8 GPUs, rack) needs three nodes of one rack, which no rack has, though each of
// its pods fits a node alone; d (2 × 8 GPUs) and e (3 × 2 GPUs) compete for the third rack. Every gang ends
// all bound or all pending, every rack gang within one rack, c pending; at least three gangs run; each
// PodGroup carries PodGroupInitiallyScheduled (True for those running, False/Unschedulable for the others);
// and kube-scheduler v1.37.2's own Filter plugins accept every binding.
func TestLiveGangs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := harness.StartWith(t, harness.Options{FeatureGates: map[string]bool{"GenericWorkload": true, "TopologyAwareWorkloadScheduling": true}})
	o := newOracle(t)
	for r := 0; r < 3; r++ {
		if _, err := c.CreateNodes(ctx, fmt.Sprintf("rack%d", r), 2, harness.NodeSpec{CPU: "16", Memory: "64Gi",
			Labels: map[string]string{gangRack: fmt.Sprintf("r%d", r)}, Resources: v1.ResourceList{gangGPU: resource.MustParse("8")}}); err != nil {
			t.Fatal(err)
		}
	}
	const ns = "gangs"
	if err := c.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	type gang struct {
		name    string
		workers int
		gpus    int64
		rack    bool
	}
	gangs := []gang{{"a", 4, 4, true}, {"b", 4, 4, true}, {"c", 3, 8, true}, {"d", 2, 8, false}, {"e", 3, 2, false}}
	var pods []*v1.Pod
	for _, g := range gangs {
		if _, err := c.Client.SchedulingV1beta1().PodGroups(ns).Create(ctx, gangGroup(ns, g.name, int32(g.workers), g.rack), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < g.workers; i++ {
			pods = append(pods, gangPod(ns, g.name, i, g.gpus, weaveName))
		}
	}
	startWeave(t, c, liveWeaveConfig("gangs"), nil)
	if err := createPaced(ctx, c, pods, 0); err != nil {
		t.Fatal(err)
	}
	conds := map[string]*metav1.Condition{}
	waitFor(t, "every PodGroup's PodGroupInitiallyScheduled condition", 90*time.Second, func() bool {
		for _, g := range gangs {
			pg, err := c.Client.SchedulingV1beta1().PodGroups(ns).Get(ctx, g.name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			conds[g.name] = apimeta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled)
			if conds[g.name] == nil {
				return false
			}
		}
		return true
	})
	time.Sleep(2 * time.Second) // bindings under way land; the retries of the pending gangs decide nothing new
	v := judgeLive(t, ctx, o, c, "weave-scheduler", weaveName, ns)
	if n := v.count(differential.WrongBinding, differential.CheckRejected); n > 0 {
		t.Errorf("%d bindings the Filter plugins or weave's check reject", n)
	}
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rackOf := map[string]string{}
	for _, n := range nodes.Items {
		rackOf[n.Name] = n.Labels[gangRack]
	}
	running := 0
	for _, g := range gangs {
		bound, racks := 0, map[string]bool{}
		for i := 0; i < g.workers; i++ {
			if n := v.bound[fmt.Sprintf("%s/%s-%d", ns, g.name, i)]; n != "" {
				bound++
				racks[rackOf[n]] = true
			}
		}
		cond := conds[g.name]
		t.Logf("gang %s: %d of %d bound in racks %v; %s=%s %s: %s", g.name, bound, g.workers, racks,
			cond.Type, cond.Status, cond.Reason, cond.Message)
		switch {
		case bound != 0 && bound != g.workers:
			t.Errorf("gang %s: %d of %d pods bound (partial gang)", g.name, bound, g.workers)
		case g.rack && len(racks) > 1:
			t.Errorf("gang %s spans racks %v", g.name, racks)
		case bound == g.workers && cond.Status != metav1.ConditionTrue:
			t.Errorf("gang %s running with condition %s", g.name, cond.Status)
		case bound == 0 && (cond.Status != metav1.ConditionFalse || cond.Reason != schedulingv1beta1.PodGroupReasonUnschedulable):
			t.Errorf("gang %s pending with condition %s %s", g.name, cond.Status, cond.Reason)
		}
		if bound == g.workers {
			running++
		}
		if g.name == "c" && bound > 0 {
			t.Errorf("gang c (3 nodes of one rack, racks of 2) bound")
		}
	}
	if running < 3 {
		t.Errorf("%d gangs running, want at least 3 (a, b and d or e fit together)", running)
	}
}

// TestLiveGangPreemption: workload preemption on a live API server. Two racks of two 8-GPU nodes are full of
// priority-1 pods: gang l1 (4 × 4 GPUs, rack, disruptionMode all) fills one rack, seven plain pods (one of 4 GPUs,
// six of 2) the other. Then gang h (priority 100, 2 × 4 GPUs, rack) arrives: it needs 8 GPUs of one rack. Two of
// l1's pods would free them, but l1 goes whole or not at all (four evictions); three plain pods free them in the
// other rack. weave-scheduler plans h as one: exactly three plain pods are evicted, l1 is untouched, h is bound
// whole in one rack, and kube-scheduler v1.37.2's Filter plugins accept every binding of the final state.
// E2E_WEAVE_DISABLE=G3 (disruptionMode not modelled) makes it evict two of l1's pods and fail. With a
// PodDisruptionBudget over the plain pods (all pods Running; no disruption controller runs here, so the budget
// allows nothing), the plan leaves them out and evicts l1 whole instead: its four pods, no plain pod. With the
// budget's status set to allow two disruptions (as the disruption controller would), each plain pod alone may be
// evicted, but the plan needs three of them, and the Eviction API would refuse the third after the first two
// went: the plan counts the budget (P3) and evicts l1 whole too. E2E_WEAVE_DISABLE=P3 makes that case fail.
func TestLiveGangPreemption(t *testing.T) {
	t.Run("plain", func(t *testing.T) { liveGangPreemption(t, -1) })
	t.Run("budget", func(t *testing.T) { liveGangPreemption(t, 0) })
	t.Run("budget allowing two", func(t *testing.T) { liveGangPreemption(t, 2) })
}

// liveGangPreemption runs TestLiveGangPreemption's case; allowed < 0: no budget; 0: a budget whose status no
// controller sets (it allows nothing); > 0: a budget whose status allows that many disruptions.
func liveGangPreemption(t *testing.T, allowed int32) {
	budget := allowed >= 0
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := harness.StartWith(t, harness.Options{FeatureGates: map[string]bool{"GenericWorkload": true, "TopologyAwareWorkloadScheduling": true}})
	o := newOracle(t)
	for r := 0; r < 2; r++ {
		if _, err := c.CreateNodes(ctx, fmt.Sprintf("rack%d", r), 2, harness.NodeSpec{CPU: "16", Memory: "64Gi",
			Labels: map[string]string{gangRack: fmt.Sprintf("r%d", r)}, Resources: v1.ResourceList{gangGPU: resource.MustParse("8")}}); err != nil {
			t.Fatal(err)
		}
	}
	const ns = "gangpreempt"
	if err := c.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	startWeave(t, c, liveWeaveConfig("gangpreempt"), nil)
	create := func(pods []*v1.Pod, prio int32) {
		for _, p := range pods {
			p.Spec.Priority = ptr.To(prio)
		}
		if err := createPaced(ctx, c, pods, 0); err != nil {
			t.Fatal(err)
		}
	}
	gang := func(name string, workers int, gpus int64, prio int32, all bool) {
		g := gangGroup(ns, name, int32(workers), true)
		g.Spec.Priority = ptr.To(prio)
		if all {
			g.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
		}
		if _, err := c.Client.SchedulingV1beta1().PodGroups(ns).Create(ctx, g, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var pods []*v1.Pod
		for i := 0; i < workers; i++ {
			pods = append(pods, gangPod(ns, name, i, gpus, weaveName))
		}
		create(pods, prio)
	}
	waitBound := func(what string, n int) map[string]string {
		var bound map[string]string
		waitFor(t, what, 90*time.Second, func() bool {
			var err error
			bound, err = c.WaitBound(ctx, ns, 0, time.Second)
			return err == nil && len(bound) >= n
		})
		return bound
	}
	gang("l1", 4, 4, 1, true)
	waitBound("l1 bound", 4)
	var plain []*v1.Pod
	for i, gpus := range []int64{4, 2, 2, 2, 2, 2, 2} {
		p := gangPod(ns, "plain", i, gpus, weaveName)
		p.Spec.SchedulingGroup = nil
		p.Labels = map[string]string{"app": "plain"}
		plain = append(plain, p)
	}
	create(plain, 1)
	before := waitBound("the plain pods bound", 11)
	if budget {
		for name := range before {
			if err := c.SetRunning(ctx, ns, name); err != nil {
				t.Fatal(err)
			}
		}
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(7 - max(allowed, 0))),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "plain"}}}}
		created, err := c.Client.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if allowed > 0 {
			// What the disruption controller would write: seven healthy of at least 7 - allowed.
			created.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: created.Generation, DisruptionsAllowed: allowed,
				CurrentHealthy: 7, DesiredHealthy: 7 - allowed, ExpectedPods: 7}
			if _, err := c.Client.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second) // weave-scheduler's informer sees the status before h arrives
		}
	}
	gang("h", 2, 4, 100, false)
	waitFor(t, "h bound", 90*time.Second, func() bool {
		bound, err := c.WaitBound(ctx, ns, 0, time.Second)
		return err == nil && bound["h-0"] != "" && bound["h-1"] != ""
	})
	time.Sleep(time.Second) // anything else under way lands
	v := judgeLive(t, ctx, o, c, "weave-scheduler", weaveName, ns)
	if n := v.count(differential.WrongBinding, differential.CheckRejected); n > 0 {
		t.Errorf("%d bindings the Filter plugins or weave's check reject", n)
	}
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rackOf := map[string]string{}
	for _, n := range nodes.Items {
		rackOf[n.Name] = n.Labels[gangRack]
	}
	if r0, r1 := rackOf[v.bound[ns+"/h-0"]], rackOf[v.bound[ns+"/h-1"]]; r0 != r1 || r0 == "" {
		t.Errorf("h bound in racks %q and %q, want one", r0, r1)
	}
	var gone []string
	for name := range before {
		if v.bound[ns+"/"+name] == "" {
			gone = append(gone, name)
		}
	}
	sort.Strings(gone)
	t.Logf("h on %s and %s; evicted %v", v.bound[ns+"/h-0"], v.bound[ns+"/h-1"], gone)
	if budget {
		if want := []string{"l1-0", "l1-1", "l1-2", "l1-3"}; !slices.Equal(gone, want) {
			t.Errorf("evicted %v, want %v: the budget protects the plain pods, and l1 goes whole", gone, want)
		}
		return
	}
	for _, name := range gone {
		if strings.HasPrefix(name, "l1-") {
			t.Errorf("%s evicted: l1 (disruptionMode all) costs four evictions against three plain pods", name)
		}
	}
	if len(gone) != 3 {
		t.Errorf("%d pods evicted (%v), want 3", len(gone), gone)
	}
}
