//go:build !race

package cp

// raceDetector: see race_on_test.go.
const raceDetector = false
