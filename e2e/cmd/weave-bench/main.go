// Command weave-bench runs the Weave paper's §6 experiments end to end against weave-scheduler and the real
// kube-scheduler (one at a time, on the same in-process API server and workload), and writes the raw data
// as CSV, the figures as PNG and SVG, and report.md beside them.
//
//	weave-bench all --out DIR          # every experiment, the paper's sizes (long)
//	weave-bench quick --out DIR        # every experiment, small (a few minutes)
//	weave-bench placed --out DIR       # one experiment (placed, quality, preemption, scale, ablation, latency); --quick shrinks it
//	weave-bench latency                # creation-to-binding latency by arrival rate; writes to a new temporary directory
//
// Progress goes to stderr; the API server's and the schedulers' logs to DIR/server.log.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"

	"k8s.io/klog/v2"

	"github.com/weavesql/weave/e2e/internal/bench"
)

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: weave-bench COMMAND [--out DIR] [--quick]\n\ncommands:\n")
	fmt.Fprintf(w, "  %-11s every experiment at the paper's sizes\n", "all")
	fmt.Fprintf(w, "  %-11s every experiment, small (a few minutes)\n", "quick")
	for _, e := range bench.Experiments {
		fmt.Fprintf(w, "  %-11s experiment %s: %s\n", e.Name, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(e.Sections)), ", "), "[]"), e.Help)
	}
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "weave-bench: %v\n", err)
		os.Exit(1)
	}
}

// redirect sends the process's stderr to DIR/server.log (off in the command's test).
var redirect = true

func run(args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(os.Stdout)
		return nil
	}
	cmd := args[0]
	fs := flag.NewFlagSet("weave-bench "+cmd, flag.ContinueOnError)
	out := fs.String("out", "", "output directory (default: a new temporary directory, printed at the end)")
	quick := fs.Bool("quick", cmd == "quick", "small sizes")
	tiny := fs.Bool("tiny", false, "smaller still (the command's own test)")
	workloads := fs.String("workloads", "", "scale: comma-separated scheduler_perf workloads to run (e.g. PreemptionBasic or Preempt; default all)")
	schedulers := fs.String("schedulers", "", "preemption, scale: run only these schedulers, in this order (kube, weave; default kube,weave)")
	nodes := fs.String("nodes", "", "scale: comma-separated node counts (default by mode: 500,5000; quick 500; tiny 50); latency: the node count (500)")
	batchWait := fs.Duration("batch-wait", 0, "weave-scheduler's batch wait (default its own)")
	burstLinger := fs.Duration("burst-linger", 0, "weave-scheduler's burst linger (default its own; negative: off)")
	runs := fs.Int("runs", 0, "latency: alternated runs (default 3)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run (API server, schedulers, client) to this file")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *out == "" {
		dir, err := os.MkdirTemp("", "weave-bench-"+cmd+"-")
		if err != nil {
			return err
		}
		*out = dir
	}
	wl := split(*workloads)
	var ns []int
	for _, n := range strings.Split(*nodes, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		v, err := strconv.Atoi(n)
		if err != nil || v <= 0 {
			return fmt.Errorf("--nodes: %q is not a positive number", n)
		}
		ns = append(ns, v)
	}
	var exps []bench.Experiment
	switch cmd {
	case "all", "quick":
		exps = bench.Experiments
	default:
		e, ok := bench.Lookup(cmd)
		if !ok {
			usage(os.Stderr)
			return fmt.Errorf("unknown command %q", cmd)
		}
		exps = []bench.Experiment{e}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	logFile, err := os.Create(filepath.Join(*out, "server.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	quietKlog(logFile)
	progress := os.Stderr
	if redirect {
		if progress, err = redirectStderr(logFile); err != nil {
			return err
		}
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	r, err := bench.NewRunner(bench.Config{
		Out: *out, Quick: *quick, Tiny: *tiny,
		Progress: progress, ServerLog: logFile,
		Command:   "weave-bench " + strings.Join(args, " "),
		Workloads: wl, Nodes: ns, Schedulers: split(*schedulers), BatchWait: *batchWait, BurstLinger: *burstLinger, Runs: *runs,
	})
	if err != nil {
		return err
	}
	err = r.Run(ctx, exps)
	fmt.Fprintf(progress, "report: %s\n", filepath.Join(*out, "report.md"))
	return err
}

// split splits a comma-separated list, dropping empty items.
func split(list string) []string {
	var out []string
	for _, w := range strings.Split(list, ",") {
		if w = strings.TrimSpace(w); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// quietKlog sends the API server's and kube-scheduler's klog output to w, at verbosity 0.
func quietKlog(w io.Writer) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	fs.Set("v", "0")
	fs.Set("logtostderr", "false")
	fs.Set("alsologtostderr", "false")
	fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(w)
}
