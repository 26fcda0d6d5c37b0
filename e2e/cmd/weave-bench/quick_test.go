package main

import (
	"encoding/csv"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTinyRunIsWellFormed runs every experiment at the smallest size (`weave-bench all --tiny`) and checks
// the form of the output, not the numbers: every CSV with its header and row count, every figure as a PNG
// that decodes and an SVG, and a report that covers every experiment without an error.
func TestTinyRunIsWellFormed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts API servers and both schedulers (about a minute)")
	}
	dir := t.TempDir()
	redirect = false
	if err := run([]string{"all", "--tiny", "--out", dir}); err != nil {
		t.Fatalf("weave-bench all --tiny: %v", err)
	}
	// The tiny sizes: 3 apps × 8 pods on 10 nodes, 3 runs (kube, b = 10, b = 100); 1 quality seed; 6 scale
	// workloads; 1 ablation batch; 1 gang seed on 4 nodes.
	csvs := []struct {
		name    string
		header  []string
		minRows int
		maxRows int // 0: no upper bound
	}{
		{"placed_over_time", []string{"scheduler", "batch", "t_s", "placed"}, 72, 72},
		{"batches", []string{"scheduler", "batch", "index", "t_s", "size", "placed", "fetch_ms", "ground_ms", "solve_ms", "extract_ms", "verify_ms", "decide_ms", "total_ms", "variables", "constraints"}, 2, 0},
		{"latency_percentiles", []string{"scheduler", "metric", "n", "p5_ms", "p25_ms", "p50_ms", "p75_ms", "p95_ms", "p99_ms"}, 2 + 2*9, 2 + 2*9},
		{"model_size", []string{"scheduler", "batch", "index", "pods_placed_before", "size", "variables", "constraints"}, 2, 0},
		{"quality", []string{"seed", "scheduler", "pods", "placed", "fraction", "cpu_demand_m", "mem_demand_mib", "cpu_capacity_m", "mem_capacity_mib", "created_per_s", "weave_batches", "weave_mean_batch"}, 2, 2},
		{"preemption", []string{"scheduler", "t_s", "group", "priority", "running"}, 6, 0},
		{"scale", []string{"workload", "nodes", "scheduler", "pods", "bound", "pods_per_s", "p5_ms", "p25_ms", "p50_ms", "p75_ms", "p95_ms", "p99_ms", "weave_batches", "weave_decide_p50_ms", "weave_decide_max_ms", "weave_variables_p50", "error"}, 12, 12},
		{"ablation", []string{"batch", "pods_placed_before", "batch_size", "variant", "status", "placed", "objective", "variables", "constraints", "fetch_ms", "ground_ms", "solve_ms", "extract_ms", "total_ms", "error"}, 8, 8},
		// latency: 1 run × 2 schedulers × 2 workloads × 3 rates, 2 apps × (3 + 3) pods each.
		{"latency_runs", []string{"run", "scheduler", "workload", "rate", "pods", "bound", "p50_ms", "p90_ms", "p99_ms", "max_ms", "weave_batches", "weave_speculated_batches", "weave_placed_ahead", "weave_batch_size_mean", "weave_decide_mean_ms", "weave_batch_total_mean_ms", "error"}, 12, 12},
		{"latency_pods", []string{"run", "scheduler", "workload", "rate", "pod", "latency_ms"}, 144, 144},
		// gang: 1 seed × 2 schedulers; the stranding case, 2 schedulers.
		{"gang", []string{"seed", "scheduler", "jobs", "complete", "partial", "topology_violations", "gpus_complete", "capacity", "demand", "idle", "share_of_capacity", "last_decision_s"}, 2, 2},
		{"gang_stranding", []string{"run", "scheduler", "complete", "jobs", "partial", "topology_violations", "gpus_complete", "capacity"}, 2, 2},
		// the priority case (workload preemption): 1 run × 2 schedulers.
		{"gang_priority", []string{"run", "scheduler", "high_running", "high_bound", "high_workers", "evicted", "evicted_low_whole", "high_running_after_s"}, 2, 2},
	}
	for _, c := range csvs {
		f, err := os.Open(filepath.Join(dir, c.name+".csv"))
		if err != nil {
			t.Error(err)
			continue
		}
		recs, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Errorf("%s.csv: %v", c.name, err)
			continue
		}
		if len(recs) == 0 || strings.Join(recs[0], ",") != strings.Join(c.header, ",") {
			t.Errorf("%s.csv header %v, want %v", c.name, recs[0], c.header)
			continue
		}
		if n := len(recs) - 1; n < c.minRows || (c.maxRows > 0 && n > c.maxRows) {
			t.Errorf("%s.csv has %d rows, want %d..%d", c.name, n, c.minRows, c.maxRows)
		}
	}
	figures := []string{"placed_over_time", "latency_per_pod", "latency_breakdown", "model_size", "quality", "preemption", "scale_throughput", "ablation_time", "ablation_size", "latency_cdf_basic", "latency_cdf_nginx_redis", "gang_idle", "gang_priority"}
	for _, name := range figures {
		f, err := os.Open(filepath.Join(dir, name+".png"))
		if err != nil {
			t.Error(err)
			continue
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s.png: %v", name, err)
		} else if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
			t.Errorf("%s.png is %v", name, b)
		}
		svg, err := os.ReadFile(filepath.Join(dir, name+".svg"))
		if err != nil || !strings.Contains(string(svg), "<svg") {
			t.Errorf("%s.svg: not an SVG (%v)", name, err)
		}
	}
	report, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(report)
	for _, want := range []string{"## Experiment 1: ", "## Experiment 2: ", "## Experiment 3: ", "## Experiment 4: ", "## Experiment 5: ", "## Experiment 6: ", "## Experiment 7: ", "## Experiment 8: ", "## Experiment 9: "} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, bad := range []string{"Not run in this invocation", "**Error:**"} {
		if strings.Contains(md, bad) {
			t.Errorf("report.md contains %q", bad)
		}
	}
	for _, name := range figures {
		if !strings.Contains(md, "("+name+".png)") {
			t.Errorf("report.md does not show %s.png", name)
		}
	}
}
