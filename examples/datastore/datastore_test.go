package main

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/weavesql/weave/cp"
)

func newTestCluster(t testing.TB, racks, perRack, shards int) *Cluster {
	t.Helper()
	c, err := NewCluster(context.Background(), DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	n := 0
	for r := 0; r < racks; r++ {
		for i := 0; i < perRack; i++ {
			n++
			if err := c.Join(fmt.Sprintf("n%d", n), fmt.Sprintf("rack-%c", 'a'+r)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for s := 1; s <= shards; s++ {
		if err := c.AddShard(fmt.Sprintf("shard-%d", s), 3); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// step runs one step and checks every invariant; it returns the result.
func step(t testing.TB, c *Cluster) *StepResult {
	t.Helper()
	nodes, shards, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sr, err := c.Step(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if bad := CheckStep(c.Config, nodes, shards, sr); len(bad) > 0 {
		t.Fatalf("invariants violated: %v\n%s", bad, sr.Describe())
	}
	if testing.Verbose() && sr.Status.String() != "OPTIMAL" {
		t.Logf("step: %s", sr.Status)
	}
	if sr.Status.String() == "INFEASIBLE" && sr.Explanation == nil {
		t.Fatalf("infeasible without an explanation")
	}
	return sr
}

func TestScenario(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	out, _ := os.ReadFile(f.Name())
	s := string(out)
	for _, want := range []string{"INFEASIBLE: layout unchanged", "management_spread", "removed n3 from the cluster", "removed n5 from the cluster", "0 invariant violations"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// TestRandomFailures is the property test: random sequences of failures,
// recoveries, joins and silence; after every step every invariant holds,
// an infeasible state comes with an explanation and leaves the layout
// unchanged.
func TestRandomFailures(t *testing.T) {
	seqs, steps := 8, 12
	if testing.Short() {
		seqs = 3
	}
	for seed := int64(1); seed <= int64(seqs); seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			c := newTestCluster(t, 4, 2, 6)
			step(t, c)
			next := 9
			var log []string
			for i := 0; i < steps; i++ {
				if err := c.Tick(); err != nil {
					t.Fatal(err)
				}
				nodes, _, err := c.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for n := range nodes {
					names = append(names, n)
				}
				// sort for determinism
				sortStrings(names)
				for e := 0; e < 1+rng.Intn(2); e++ {
					n := names[rng.Intn(len(names))]
					switch r := rng.Intn(10); {
					case r < 4:
						log = append(log, "fail "+n)
						err = c.Fail(n)
					case r < 8:
						log = append(log, "recover "+n)
						err = c.Recover(n)
					default:
						name := fmt.Sprintf("n%d", next)
						next++
						rack := fmt.Sprintf("rack-%c", 'a'+rng.Intn(5))
						log = append(log, "join "+name+"@"+rack)
						err = c.Join(name, rack)
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				before, err := c.Current()
				if err != nil {
					t.Fatal(err)
				}
				sr := step(t, c)
				if sr.New == nil {
					after, err := c.Current()
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(before, after) {
						t.Fatalf("a step without a solution changed the layout")
					}
					t.Logf("after %v: %s", log, sr.Status)
				}
			}
		})
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestMinimalMovementOnJoin: when nodes join, exactly the replicas above
// the new quota move, no more.
func TestMinimalMovementOnJoin(t *testing.T) {
	for _, racks := range [][2]string{{"rack-d", "rack-d"}, {"rack-d", "rack-e"}} {
		t.Run(racks[0]+"+"+racks[1], func(t *testing.T) {
			c := newTestCluster(t, 3, 2, 8)
			// 5,000 branches reach the minimum (1,000 do too): a time
			// limit on a loaded machine did not.
			c.Backend, c.Timeout = branchLimited{5000}, 0
			step(t, c)
			old, err := c.Current()
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range racks {
				if err := c.Join(fmt.Sprintf("n%d", 7+i), r); err != nil {
					t.Fatal(err)
				}
			}
			sr := step(t, c)
			maxLoad := map[string]int{}
			for _, n := range sr.New.Replicas {
				maxLoad[n]++
			}
			for n, k := range maxLoad {
				if k > (len(old.Replicas)+7)/8 {
					t.Errorf("%s holds %d replicas after the rebalance", n, k)
				}
			}
			if sr.New == nil {
				t.Fatalf("no layout after a join: %s", sr.Status)
			}
			// Lower bound: to bring the busiest node down to the fair
			// share, every node above it must shed its excess; nothing
			// else needs to move.
			load := map[string]int{}
			for _, n := range old.Replicas {
				load[n]++
			}
			quota := (len(old.Replicas) + 8 - 1) / 8
			need := 0
			for _, k := range load {
				need += max(0, k-quota)
			}
			if need == 0 || sr.Moves != need {
				t.Fatalf("%d replicas moved, the minimum is %d\n%s", sr.Moves, need, sr.Describe())
			}
			for k, n := range sr.New.Replicas {
				if n != old.Replicas[k] && n != "n7" && n != "n8" {
					t.Errorf("replica %s moved %s -> %s, not to the new node", k, old.Replicas[k], n)
				}
			}
			if sr.Old.Active != sr.New.Active || sr.Old.Backup != sr.New.Backup {
				t.Errorf("sequencers moved on a join")
			}
		})
	}
}

// TestTooFewRacks: when only two racks have live nodes, the management
// servers cannot be spread over three racks: Weave says so (an
// explanation naming the conflicting views), the layout stays, and the
// cluster recovers when a rack comes back.
func TestTooFewRacks(t *testing.T) {
	c := newTestCluster(t, 3, 2, 4)
	step(t, c)
	before, _ := c.Current()
	for _, n := range []string{"n5", "n6"} { // rack-c
		if err := c.Fail(n); err != nil {
			t.Fatal(err)
		}
	}
	sr := step(t, c)
	if sr.Status.String() != "INFEASIBLE" || sr.Explanation == nil {
		t.Fatalf("status %s, explanation %v", sr.Status, sr.Explanation)
	}
	views := map[string]bool{}
	for _, con := range sr.Explanation.Constraints {
		views[con.View] = true
	}
	if !views["management_spread"] || !views["management_count"] {
		t.Errorf("the explanation does not name the management policy:\n%s", sr.Explanation)
	}
	after, _ := c.Current()
	if !reflect.DeepEqual(before, after) {
		t.Errorf("the layout changed")
	}
	if err := c.Recover("n6"); err != nil {
		t.Fatal(err)
	}
	if sr := step(t, c); sr.New == nil {
		t.Fatalf("no layout after recovery: %s", sr.Status)
	}
}

// TestFlappingNodeRemoved: a node that fails RemoveAfterFailures times is
// removed even if it keeps coming back; a node silent for
// RemoveAfterSeconds is removed; a briefly silent node is not.
func TestFlappingNodeRemoved(t *testing.T) {
	c := newTestCluster(t, 3, 2, 4)
	step(t, c)
	for i := 0; i < DefaultConfig.RemoveAfterFailures; i++ {
		if i > 0 {
			c.Recover("n1")
			step(t, c)
		}
		c.Fail("n1")
		sr := step(t, c)
		removed := len(sr.Removed) == 1 && sr.Removed[0] == "n1"
		if removed != (i == DefaultConfig.RemoveAfterFailures-1) {
			t.Fatalf("failure %d: removed %v", i+1, sr.Removed)
		}
	}
	c.Fail("n3")
	for age := 0; age < DefaultConfig.RemoveAfterSeconds; age += DefaultConfig.StepSeconds {
		if sr := step(t, c); len(sr.Removed) != 0 {
			t.Fatalf("n3 removed after %ds of silence", age)
		}
		c.Tick()
	}
	if sr := step(t, c); len(sr.Removed) != 1 || sr.Removed[0] != "n3" {
		t.Fatalf("n3 not removed after %ds: %v", DefaultConfig.RemoveAfterSeconds, sr.Removed)
	}
}

// BenchmarkStep is the solve time of one control-loop round: a steady
// round (nothing changed), a round after a node failure that moves
// roles, and the rebalance after two nodes join (6 moves; the solver
// finds them but does not prove optimality, so it runs to its 1 s limit).
func BenchmarkStep(b *testing.B) {
	b.Run("steady", func(b *testing.B) {
		c := newTestCluster(b, 4, 2, 8)
		step(b, c)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			step(b, c)
		}
	})
	b.Run("failover", func(b *testing.B) {
		c := newTestCluster(b, 4, 2, 8)
		sr := step(b, c)
		for i := 0; i < b.N; i++ {
			c.Fail(sr.New.Active)
			step(b, c)
			c.Recover(sr.Old.Active)
			b.StopTimer()
			sr = step(b, c)
			b.StartTimer()
		}
	})
	b.Run("join", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			c := newTestCluster(b, 3, 2, 8)
			step(b, c)
			c.Join("n7", "rack-d")
			c.Join("n8", "rack-d")
			b.StartTimer()
			sr := step(b, c)
			b.ReportMetric(float64(sr.Moves), "moves")
		}
	})
}

// branchLimited is cp stopped after a number of branches instead of a
// time, with one worker: the same search on a quiet or a loaded machine.
type branchLimited struct{ branches int64 }

func (branchLimited) Name() string { return "cp (branch limit)" }

func (b branchLimited) Solve(ctx context.Context, m *cp.Model, p cp.Params) (*cp.Response, error) {
	p.NodeLimit, p.TimeLimit, p.Workers = b.branches, 0, 1
	return m.Solve(ctx, p)
}
