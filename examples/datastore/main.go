// Command datastore is the Weave paper's second case study (§6.3): the
// management plane of a distributed transactional datastore (CorfuDB).
// A simulated control loop lets nodes fail, recover and join; at every
// step Weave recomputes the roles (active and backup sequencer,
// management servers) and the rack-aware replica placement from the
// policies in policy.sql, the program prints each decision and checks
// every invariant. When too few racks remain, it prints Weave's
// explanation and keeps the layout in force.
//
//	go run ./examples/datastore
package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

// event is something that happens to the cluster before a step.
type event struct {
	what string
	do   func(c *Cluster) error
}

func join(name, rack string) event {
	return event{"join " + name + " (" + rack + ")", func(c *Cluster) error { return c.Join(name, rack) }}
}
func fail(name string) event {
	return event{name + " fails", func(c *Cluster) error { return c.Fail(name) }}
}
func recover_(name string) event {
	return event{name + " recovers", func(c *Cluster) error { return c.Recover(name) }}
}

// scenario is the demo: six nodes in three racks, a fourth rack joins,
// transient and permanent failures, a flapping node, then the loss of two
// racks (too few for the policy) and a new rack that restores it.
var scenario = [][]event{
	{join("n1", "rack-a"), join("n2", "rack-a"), join("n3", "rack-b"), join("n4", "rack-b"), join("n5", "rack-c"), join("n6", "rack-c")},
	{join("n7", "rack-d"), join("n8", "rack-d")},
	{fail("n1")},
	{recover_("n1")},
	{fail("n3")},
	{},
	{},
	{fail("n5"), join("n9", "rack-b")},
	{recover_("n5")},
	{fail("n5")},
	{recover_("n5")},
	{fail("n5")},
	{fail("n7"), fail("n8")},
	{fail("n6")},
	{join("n10", "rack-e")},
}

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "datastore:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out *os.File) error {
	c, err := NewCluster(ctx, DefaultConfig)
	if err != nil {
		return err
	}
	defer c.Close()
	for i := 1; i <= 8; i++ {
		if err := c.AddShard(fmt.Sprintf("shard-%d", i), 3); err != nil {
			return err
		}
	}
	violations := 0
	var total time.Duration
	for step, events := range scenario {
		if step > 0 {
			if err := c.Tick(); err != nil {
				return err
			}
		}
		var what []string
		for _, e := range events {
			if err := e.do(c); err != nil {
				return err
			}
			what = append(what, e.what)
		}
		if len(what) == 0 {
			what = []string{"time passes"}
		}
		nodes, shards, err := c.Snapshot()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "step %d (t=%ds): %s\n", step+1, step*c.Config.StepSeconds, strings.Join(what, ", "))
		fmt.Fprintf(out, "  nodes: %s\n", describeNodes(nodes))
		sr, err := c.Step(ctx)
		if err != nil {
			return err
		}
		total += sr.Solve
		fmt.Fprint(out, sr.Describe())
		if bad := CheckStep(c.Config, nodes, shards, sr); len(bad) > 0 {
			violations += len(bad)
			fmt.Fprintf(out, "  INVARIANTS VIOLATED: %s\n", strings.Join(bad, "; "))
		} else if sr.New != nil {
			fmt.Fprintf(out, "  %s in %v, %d replica moves; invariants hold\n", sr.Status, sr.Solve.Round(time.Millisecond), sr.Moves)
		}
	}
	fmt.Fprintf(out, "%d steps, %v solving, %d invariant violations\n", len(scenario), total.Round(time.Millisecond), violations)
	if violations > 0 {
		return fmt.Errorf("%d invariant violations", violations)
	}
	return nil
}

func describeNodes(nodes map[string]NodeInfo) string {
	names := make([]string, 0, len(nodes))
	for n := range nodes {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if len(names[i]) != len(names[j]) {
			return len(names[i]) < len(names[j])
		}
		return names[i] < names[j]
	})
	var parts []string
	for _, n := range names {
		s := n + "@" + nodes[n].Rack
		if st := nodes[n].Status; st != "up" {
			s += " " + strings.ToUpper(st)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
