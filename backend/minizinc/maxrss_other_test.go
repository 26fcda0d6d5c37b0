//go:build !unix

package minizinc

func maxRSSMiB() (self, children float64) { return 0, 0 }
