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
	if os.Getenv("WEAVE_PREEMPT_QUALITY") == "" {
		t.Skip("set WEAVE_PREEMPT_QUALITY=1")
	}
	nodes, _ := strconv.Atoi(os.Getenv("NODES"))
	if nodes == 0 {
		nodes = 500
	}
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
