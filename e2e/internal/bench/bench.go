package bench

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/weavesql/weave/e2e/harness"
)

// Config is one invocation of the benchmarks.
type Config struct {
	// Out is the output directory: CSVs, figures (PNG and SVG) and report.md.
	Out string
	// Quick shrinks every experiment so that all of them finish in a few minutes (CI).
	Quick bool
	// Tiny shrinks them further still (the package's own test of the output's form).
	Tiny bool
	// Progress receives progress bars and status lines (stderr); nil discards them.
	Progress io.Writer
	// ServerLog receives the API server's and the schedulers' logs; nil discards them.
	ServerLog io.Writer
	// Command is the command line, for the report.
	Command string
	// Workloads, when not empty, limits experiment 6 to the scheduler_perf workloads named (e.g.
	// PreemptionBasic); Nodes, when not empty, replaces its node counts.
	Workloads []string
	Nodes     []int
	// Schedulers, when not empty, limits experiments 4 and 6 to these schedulers (kube, weave), run in
	// its order: one of them for investigating it (the reports' comparisons need both), or both with
	// weave-scheduler first, so that alternated runs do not always give one the API server second.
	Schedulers []string
	// BatchWait, when not zero, sets weave-scheduler's batch wait (none by default since issue 24: a
	// batch is what is pending when the loop is free): the batching rule's cost and benefit.
	BatchWait time.Duration
	// BurstLinger, when not zero, sets weave-scheduler's burst linger (negative: off).
	BurstLinger time.Duration
	// Runs, when not zero, replaces the latency experiment's number of runs (3).
	Runs int
}

// Experiment is one of the paper's experiments, or a group of them that share runs.
type Experiment struct {
	// Name is the weave-bench subcommand.
	Name string
	// Sections lists the report sections (paper experiments 1-7) it fills.
	Sections []int
	// Help is a one-line description.
	Help string
	run  func(ctx context.Context, r *Runner) error
}

// Experiments lists the experiments in the order `all` runs them.
var Experiments = []Experiment{
	{Name: "placed", Sections: []int{1, 2, 5}, Help: "pods placed over time, scheduling latency and model size (nginx+redis, 50 nodes)", run: runPlaced},
	{Name: "quality", Sections: []int{3}, Help: "placement quality under heterogeneous demands", run: runQuality},
	{Name: "preemption", Sections: []int{4}, Help: "preemption convergence with three priority groups", run: runPreemption},
	{Name: "scale", Sections: []int{6}, Help: "scheduler_perf workloads at 500 and 5,000 nodes", run: runScale},
	{Name: "ablation", Sections: []int{7}, Help: "encoding and backend ablation on experiment-1 batches", run: runAblation},
	{Name: "latency", Sections: []int{8}, Help: "creation-to-binding latency at 10 pods/s, 100 pods/s and in a burst, 500 nodes", run: runLatency},
	{Name: "gang", Sections: []int{9}, Help: "PodGroups: gangs with a rack topology constraint on GPU nodes, and the stranding case", run: runGang},
}

// Lookup returns the experiment named name.
func Lookup(name string) (Experiment, bool) {
	for _, e := range Experiments {
		if e.Name == name {
			return e, true
		}
	}
	return Experiment{}, false
}

// Section is one experiment's part of the report: the paper's claim, what was run and what was measured.
type Section struct {
	N        int
	Title    string
	Paper    string   // the paper's numbers (markdown)
	Setup    string   // what was run (markdown)
	Tables   []string // markdown tables of measured numbers
	Findings []string // one line each, computed from the data
	Figures  []string // base names: NAME.png and NAME.svg in the output directory
	CSVs     []string
	Err      error
	Took     time.Duration
}

// Runner runs experiments and collects their report sections.
type Runner struct {
	cfg         Config
	log         *slog.Logger
	sections    map[int]*Section
	start       time.Time
	loadAtStart string
}

