// Command demo runs weave-scheduler against a live API server in this process: it starts etcd and
// kube-apiserver (package harness), creates nodes and pods, runs weave-scheduler, and prints where each pod
// was bound — then fills the cluster with low-priority pods and shows a high-priority pod placed by
// preemption through the Eviction API.
//
//	cd e2e && go run ./cmd/demo                   # 4 nodes, 12 pods
//	cd e2e && go run ./cmd/demo -nodes 50 -pods 400 -log
//
// The first build takes about 10 minutes on 2 cores (kube-apiserver is compiled in); later runs start in
// seconds.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/weavesql/weave/cmd/weave-scheduler/app"
	"github.com/weavesql/weave/e2e/harness"
)

func main() {
	nodes := flag.Int("nodes", 4, "nodes (4 CPU, 16Gi each, in zones a and b)")
	pods := flag.Int("pods", 12, "pods of 500m CPU / 256Mi to schedule")
	showLog := flag.Bool("log", false, "show weave-scheduler's log (kube-apiserver's stays quiet)")
	flag.Parse()
	if err := run(*nodes, *pods, *showLog); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(nodes, pods int, showLog bool) error {
	// kube-apiserver and etcd log through klog and zap at length: silence klog; etcd logs errors only.
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("v", "0")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)

	tb := newTB()
	defer tb.cleanup()
	ctx := context.Background()
	t0 := time.Now()
	c := harness.Start(tb)
	fmt.Printf("kube-apiserver and etcd up in %v\n", time.Since(t0).Round(time.Millisecond))

	for i := 0; i < nodes; i++ {
		zone := []string{"a", "b"}[i%2]
		if err := c.CreateNode(ctx, fmt.Sprintf("node-%d", i), harness.NodeSpec{CPU: "4", Memory: "16Gi",
			Labels: map[string]string{"topology.kubernetes.io/zone": zone}}); err != nil {
			return err
		}
	}
	if err := c.CreateNamespace(ctx, "demo"); err != nil {
		return err
	}

	cfg := app.DefaultConfig()
	cfg.LeaderElect, cfg.Serving = false, nil
	cfg.BatchWait = 100 * time.Millisecond
	cfg.InitialBackoff, cfg.MaxBackoff = 200*time.Millisecond, 2*time.Second
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if showLog {
		logger = slog.New(slog.NewTextHandler(os.Stdout, nil))
	}
	s, err := app.New(cfg, c.Config, logger)
	if err != nil {
		return err
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(sctx) }()
	defer func() { stop(); <-done }()
	for !s.Ready() {
		time.Sleep(20 * time.Millisecond)
	}

	// 1. A batch of ordinary pods.
	spec := harness.PodSpec{SchedulerName: "weave-scheduler", CPU: "500m", Memory: "256Mi", Priority: 1,
		Labels: map[string]string{"app": "web"}, GracePeriod: ptr.To[int64](0)}
	t1 := time.Now()
	if _, err := c.CreatePods(ctx, "demo", "web", pods, spec); err != nil {
		return err
	}
	bound, err := c.WaitBound(ctx, "demo", pods, 2*time.Minute)
	if err != nil {
		return err
	}
	fmt.Printf("\nweave-scheduler bound %d pods in %v:\n", len(bound), time.Since(t1).Round(time.Millisecond))
	printBindings(bound)

	// 2. Fill the free CPU with low-priority pods, then ask for a high-priority pod that needs room.
	free := nodes*4000 - pods*500
	filler := free / 500
	if filler > 0 {
		if _, err := c.CreatePods(ctx, "demo", "filler", filler, spec); err != nil {
			return err
		}
		if _, err := c.WaitBound(ctx, "demo", pods+filler, 2*time.Minute); err != nil {
			return err
		}
	}
	fmt.Printf("\ncluster full (%d pods of priority 1); creating pod \"urgent\" (2 CPU, priority 1000)\n", pods+filler)
	all, _ := c.WaitBound(ctx, "demo", 0, time.Second)
	if err := c.CreatePod(ctx, "demo", "urgent", harness.PodSpec{SchedulerName: "weave-scheduler", CPU: "2", Memory: "256Mi", Priority: 1000}); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		now, err := c.WaitBound(ctx, "demo", 0, time.Second)
		if err != nil {
			return err
		}
		if node := now["urgent"]; node != "" {
			var gone []string
			for name, n := range all {
				if _, ok := now[name]; !ok {
					gone = append(gone, fmt.Sprintf("%s (on %s)", name, n))
				}
			}
			sort.Strings(gone)
			fmt.Printf("urgent bound to %s after evicting %d pod(s) through the Eviction API: %s\n", node, len(gone), strings.Join(gone, ", "))
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("urgent not bound after a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
	evs, err := c.Client.EventsV1().Events("demo").List(ctx, metav1.ListOptions{})
	if err == nil {
		fmt.Println("\nevents about the preemption:")
		var lines []string
		for _, e := range evs.Items {
			if e.Reason == "Preempted" || e.Reason == "Preempting" || e.Regarding.Name == "urgent" {
				lines = append(lines, fmt.Sprintf("  %-10s %-12s %s", e.Regarding.Name, e.Reason, e.Note))
			}
		}
		sort.Strings(lines)
		fmt.Println(strings.Join(lines, "\n"))
	}
	return nil
}

func printBindings(bound map[string]string) {
	per := map[string][]string{}
	for p, n := range bound {
		per[n] = append(per[n], p)
	}
	var ns []string
	for n := range per {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	for _, n := range ns {
		sort.Strings(per[n])
		fmt.Printf("  %-8s %s\n", n, strings.Join(per[n], " "))
	}
}

// tb lets package harness (written for tests: etcd's and kube-apiserver's test servers take a testing.TB)
// run in a command: failures end the program, cleanups run at exit.
type tb struct {
	testing.TB // not set: the methods below are the ones the test servers call
	dir        string
	cleanups   []func()
}

func newTB() *tb {
	dir, err := os.MkdirTemp("", "weave-demo")
	if err != nil {
		panic(err)
	}
	return &tb{dir: dir}
}

func (t *tb) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
	os.RemoveAll(t.dir)
}

func (t *tb) Cleanup(f func())                { t.cleanups = append(t.cleanups, f) }
func (t *tb) Helper()                         {}
func (t *tb) Name() string                    { return "demo" }
func (t *tb) Log(args ...any)                 {}
func (t *tb) Logf(format string, args ...any) {}
func (t *tb) Error(args ...any)               { fmt.Fprintln(os.Stderr, args...) }
func (t *tb) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}
func (t *tb) Fatal(args ...any)                 { t.Error(args...); t.FailNow() }
func (t *tb) Fatalf(format string, args ...any) { t.Errorf(format, args...); t.FailNow() }
func (t *tb) Fail()                             {}
func (t *tb) FailNow()                          { t.cleanup(); os.Exit(1) }
func (t *tb) Failed() bool                      { return false }
func (t *tb) Skipped() bool                     { return false }
func (t *tb) Context() context.Context          { return context.Background() }
func (t *tb) Setenv(key, value string)          { os.Setenv(key, value) }

var tmpSeq int

func (t *tb) TempDir() string {
	tmpSeq++
	d := fmt.Sprintf("%s/%d", t.dir, tmpSeq)
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}
