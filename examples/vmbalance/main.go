// Command vmbalance is the Weave paper's VM load-balancing case study
// (§6.2, DRS): given hosts, VMs and affinity rules, it asks Weave for at
// most K migrations that even out memory utilisation, compares them with a
// greedy hill-climbing balancer, and draws the before/after figure.
//
//	go run ./examples/vmbalance [-seed 1] [-k 10] [-timeout 4s] [-out DIR]
//
// The figure goes to -out, by default a new temporary directory (printed),
// so that trying the example leaves the checkout as it was; -out docs
// redraws the figure the examples' README shows. Its last line is
// "range before: A%-B%, after: C%-D%, migrations: K".
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/weavesql/weave"
)

func main() {
	if err := runArgs(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "vmbalance:", err)
		os.Exit(1)
	}
}

// runArgs is the command with its flags: main, testable in-process.
func runArgs(args []string) error {
	fs := flag.NewFlagSet("vmbalance", flag.ContinueOnError)
	seed := fs.Int64("seed", 1, "instance seed (1, 2 and 3 are the shipped seeds)")
	k := fs.Int("k", 10, "at most k migrations")
	penalty := fs.Int64("penalty", 10, "penalty per migration, in hundredths of a percentage point")
	timeout := fs.Duration("timeout", 4*time.Second, "solver time limit")
	start := fs.String("start", "greedy", "warm start for the decision column: greedy (the baseline's plan) or current (no migration)")
	out := fs.String("out", "", "directory for the figure (vmbalance.png, vmbalance.svg); default: a new temporary directory")
	figure := fs.Bool("figure", true, "draw the figure")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dir := *out
	if *figure && dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "vmbalance-"); err != nil {
			return err
		}
	}
	if !*figure {
		dir = ""
	}
	return run(*seed, *k, *penalty, *timeout, *start, dir)
}

// run solves one instance and prints the plan; with out set it writes the
// figure there.
func run(seed int64, k int, penalty int64, timeout time.Duration, start, out string) error {
	ctx := context.Background()
	in := Generate(seed, 524, 39, 85)
	lo, hi := in.Range(in.Current())
	fmt.Printf("cluster (seed %d): %d hosts, %d VMs, %d VM-VM rules, %d VM-host rules; memory utilisation %s%%-%s%%\n",
		seed, len(in.Hosts), len(in.VMs), len(in.VMRules), len(in.Must)+len(in.MustNot), pct(lo), pct(hi))

	t0 := time.Now()
	g := Greedy(in, k)
	glo, ghi := in.Range(g)
	fmt.Printf("greedy baseline: %s%%-%s%% with %d migrations (%v)\n", pct(glo), pct(ghi), len(in.Migrations(g)), time.Since(t0).Round(time.Millisecond))

	var warm Placement
	switch start {
	case "greedy":
		warm = g
	case "current":
	default:
		return fmt.Errorf("-start must be greedy or current, not %q", start)
	}
	b, err := NewBalancer(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	if err := b.LoadFrom(ctx, in, k, penalty, warm); err != nil {
		return err
	}
	t0 = time.Now()
	p, res, err := b.Round(ctx, weave.SolveOptions{Timeout: timeout})
	if err != nil {
		return err
	}
	elapsed := time.Since(t0)
	if bad := in.Check(p, k); len(bad) > 0 {
		return fmt.Errorf("Weave's placement violates the policy: %v", bad)
	}
	fmt.Printf("weave: %s in %v (solve %v), %d variables, %d constraints, soft %v\n", res.Status,
		elapsed.Round(time.Millisecond), res.Stats.Solve.Round(time.Millisecond), res.Stats.Variables, res.Stats.Constraints, res.Soft)
	hosts := map[string]Host{}
	for _, h := range in.Hosts {
		hosts[h.Name] = h
	}
	u0, u1 := in.Utilisation(in.Current()), in.Utilisation(p)
	for _, v := range in.Migrations(p) {
		from, to := v.Host, p[v.Name]
		fmt.Printf("  migrate %s (%d MB): %s %s%%->%s%%  =>  %s %s%%->%s%%\n", v.Name, v.Mem,
			from, pct(u0[from]), pct(u1[from]), to, pct(u0[to]), pct(u1[to]))
	}
	if out != "" {
		files, err := WriteFigure(out, "vmbalance", in, p)
		if err != nil {
			return err
		}
		fmt.Printf("figure: %v\n", files)
	}
	wlo, whi := in.Range(p)
	fmt.Printf("range before: %s%%-%s%%, after: %s%%-%s%%, migrations: %d\n", pct(lo), pct(hi), pct(wlo), pct(whi), len(in.Migrations(p)))
	return nil
}
