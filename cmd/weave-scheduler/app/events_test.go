package app

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestEventQueueStopsAtShutdown: once its context is done the queue applies no further event (they would
// write to a state about to close), and wait returns only after the goroutine applying them has.
func TestEventQueueStopsAtShutdown(t *testing.T) {
	e := newEventQueue()
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	var applied atomic.Int32
	e.push(func() { applied.Add(1); cancel(); <-release }) // shutdown while an event is being applied
	e.push(func() { applied.Add(1) })
	e.push(func() { applied.Add(1) })
	e.start(ctx)
	waited := make(chan struct{})
	go func() { e.wait(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("wait returned while an event was being applied")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("wait did not return after the queue's context was done")
	}
	if n := applied.Load(); n != 1 {
		t.Errorf("%d events applied, want 1: the ones queued behind the shutdown are dropped", n)
	}
	newEventQueue().wait() // never started: returns at once
}

// TestEventQueueKeepsWhenEventsArrived: an event applied behind a slow one is handed over with the time the
// informer made it, not the time the queue reached it (pods arriving at 100 a second queued behind a bound
// pod's update that waits for a batch's solve would otherwise reach the scheduler in a clump that looks
// like a burst).
func TestEventQueueKeepsWhenEventsArrived(t *testing.T) {
	e := newEventQueue()
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); e.wait() }()
	release := make(chan struct{})
	e.push(func() { <-release }) // the slow event
	var pushed [3]time.Time
	got := make(chan time.Time, len(pushed))
	for i := range pushed {
		pushed[i] = time.Now()
		e.push(func() { got <- e.receivedAt() })
		time.Sleep(10 * time.Millisecond)
	}
	e.start(ctx)
	time.Sleep(20 * time.Millisecond)
	released := time.Now()
	close(release)
	for i := range pushed {
		at := <-got
		if at.Before(pushed[i]) || !at.Before(released) {
			t.Errorf("event %d: received at %v, pushed at %v, applied after %v", i, at.Format(time.StampMicro), pushed[i].Format(time.StampMicro), released.Format(time.StampMicro))
		}
	}
}
