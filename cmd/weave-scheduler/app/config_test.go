package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParseFlagsFileThenFlags(t *testing.T) {
	f := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(f, []byte("schedulerName: custom\nbatchSize: 50\nbatchWait: 300ms\nsolverTimeout: 1s\nleaderElect: false\n"), 0o644)
	cfg, err := ParseFlags([]string{"--config", f, "--batch-size", "20"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SchedulerName != "custom" || cfg.BatchSize != 20 || cfg.BatchWait != 300*time.Millisecond || cfg.SolverTimeout != time.Second || cfg.LeaderElect {
		t.Fatalf("%+v", cfg)
	}
	os.WriteFile(f, []byte("batchSise: 5\n"), 0o644)
	if _, err := ParseFlags([]string{"--config", f}); err == nil {
		t.Fatal("unknown field accepted")
	}
}
