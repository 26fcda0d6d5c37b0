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
