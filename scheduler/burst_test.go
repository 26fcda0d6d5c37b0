package scheduler

import (
	"testing"
	"time"
)

func TestArrivalsTellABurstFromATrickle(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		name string
		gap  time.Duration // between arrivals
		n    int           // arrivals
		now  time.Duration // after the last arrival
		want bool
	}{
		{"burst", time.Millisecond, 10, 0, true},
		{"burst just seen", 2 * time.Millisecond, burstSpan, time.Millisecond, true},
		{"burst over", time.Millisecond, 10, burstIdle + time.Millisecond, false},
		{"too few arrivals", time.Millisecond, burstSpan - 1, 0, false},
		{"100 pods/s", 10 * time.Millisecond, 20, 0, false},
		{"10 pods/s", 100 * time.Millisecond, 20, 0, false},
		{"just under 125 pods/s", 8 * time.Millisecond, 20, 0, false},
		{"170 pods/s", 6 * time.Millisecond, 20, 0, true},
	} {
		var a arrivals
		at := t0
		for i := 0; i < tc.n; i++ {
			if i > 0 {
				at = at.Add(tc.gap)
			}
			a.add(at)
		}
		if got := a.bursting(at.Add(tc.now)); got != tc.want {
			t.Errorf("%s: bursting = %v, want %v", tc.name, got, tc.want)
		}
	}
	// 100 pods/s handed over in a clump: four pods held back by a 40 ms
	// stall arrive within a millisecond of each other.
	var c arrivals
	at0 := t0
	for i := 0; i < 20; i++ {
		at0 = at0.Add(10 * time.Millisecond)
		c.add(at0)
	}
	at0 = at0.Add(40 * time.Millisecond)
	for i := 0; i < 4; i++ {
		c.add(at0.Add(time.Duration(i) * 200 * time.Microsecond))
	}
	if c.bursting(at0.Add(time.Millisecond)) {
		t.Error("100 pods/s handed over in a clump counts as a burst")
	}
	// A trickle after a burst is a trickle again once burstSpan pods came slowly.
	var a arrivals
	at := t0
	for i := 0; i < 10; i++ {
		at = at.Add(time.Millisecond)
		a.add(at)
	}
	for i := 0; i < burstSpan; i++ {
		at = at.Add(100 * time.Millisecond)
		a.add(at)
	}
	if a.bursting(at) {
		t.Error("a trickle after a burst still counts as a burst")
	}
}

func TestLinger(t *testing.T) {
	t0 := time.Unix(1000, 0)
	arr := func(gap time.Duration, n int) (*arrivals, time.Time) {
		var a arrivals
		at := t0
		for i := 0; i < n; i++ {
			at = at.Add(gap)
			a.add(at)
		}
		return &a, at
	}
	on, off := &Config{BurstLinger: 50 * time.Millisecond}, &Config{}
	burst, last := arr(time.Millisecond, 10)
	for _, tc := range []struct {
		name       string
		cfg        *Config
		a          *arrivals
		now, since time.Time
		want       time.Duration
	}{
		{"burst, just arrived", on, burst, last, last, burstIdle},
		{"burst, 2 ms later", on, burst, last.Add(2 * time.Millisecond), last, burstIdle - 2*time.Millisecond},
		{"burst, linger nearly over", on, burst, last, last.Add(-48 * time.Millisecond), 2 * time.Millisecond},
		{"burst, linger over", on, burst, last, last.Add(-60 * time.Millisecond), 0},
		{"burst, linger off", off, burst, last, last, 0},
	} {
		if got := tc.cfg.linger(tc.a, tc.now, tc.since); got != tc.want {
			t.Errorf("%s: linger %v, want %v", tc.name, got, tc.want)
		}
	}
	trickle, at := arr(10*time.Millisecond, 10)
	if got := on.linger(trickle, at, at); got != 0 {
		t.Errorf("100 pods/s: linger %v, want none", got)
	}
}
