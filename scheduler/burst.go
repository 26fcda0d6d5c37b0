package scheduler

import "time"

// burstSpan is how many arrivals the burst test looks at, and burstGap the
// mean gap between them below which pods are arriving in a burst (more
// than 125 pods/s). A trickle, or a steady 100 pods/s, stays below that
// rate, and its pods are solved as they come. (At 200 pods/s, the first
// threshold, the linger never started live: weave-bench's client creates
// a burst through the API server at 130–210 pods/s on this 2-core machine.)
// Eight arrivals, not four: the informer hands over pods that arrive at
// 100 a second in clumps after a stall of the API server or the event
// queue (live, four or five pods within 15 ms after 40 ms without one),
// and four such pods looked like a burst: the linger then held them 30 ms
// more (weave-bench latency, nginx+redis at 100 pods/s, 2026-11-28). A
// stall shorter than seven gaps of the steady rate leaves the oldest of
// eight arrivals on time, and the eight no closer than the rate.
const (
	burstSpan = 8
	burstGap  = 8 * time.Millisecond
)

// DefaultBurstLinger is Config.BurstLinger's default.
const DefaultBurstLinger = 200 * time.Millisecond

// burstIdle ends a linger early: no new pod for this long means the burst
// is over, and waiting longer only delays the pods already pending. Live,
// the informer hands weave-scheduler a burst's pods in clumps with gaps
// of 15 ms and more while the API server and the client share the cores:
// at 15 ms the linger ended at the first gap, and SchedulingBasic's
// batches stayed small (weave-bench scale, 500 nodes, 2026-11-27, two runs
// each, alternated: weave/kube throughput 0.76 and 0.85 at 15 ms, 1.05 and
// 1.21 at 30 ms).
const burstIdle = 30 * time.Millisecond

// arrivals keeps when the latest pods became pending, to tell a burst from
// a trickle (Config.BurstLinger).
type arrivals struct {
	at   [burstSpan]time.Time // a ring: at[next] is the oldest
	next int
}

// add records a pod that became pending at t.
func (a *arrivals) add(t time.Time) {
	a.at[a.next] = t
	a.next = (a.next + 1) % burstSpan
}

// last is the latest arrival (zero when none).
func (a *arrivals) last() time.Time {
	return a.at[(a.next+burstSpan-1)%burstSpan]
}

// bursting reports whether the last burstSpan pods arrived less than
// burstGap apart on average, the latest of them within burstIdle of now.
func (a *arrivals) bursting(now time.Time) bool {
	oldest, latest := a.at[a.next], a.last()
	if oldest.IsZero() || now.Sub(latest) > burstIdle {
		return false
	}
	return latest.Sub(oldest) < (burstSpan-1)*burstGap
}

// linger is how much longer a batch waits for the rest of a burst, at now,
// with arrivals arr and the wait begun at since: 0 (start the batch) unless
// pods are arriving in a burst, and then until burstIdle passes with no new
// pod or BurstLinger since the wait began.
func (c *Config) linger(arr *arrivals, now, since time.Time) time.Duration {
	if c.BurstLinger <= 0 || !arr.bursting(now) {
		return 0
	}
	return max(0, min(burstIdle-now.Sub(arr.last()), c.BurstLinger-now.Sub(since)))
}