// loadAverage reads /proc/loadavg ("" elsewhere): the machine may be shared.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// NewRunner prepares the output directory.
func NewRunner(cfg Config) (*Runner, error) {
	if cfg.Out == "" {
		return nil, errors.New("bench: no output directory")
	}
	if cfg.Tiny {
		cfg.Quick = true
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if cfg.ServerLog == nil {
		cfg.ServerLog = io.Discard
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(cfg.ServerLog, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return &Runner{cfg: cfg, log: log, sections: map[int]*Section{}, start: time.Now(), loadAtStart: loadAverage()}, nil
}

// Run runs the experiments in order, each to the end even when an earlier one failed, and writes
// report.md. It returns the experiments' errors joined.
func (r *Runner) Run(ctx context.Context, exps []Experiment) error {
	var errs []error
	for _, e := range exps {
		r.statusf("== %s: %s", e.Name, e.Help)
		t0 := time.Now()
		err := e.run(ctx, r)
		for _, n := range e.Sections {
			s := r.section(n)
			s.Took = time.Since(t0)
			if err != nil && s.Err == nil {
				s.Err = err
			}
		}
		if err != nil {
			r.statusf("!! %s failed: %v", e.Name, err)
			errs = append(errs, fmt.Errorf("%s: %w", e.Name, err))
		} else {
			r.statusf("== %s done in %v", e.Name, time.Since(t0).Round(time.Second))
		}
		if werr := r.writeReport(); werr != nil {
			errs = append(errs, werr)
		}
	}
	return errors.Join(errs...)
}

func (r *Runner) statusf(format string, args ...any) {
	fmt.Fprintf(r.cfg.Progress, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (r *Runner) bar(label string, total int) *progress {
	return newProgress(r.cfg.Progress, label, total)
}

// section returns the report section n, created on first use.
func (r *Runner) section(n int) *Section {
	s, ok := r.sections[n]
	if !ok {
		s = &Section{N: n, Title: sectionTitles[n]}
		r.sections[n] = s
	}
	return s
}

var sectionTitles = map[int]string{
	1: "Pods placed over time",
	2: "Scheduling latency",
	3: "Placement quality under heterogeneous demands",
	4: "Preemption convergence",
	5: "Model size over time",
	6: "Scale: scheduler_perf workloads",
	7: "Encoding and backend ablation",
	8: "Responsiveness: creation-to-binding latency by arrival rate",
	9: "Workload-aware scheduling: gangs and topology on PodGroups",
}

// schedulers returns the schedulers to run in experiments 4 and 6: kube-scheduler then weave-scheduler,
// or those Config.Schedulers selects, in its order (alternated runs put either first).
func (r *Runner) schedulers() []string {
	if len(r.cfg.Schedulers) == 0 {
		return []string{kubeName, weaveName}
	}
	var out []string
	for _, w := range r.cfg.Schedulers {
		for _, name := range []string{kubeName, weaveName} {
			if (w == name || w == shortName(name)) && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// pick returns full, quick or tiny by the mode.
func pick[T any](r *Runner, full, quick, tiny T) T {
	switch {
	case r.cfg.Tiny:
		return tiny
	case r.cfg.Quick:
		return quick
	}
	return full
}

// cluster starts a fresh in-process API server.
func (r *Runner) cluster(ctx context.Context) (*harness.Cluster, func(), error) {
	t0 := time.Now()
	c, stop, err := harness.StartCluster(ctx, func(format string, args ...any) {
		fmt.Fprintf(r.cfg.ServerLog, format+"\n", args...)
	})
	if err != nil {
		return nil, nil, err
	}
	r.statusf("   API server up in %v", time.Since(t0).Round(time.Millisecond))
	return c, stop, nil
}

// writeCSV writes name.csv into the output directory and lists it in section s.
func (r *Runner) writeCSV(s *Section, name string, header []string, rows [][]string) error {
	f, err := os.Create(filepath.Join(r.cfg.Out, name+".csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(header)
	w.WriteAll(rows)
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	s.CSVs = append(s.CSVs, name+".csv")
	return nil
}

// writeReport writes report.md from the sections so far.
func (r *Runner) writeReport() error {
	var b strings.Builder
	mode := "full"
	if r.cfg.Tiny {
		mode = "tiny (test)"
	} else if r.cfg.Quick {
		mode = "quick"
	}
	fmt.Fprintf(&b, "# Weave evaluation (paper §6), reproduced\n\n")
	fmt.Fprintf(&b, "- Command: `%s`\n- Mode: %s\n- Date: %s\n- Machine: %s/%s, %d CPUs, %s; load average %s at the start, %s at the end of the latest experiment\n- Kubernetes: kube-apiserver and kube-scheduler %s, in-process; kube-scheduler with its default profile and feature gates\n- Total time: %v\n\n",
		r.cfg.Command, mode, r.start.UTC().Format(time.RFC3339), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(),
		r.loadAtStart, loadAverage(), harness.KubernetesVersion(), time.Since(r.start).Round(time.Second))
	b.WriteString("Every number below comes from this run: the raw data are the CSV files next to this report. " +
		"Both schedulers run in this process, one at a time, against the same in-process kube-apiserver and etcd " +
		"(package e2e/harness), on the same nodes and pods.\n\n")
	var ns []int
	for n := range sectionTitles {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	for _, n := range ns {
		s, ok := r.sections[n]
		fmt.Fprintf(&b, "## Experiment %d: %s\n\n", n, sectionTitles[n])
		if !ok {
			b.WriteString("Not run in this invocation.\n\n")
			continue
		}
		if s.Paper != "" {
			fmt.Fprintf(&b, "**Paper:** %s\n\n", s.Paper)
		}
		if s.Setup != "" {
			fmt.Fprintf(&b, "**Setup:** %s\n\n", s.Setup)
		}
		if s.Err != nil {
			fmt.Fprintf(&b, "**Error:** %s\n\n", oneLine(s.Err.Error()))
		}
		for _, t := range s.Tables {
			b.WriteString(t)
			b.WriteString("\n")
		}
		for _, f := range s.Findings {
			fmt.Fprintf(&b, "- %s\n", f)
		}
		if len(s.Findings) > 0 {
			b.WriteString("\n")
		}
		for _, f := range s.Figures {
			fmt.Fprintf(&b, "![%s](%s.png)\n\n", f, f)
		}
		if len(s.CSVs) > 0 {
			fmt.Fprintf(&b, "Data: %s.\n\n", strings.Join(quoteAll(s.CSVs), ", "))
		}
	}
	return os.WriteFile(filepath.Join(r.cfg.Out, "report.md"), []byte(b.String()), 0o644)
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = "`" + x + "`"
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// table renders a markdown table.
func table(header []string, rows [][]string) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for range header {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}

func f1(x float64) string { return fmt.Sprintf("%.1f", x) }
func f2(x float64) string { return fmt.Sprintf("%.2f", x) }
func itoa(n int) string   { return fmt.Sprint(n) }
