// Package bench runs the Weave paper's §6 experiments end to end: weave-scheduler and the real
// kube-scheduler, one at a time, against the same in-process API server (package harness) and the same
// workload; it writes the raw data as CSV, draws the figures (PNG and SVG, gonum.org/v1/plot) and writes a
// markdown report that puts the measured numbers beside the paper's. Command weave-bench is its front end.
package bench
