package sim

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weavesql/weave/scheduler"
)

// TestGangPreemptionPriorityCase is weave-bench gang's priority case in-process, through Scheduler.Preempt
// (the simulator's path): two racks of four 8-GPU nodes; priority-1 gangs fill them, low-whole (4 × 8 GPUs,
// rack, disruptionMode all) one rack and four gangs of 4 × 2 GPUs the other; then high (priority 100, 4 × 8
// GPUs, rack) arrives. One plan places high whole in low-whole's rack, evicting exactly low-whole's four pods
// (the small gangs' rack would take sixteen), and judgeGangs, the test's own check, finds no partial gang,
// topology violation or overfull node among what is left.
func TestGangPreemptionPriorityCase(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, 100, 10*time.Second, true)
	var nodes []scheduler.Node
	for r := 0; r < 2; r++ {
		for i := 0; i < 4; i++ {
			n := scheduler.Node{Name: fmt.Sprintf("r%d-n%d", r, i), CPU: 64000, Memory: 256000, Storage: 100000, Pods: 110,
				Labels: map[string]string{RackLabel: fmt.Sprintf("rack-%d", r)}, Resources: map[string]int64{GPU: 8}}
			if err := c.S.UpsertNode(ctx, n); err != nil {
				t.Fatal(err)
			}
			nodes = append(nodes, n)
		}
	}
	at := map[string]string{}
	submit := func(j GangJob, prio int64, all bool) {
		g := j.Group()
		g.DisruptAll = all
		if err := c.S.UpsertPodGroup(ctx, g); err != nil {
			t.Fatal(err)
		}
		for _, p := range j.Pods() {
			p.Priority = prio
			if err := c.Submit(ctx, p, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	schedule := func(want int) {
		bs, us, err := c.S.ScheduleBatch(ctx)
		if err != nil || len(bs) != want {
			t.Fatalf("bindings %v, unschedulable %v, %v: want %d bound", bs, us, err, want)
		}
		for _, b := range bs {
			at[b.Pod] = b.Node
		}
		if err := c.Apply(ctx, bs, nil); err != nil {
			t.Fatal(err)
		}
	}
	whole := GangJob{Name: "low-whole", Workers: 4, GPUs: 8, Rack: true}
	submit(whole, 1, true)
	schedule(4)
	jobs := []GangJob{whole}
	for k := 0; k < 4; k++ {
		j := GangJob{Name: fmt.Sprintf("low-small-%d", k), Workers: 4, GPUs: 2}
		submit(j, 1, false)
		jobs = append(jobs, j)
	}
	schedule(16)
	high := GangJob{Name: "high", Workers: 4, GPUs: 8, Rack: true}
	submit(high, 100, false)
	jobs = append(jobs, high)
	if bs, us, err := c.S.ScheduleBatch(ctx); err != nil || len(bs) != 0 || len(us) != 4 {
		t.Fatalf("the full cluster places %v (unschedulable %v, %v)", bs, us, err)
	}
	bs, ev, us, err := c.S.Preempt(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 4 || len(us) != 0 || len(ev) != 4 {
		t.Fatalf("plan: bindings %v, evictions %v, unschedulable %v: want high bound with 4 evictions", bs, ev, us)
	}
	for _, e := range ev {
		if p := c.pods[e.Pod]; p.PodGroup != whole.Name {
			t.Errorf("evicted %s of %s: want low-whole's pods only", e.Pod, p.PodGroup)
		}
		delete(at, e.Pod)
	}
	for _, b := range bs {
		at[b.Pod] = b.Node
	}
	if err := c.Apply(ctx, bs, ev); err != nil {
		t.Fatal(err)
	}
	st := judgeGangs(nodes, jobs, at)
	t.Logf("after the plan: %v", st)
	if st.partial != 0 || st.topology != 0 || st.overfull != 0 || st.complete != 5 {
		t.Errorf("after the plan: %v; want high and the four small gangs complete, nothing partial", st)
	}
}
