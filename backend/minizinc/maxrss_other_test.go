//go:build !unix

package minizinc

import "time"

func maxRSSMiB() (self, children float64) { return 0, 0 }

func cpuTime() time.Duration { return 0 }
