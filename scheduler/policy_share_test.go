package scheduler

// raceShare is every case without -race and every fourth under it (the
// first included): the cases check the policies' meaning, which the race
// detector does not; it needs the concurrency, which a few cases exercise.
func raceShare[T any](cases []T) []T {
	if !raceDetector {
		return cases
	}
	var out []T
	for i := 0; i < len(cases); i += 4 {
		out = append(out, cases[i])
	}
	return out
}
