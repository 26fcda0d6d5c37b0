package app

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/weavesql/weave/scheduler"
)

// TestPreemptQuality runs the preemption model on PreemptionBasic's state (NODES nodes of 4 CPU, each full with
// four 900m pods of priority 1; 3-CPU pods of priority 10 pending) for plans of several sizes and improvement
// timeouts: how many pods a plan places and how long it takes. WEAVE_PREEMPT_QUALITY=1 runs it.
func TestPreemptQuality(t *testing.T) {
	nodes := qualityNodes(t, "WEAVE_PREEMPT_QUALITY", 500)
	for _, imp := range []time.Duration{0, 50 * time.Millisecond, -1} {
		for _, n := range []int{1, 5, 20, 100} {
			s, err := scheduler.New(scheduler.Config{Name: "weave-scheduler", BatchSize: 100, BatchIdle: -1, Seed: 1, PreemptionImprovementTimeout: imp})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for i := 0; i < nodes; i++ {
				name := fmt.Sprintf("node-%d", i)
				if err := s.UpsertNode(ctx, scheduler.Node{Name: name, CPU: 4000, Memory: 32000, Pods: 110, Labels: map[string]string{scheduler.LabelHostname: name}}); err != nil {
					t.Fatal(err)
				}
				for k := 0; k < 4; k++ {
					if err := s.UpsertPod(ctx, scheduler.Pod{Name: fmt.Sprintf("low-%d-%d", i, k), SchedulerName: "weave-scheduler", CPU: 900, Memory: 500, Priority: 1, NodeName: name, Phase: scheduler.PhaseRunning}); err != nil {
						t.Fatal(err)
					}
				}
			}
			var names []string
			for i := 0; i < n; i++ {
				names = append(names, fmt.Sprintf("high-%d", i))
				if err := s.UpsertPod(ctx, scheduler.Pod{Name: names[i], SchedulerName: "weave-scheduler", CPU: 3000, Memory: 500, Priority: 10, Phase: scheduler.PhasePending}); err != nil {
					t.Fatal(err)
				}
			}
			t0 := time.Now()
			bs, ev, us, err := s.PreemptPods(ctx, names)
			st := s.LastStats()
			t.Logf("improvement %v, %d pods: placed %d, evictions %d, unschedulable %d, err %v in %v (fetch %v ground %v solve %v; %d vars)", imp, n, len(bs), len(ev), len(us), err,
				time.Since(t0).Round(time.Millisecond), st.Fetch.Round(time.Millisecond), st.Ground.Round(time.Millisecond), st.Solve.Round(time.Millisecond), st.Variables)
			if n == 20 && imp == 0 {
				ps := s.PolicyState()
				t1 := time.Now()
				f := ps.FeasibleNodes(ps.Pods[names[len(names)-1]])
				t.Logf("FeasibleNodes of one pod: %d nodes in %v", len(f), time.Since(t1))
			}
			s.Close()
		}
	}
}

// TestPreemptQualityCrossNode compares improvement timeouts on plans that need evictions on other nodes than
// the preemptor's (paper Fig. 3): NODES nodes of 4 CPU in 10 zones, each full with two 1-CPU "web" pods and
// one 2-CPU "db" pod of priority 1 (app=db, anti-affine to app=db in the zone); preemptors of priority 10
// (2 CPU, app=db, the same anti-affinity) fit a node only by evicting its db pod and every other db pod
// of the zone. The best plan puts each preemptor in its own zone and evicts the zone's db pods; it is
// checked with the default waits, the other waits are logged. WEAVE_PREEMPT_QUALITY=1 runs it.
func TestPreemptQualityCrossNode(t *testing.T) {
	nodes := qualityNodes(t, "WEAVE_PREEMPT_QUALITY", 100)
	anti := []scheduler.PodAffinityTerm{{Anti: true, Required: true, Selector: scheduler.SelectLabels(map[string]string{"app": "db"}), TopologyKey: scheduler.LabelZone}}
	db := map[string]string{"app": "db"}
	for _, unplaced := range []time.Duration{-1, 100 * time.Millisecond, 0, time.Second} {
		for _, n := range []int{1, 5, 10, 20} {
			s, err := scheduler.New(scheduler.Config{Name: "weave-scheduler", BatchSize: 100, BatchIdle: -1, Seed: 1, PreemptionUnplacedImprovementTimeout: unplaced})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for i := 0; i < nodes; i++ {
				name := fmt.Sprintf("node-%d", i)
				zone := fmt.Sprintf("z%d", i%10)
				if err := s.UpsertNode(ctx, scheduler.Node{Name: name, CPU: 4000, Memory: 32000, Pods: 110, Zone: zone,
					Labels: map[string]string{scheduler.LabelHostname: name, scheduler.LabelZone: zone}}); err != nil {
					t.Fatal(err)
				}
				for k := 0; k < 2; k++ {
					if err := s.UpsertPod(ctx, scheduler.Pod{Name: fmt.Sprintf("web-%d-%d", i, k), SchedulerName: "weave-scheduler", CPU: 1000, Memory: 500, Priority: 1, NodeName: name, Phase: scheduler.PhaseRunning}); err != nil {
						t.Fatal(err)
					}
				}
				if i < 20 { // db pods on the first two nodes of each zone
					if err := s.UpsertPod(ctx, scheduler.Pod{Name: fmt.Sprintf("db-%d", i), SchedulerName: "weave-scheduler", CPU: 2000, Memory: 500, Priority: 1, NodeName: name, Phase: scheduler.PhaseRunning, Labels: db, Affinity: anti}); err != nil {
						t.Fatal(err)
					}
				}
			}
			var names []string
			for i := 0; i < n; i++ {
				names = append(names, fmt.Sprintf("high-%d", i))
				if err := s.UpsertPod(ctx, scheduler.Pod{Name: names[i], SchedulerName: "weave-scheduler", CPU: 2000, Memory: 500, Priority: 10, Phase: scheduler.PhasePending, Labels: db, Affinity: anti}); err != nil {
					t.Fatal(err)
				}
			}
			t0 := time.Now()
			bs, ev, us, err := s.PreemptPods(ctx, names)
			t.Logf("unplaced wait %v (0: default), %d preemptors: placed %d, evictions %d, unschedulable %d, err %v in %v", unplaced, n, len(bs), len(ev), len(us), err, time.Since(t0).Round(time.Millisecond))
			// One db pod per zone: at most 10 preemptors fit, each evicting its zone's two db pods.
			if want := min(n, 10); unplaced == 0 && (len(bs) != want || len(ev) != 2*want) {
				t.Errorf("default wait, %d preemptors: placed %d with %d evictions, want %d with %d", n, len(bs), len(ev), want, 2*want)
			}
			s.Close()
		}
	}
}

// qualityNodes skips the measurement t unless the environment variable env is set, and returns the node
// count it runs at: NODES, or def.
func qualityNodes(t *testing.T, env string, def int) int {
	t.Helper()
	if os.Getenv(env) == "" {
		t.Skipf("set %s=1", env)
	}
	if n, _ := strconv.Atoi(os.Getenv("NODES")); n > 0 {
		return n
	}
	return def
}
