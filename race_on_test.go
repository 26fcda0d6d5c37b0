//go:build race

package weave

// raceDetector: the tests run under -race, where the pure-Go SQLite is about
// twenty times slower. The differential test against SQLite's enumeration
// then runs one seed per policy (and the naive encoding); .ci/run runs
// every seed without -race too.
const raceDetector = true
