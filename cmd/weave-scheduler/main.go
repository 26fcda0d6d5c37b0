// Command weave-scheduler is a Kubernetes scheduler whose whole policy is SQL: it places the pods whose
// spec.schedulerName matches its own (default weave-scheduler) in batches, with Weave's solver.
//
//	weave-scheduler --kubeconfig ~/.kube/config --scheduler-name weave-scheduler --batch-size 100
//
// See deploy/ for the manifests and app.Config for the configuration file.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/weavesql/weave/cmd/weave-scheduler/app"
)

func main() {
	cfg, err := app.ParseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "weave-scheduler:", err)
		os.Exit(2)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		fmt.Fprintln(os.Stderr, "weave-scheduler: --log-level:", err)
		os.Exit(2)
	}
	var h slog.Handler
	if cfg.LogFormat == "text" {
		h = slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})
	} else {
		h = slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level})
	}
	log := slog.New(h)
	slog.SetDefault(log)
	klog.SetSlogLogger(log) // client-go's own logs (leader election, reflectors) go through slog too

	rc, err := app.RESTConfig(cfg)
	if err != nil {
		log.Error("API client configuration", "error", err)
		os.Exit(1)
	}
	s, err := app.New(cfg, rc, log)
	if err != nil {
		log.Error("starting", "error", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := s.Run(ctx); err != nil {
		log.Error("stopped", "error", err)
		os.Exit(1)
	}
}
