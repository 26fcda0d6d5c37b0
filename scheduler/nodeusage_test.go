package scheduler

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"testing"
)

// usageOf restates node_usage in Go: per node, the sums over its bound
// pods in phase Pending or Running (bound_pod's pods, before the batch is
// taken out).
func usageOf(st *State) map[string][6]int64 {
	out := map[string][6]int64{}
	for _, p := range st.Pods {
		if p.NodeName == "" || !live(p) {
			continue
		}
		u := out[p.NodeName]
		out[p.NodeName] = [6]int64{u[0] + p.CPU, u[1] + p.Memory, u[2] + p.Storage, u[3] + 1, u[4] + p.CPULimit, u[5] + p.MemoryLimit}
	}
	return out
}

// resourceUsageOf restates node_resource_usage in Go: per node and scalar
// resource, what its bound pods in phase Pending or Running request.
func resourceUsageOf(st *State) map[[2]string]int64 {
	out := map[[2]string]int64{}
	for _, p := range st.Pods {
		if p.NodeName == "" || !live(p) {
			continue
		}
		for r, q := range p.Resources {
			out[[2]string{p.NodeName, r}] += q
		}
	}
	return out
}

func readResourceUsage(t *testing.T, s *Scheduler) map[[2]string]int64 {
	t.Helper()
	rows, err := s.DB().Query("select node_name, resource, request from node_resource_usage")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[[2]string]int64{}
	for rows.Next() {
		var n, r string
		var q int64
		if err := rows.Scan(&n, &r, &q); err != nil {
			t.Fatal(err)
		}
		got[[2]string{n, r}] = q
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

func readUsage(t *testing.T, s *Scheduler) map[string][6]int64 {
	t.Helper()
	rows, err := s.DB().Query("select node_name, cpu_request, memory_request, storage_request, pods, cpu_limit, memory_limit from node_usage")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string][6]int64{}
	for rows.Next() {
		var n string
		var u [6]int64
		if err := rows.Scan(&n, &u[0], &u[1], &u[2], &u[3], &u[4], &u[5]); err != nil {
			t.Fatal(err)
		}
		got[n] = u
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestNodeUsageFollowsThePods: node_usage, which the scheduler keeps as it
// writes pods instead of summing the bound pods at every batch, equals the
// Go sums over the state's pods (and node_resource_usage, their scalar
// resources) after every step of random histories on
// each state database: pods added pending or bound, rebound, their phase
// changed (to finished and back), deleted, placed by batches (whose first
// half is assumed bound while the second is solved) and evicted by
// preemption plans.
func TestNodeUsageFollowsThePods(t *testing.T) {
	t.Parallel()
	phases := []string{PhasePending, PhaseRunning, PhaseSucceeded, PhaseFailed}
	for _, d := range raceDBs(stateDBs()) {
		t.Run(d.name, func(t *testing.T) {
			s := newOn(t, d, Config{BatchSize: 6})
			ctx := context.Background()
			rng := rand.New(rand.NewSource(5))
			var nodes []Node
			for i := 0; i < 5; i++ {
				nodes = append(nodes, Node{Name: fmt.Sprintf("n%d", i), CPU: 3000, Memory: 8000, Pods: 20,
					Resources: map[string]int64{"example.com/gpu": 4, "hugepages-2Mi": 8 << 20}})
			}
			addNodes(t, s, nodes...)
			steps := 0
			check := func(what string) {
				t.Helper()
				steps++
				if got, want := readUsage(t, s), usageOf(s.State()); !reflect.DeepEqual(got, want) {
					t.Fatalf("step %d (%s):\nnode_usage %v\nwant       %v", steps, what, got, want)
				}
				if got, want := readResourceUsage(t, s), resourceUsageOf(s.State()); !reflect.DeepEqual(got, want) {
					t.Fatalf("step %d (%s):\nnode_resource_usage %v\nwant                %v", steps, what, got, want)
				}
			}
			next, evicted := 0, 0
			rounds := 150
			if raceDetector {
				rounds = 100 // every round in .ci/run's run without -race
			}
			for round := 0; round < rounds; round++ {
				st := s.State()
				var names []string
				for n := range st.Pods {
					names = append(names, n)
				}
				switch op := rng.Intn(6); {
				case op <= 1 || len(names) == 0:
					next++
					p := Pod{Name: fmt.Sprintf("p%d", next), CPU: 500 + rng.Int63n(1500), Memory: 100 + rng.Int63n(3000),
						Storage: rng.Int63n(50), CPULimit: rng.Int63n(2000), MemoryLimit: rng.Int63n(4000),
						Phase: PhasePending, Priority: int64(rng.Intn(3)) * 100}
					if rng.Intn(2) == 0 {
						p.NodeName, p.Phase = nodes[rng.Intn(len(nodes))].Name, phases[rng.Intn(len(phases))]
					}
					if rng.Intn(3) == 0 {
						p.Resources = map[string]int64{"example.com/gpu": 1 + rng.Int63n(2)}
						if rng.Intn(2) == 0 {
							p.Resources["hugepages-2Mi"] = 2 << 20
						}
					}
					addPods(t, s, p)
					check("add " + p.Name)
				case op == 2:
					p := *st.Pods[names[rng.Intn(len(names))]]
					p.NodeName, p.CPU = nodes[rng.Intn(len(nodes))].Name, 100+rng.Int63n(1500)
					addPods(t, s, p)
					check("rebind " + p.Name)
				case op == 3:
					name := names[rng.Intn(len(names))]
					if err := s.SetPhase(ctx, name, phases[rng.Intn(len(phases))]); err != nil {
						t.Fatal(err)
					}
					check("phase of " + name)
				case op == 4:
					name := names[rng.Intn(len(names))]
					if err := s.DeletePod(ctx, name); err != nil {
						t.Fatal(err)
					}
					check("delete " + name)
				default:
					if _, _, err := s.SchedulePending(ctx); err != nil {
						t.Fatal(err)
					}
					check("batch")
					if _, ev, _, err := s.Preempt(ctx); err != nil {
						t.Fatal(err)
					} else if len(ev) > 0 {
						evicted += len(ev)
						check(fmt.Sprintf("preemption evicting %d", len(ev)))
					}
				}
			}
			if evicted == 0 && !raceDetector {
				// Under -race the history is 100 rounds (race_on_test.go) and may end before a plan
				// evicts (it did in CI); .ci/run's run without -race has every round and this check.
				t.Fatal("no preemption plan evicted a pod: the history does not reach evictions")
			}
			if testing.Verbose() {
				t.Logf("%d steps, %d pods evicted", steps, evicted)
			}
		})
	}
}
