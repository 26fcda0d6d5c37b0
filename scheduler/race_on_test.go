//go:build race

package scheduler

// raceDetector: the tests run under -race, where the pure-Go SQLite is about
// twenty times slower (a scheduler takes 1.4 s to start, not 0.05 s). The
// tests check the policies' meaning, which the race detector does not; it
// needs the concurrency, which every test still exercises. So under it the
// case-driven differential tests run a share of their cases or seeds
// (raceShare and the tests that read raceDetector), the tests over several
// databases skip the SQLite file (raceDBs: the in-memory SQLite runs the
// same statements), and the longest random histories are shorter. .ci/run
// runs the package whole without -race too.
const raceDetector = true
