//go:build race

package main

// The race detector slows the solver several times over: tests that need
// the solver to improve a solution give it longer, and TestWeaveBeatsGreedy
// runs its first seed only (.ci/run runs every seed without -race).
const raceEnabled = true
