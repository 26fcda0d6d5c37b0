//go:build !race

package scheduler

// raceDetector: see race_on_test.go.
const raceDetector = false
