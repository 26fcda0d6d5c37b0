//go:build race

package scheduler

// raceDetector: the tests run under -race, where the pure-Go SQLite is about
// twenty times slower. The case-driven differential tests then run a share of
// their cases (raceShare); .ci/run runs every case without -race too.
const raceDetector = true
