//go:build race

package cp

// raceDetector: the tests run under -race, which slows the search several
// times over. The random-model tests against brute force then check as many
// models as -short does; .ci/run checks every model without -race too.
const raceDetector = true
