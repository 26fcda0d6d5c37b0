//go:build !race

package weave

// raceDetector: see race_on_test.go.
const raceDetector = false
