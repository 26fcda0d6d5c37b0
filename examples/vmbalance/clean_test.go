package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/weavesql/weave/internal/doccheck"
)

// TestDefaultFlagsLeaveTheCheckoutClean runs the command as "go run
// ./examples/vmbalance" does, with its default flags except a shorter
// solve: the figure goes to a new temporary directory, and no file of the
// repository is written.
func TestDefaultFlagsLeaveTheCheckoutClean(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	// File times may lag the clock by a tick: look a little before the start.
	start := time.Now().Add(-100 * time.Millisecond)
	if err := runArgs([]string{"-timeout", "300ms"}); err != nil {
		t.Fatal(err)
	}
	changed, err := doccheck.Changed(filepath.Join("..", ".."), start)
	if err != nil {
		t.Fatal(err)
	}
	if len(changed) > 0 {
		t.Errorf("running the example wrote into the repository: %v", changed)
	}
	for _, name := range []string{"vmbalance.png", "vmbalance.svg"} {
		if m, _ := filepath.Glob(filepath.Join(tmp, "vmbalance-*", name)); len(m) != 1 {
			t.Errorf("%s is not in a new temporary directory: %v", name, m)
		}
	}
}
