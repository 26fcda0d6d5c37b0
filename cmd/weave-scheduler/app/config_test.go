package app

import (
	"os"
	"path/filepath"
	"strings"
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

func TestParseFlagsDisabledPolicies(t *testing.T) {
	f := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(f, []byte("disabledPolicies: [S9, N1]\n"), 0o644)
	cfg, err := ParseFlags([]string{"--config", f})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.DisabledPolicies) != 2 || cfg.DisabledPolicies[0] != "S9" || cfg.DisabledPolicies[1] != "N1" {
		t.Fatalf("file: %v", cfg.DisabledPolicies)
	}
	cfg, err = ParseFlags([]string{"--config", f, "--disable-policies", "S2, s3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.DisabledPolicies) != 2 || cfg.DisabledPolicies[0] != "S2" || cfg.DisabledPolicies[1] != "s3" {
		t.Fatalf("flag over file: %v", cfg.DisabledPolicies)
	}
	if cfg, err = ParseFlags([]string{"--config", f, "--disable-policies", ""}); err != nil || len(cfg.DisabledPolicies) != 0 {
		t.Fatalf("empty flag clears the file's list: %v %v", cfg.DisabledPolicies, err)
	}
	if _, err := ParseFlags([]string{"--disable-policies", "S9,X7"}); err == nil || !strings.Contains(err.Error(), `"X7"`) || !strings.Contains(err.Error(), "S9") {
		t.Fatalf("unknown ID: %v", err)
	}
	if _, err := ParseFlags([]string{"--disable-policies", "P1"}); err == nil || !strings.Contains(err.Error(), "P1 cannot be disabled") {
		t.Fatalf("required ID: %v", err)
	}
}

// The improvement timeout comes from the file as a Go duration, a flag
// overrides it, and 0 leaves the scheduler's default.
func TestParseFlagsSolverImprovementTimeout(t *testing.T) {
	f := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(f, []byte("solverImprovementTimeout: 50ms\n"), 0o644)
	cfg, err := ParseFlags([]string{"--config", f})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SolverImprovementTimeout != 50*time.Millisecond {
		t.Fatalf("file: %v", cfg.SolverImprovementTimeout)
	}
	if cfg, err = ParseFlags([]string{"--config", f, "--solver-improvement-timeout", "-1s"}); err != nil || cfg.SolverImprovementTimeout != -time.Second {
		t.Fatalf("flag over file: %v %v", cfg.SolverImprovementTimeout, err)
	}
	if cfg, err = ParseFlags([]string{"--preemption-improvement-timeout", "200ms"}); err != nil || cfg.PreemptionImprovementTimeout != 200*time.Millisecond {
		t.Fatalf("preemption flag: %v %v", cfg.PreemptionImprovementTimeout, err)
	}
	if cfg, err = ParseFlags([]string{"--preemption-unplaced-improvement-timeout", "1s"}); err != nil || cfg.PreemptionUnplacedImprovementTimeout != time.Second {
		t.Fatalf("preemption unplaced flag: %v %v", cfg.PreemptionUnplacedImprovementTimeout, err)
	}
	os.WriteFile(f, []byte("solverImprovementTimeout: 50ms\nsolverGapLimit: 7\nsolverUnplacedImprovementTimeout: 1s\n"), 0o644)
	if cfg, err = ParseFlags([]string{"--config", f}); err != nil || cfg.SolverGapLimit != 7 || cfg.SolverUnplacedImprovementTimeout != time.Second {
		t.Fatalf("file: gap limit %v, unplaced wait %v, %v", cfg.SolverGapLimit, cfg.SolverUnplacedImprovementTimeout, err)
	}
	if cfg, err = ParseFlags([]string{"--config", f, "--solver-gap-limit", "-1", "--solver-unplaced-improvement-timeout", "300ms"}); err != nil || cfg.SolverGapLimit != -1 || cfg.SolverUnplacedImprovementTimeout != 300*time.Millisecond {
		t.Fatalf("flags over file: gap limit %v, unplaced wait %v, %v", cfg.SolverGapLimit, cfg.SolverUnplacedImprovementTimeout, err)
	}
	if cfg, err = ParseFlags([]string{"--config", f, "--node-sample", "-1"}); err != nil || cfg.NodeSample != -1 || cfg.SolverImprovementTimeout != 50*time.Millisecond {
		t.Fatalf("node sample flag: %v %v", cfg.NodeSample, err)
	}
	if cfg, err = ParseFlags(nil); err != nil || cfg.SolverImprovementTimeout != 0 {
		t.Fatalf("default: %v %v (0 leaves the scheduler's default)", cfg.SolverImprovementTimeout, err)
	}
}

// The PodGroup fairness bound is off unless the file or the flag sets it; the flag wins.
func TestParseFlagsGangReserveAfter(t *testing.T) {
	if cfg, err := ParseFlags(nil); err != nil || cfg.GangReserveAfter != 0 {
		t.Fatalf("default: %v %v, want 0 (off)", cfg.GangReserveAfter, err)
	}
	f := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(f, []byte("gangReserveAfter: 2m\n"), 0o644)
	if cfg, err := ParseFlags([]string{"--config", f}); err != nil || cfg.GangReserveAfter != 2*time.Minute {
		t.Fatalf("file: %v %v", cfg.GangReserveAfter, err)
	}
	if cfg, err := ParseFlags([]string{"--config", f, "--gang-reserve-after", "30s"}); err != nil || cfg.GangReserveAfter != 30*time.Second {
		t.Fatalf("flag over file: %v %v", cfg.GangReserveAfter, err)
	}
}
