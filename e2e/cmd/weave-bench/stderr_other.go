//go:build !linux

package main

import "os"

// redirectStderr leaves stderr alone outside Linux.
func redirectStderr(*os.File) (*os.File, error) { return os.Stderr, nil }
