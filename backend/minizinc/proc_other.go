//go:build !unix

package minizinc

import "os/exec"

// setProcessGroup is a no-op where process groups are not available:
// cancellation kills minizinc only.
func setProcessGroup(cmd *exec.Cmd) {}
