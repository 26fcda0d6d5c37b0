// Package mzntest is the test helper for tests that need MiniZinc.
package mzntest

import (
	"os"
	"os/exec"
	"testing"
)

// EnvRequire is the environment variable that turns a missing minizinc
// from a skipped test into a failure (set by CI, which installs it).
const EnvRequire = "WEAVE_REQUIRE_MINIZINC"

// Require skips the test when minizinc is not installed, or fails it if
// WEAVE_REQUIRE_MINIZINC=1.
func Require(t testing.TB) {
	t.Helper()
	if Available() {
		return
	}
	if os.Getenv(EnvRequire) == "1" {
		t.Fatal("minizinc not installed but " + EnvRequire + "=1")
	}
	t.Skip("minizinc not installed")
}

// Available reports whether minizinc is on PATH and runs. (It mirrors
// minizinc.Available without importing the package, so that the
// package's own tests can use this helper.)
func Available() bool {
	p, err := exec.LookPath("minizinc")
	return err == nil && exec.Command(p, "--version").Run() == nil
}
