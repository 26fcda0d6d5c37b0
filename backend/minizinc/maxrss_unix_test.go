//go:build unix

package minizinc

import (
	"runtime"
	"syscall"
	"time"
)

// cpuTime returns the user plus system CPU time of this process so far
// (all threads, the GC's included): on a loaded machine it measures the
// work of a solve where the wall clock measures the queue.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// maxRSSMiB returns the peak resident set size of this process and of
// the largest waited-for child process, in MiB (Linux reports KiB, macOS
// bytes). A child's figure includes the parent's image it was forked
// from.
func maxRSSMiB() (self, children float64) {
	unit := 1024.0
	if runtime.GOOS == "darwin" {
		unit = 1
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		self = float64(ru.Maxrss) * unit / (1 << 20)
	}
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) == nil {
		children = float64(ru.Maxrss) * unit / (1 << 20)
	}
	return self, children
}
