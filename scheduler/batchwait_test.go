package scheduler

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Adaptive batching (issue 24): with no BatchIdle a batch starts as soon as one pod is pending; with one, a
// pod waits at most BatchIdle for company, even while pods keep arriving (before, only BatchIdle without a
// new pod ended the wait, which a trickle never gave).
func TestWaitBatch(t *testing.T) {
	ctx := context.Background()
	pod := func(i int) Pod { return Pod{Name: fmt.Sprintf("p-%d", i), CPU: 100, Memory: 100} }

	t.Run("no wait", func(t *testing.T) {
		s := newTest(t, Config{}) // BatchIdle -1; New makes 0 and -1 alike
		if s.cfg.BatchIdle != 0 {
			t.Fatalf("BatchIdle %v, want 0", s.cfg.BatchIdle)
		}
		done := make(chan error, 1)
		go func() { done <- s.WaitBatch(ctx) }()
		select {
		case err := <-done:
			t.Fatalf("WaitBatch returned (%v) with nothing pending", err)
		case <-time.After(50 * time.Millisecond):
		}
		t0 := time.Now()
		if err := s.UpsertPod(ctx, pod(0)); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); d > 500*time.Millisecond { // woken, not polled (noPendingPoll is 1 s)
			t.Errorf("WaitBatch returned %v after the pod arrived", d)
		}
	})

	t.Run("bounded wait under a trickle", func(t *testing.T) {
		idle := 200 * time.Millisecond
		s := newTest(t, Config{BatchIdle: idle, BatchSize: 100})
		stop := make(chan struct{})
		defer close(stop)
		go func() { // a pod every 50 ms: the idle rule alone never ends the wait
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				if err := s.UpsertPod(ctx, pod(i)); err != nil {
					return
				}
			}
		}()
		t0 := time.Now()
		if err := s.WaitBatch(ctx); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); d > idle+500*time.Millisecond {
			t.Errorf("WaitBatch waited %v under a trickle, want about 50 ms + %v", d, idle)
		}
		if n := len(s.Pending()); n < 2 {
			t.Errorf("%d pods pending after the wait, want a few", n)
		}
	})

	t.Run("full batch", func(t *testing.T) {
		s := newTest(t, Config{BatchIdle: time.Hour, BatchSize: 3})
		for i := range 3 {
			if err := s.UpsertPod(ctx, pod(i)); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := s.WaitBatch(ctx); err != nil {
			t.Fatalf("WaitBatch with BatchSize pods pending: %v", err)
		}
	})

	t.Run("burst linger", func(t *testing.T) {
		s := newTest(t, Config{BatchSize: 100, BurstLinger: time.Minute})
		for i := range 10 { // a burst
			if err := s.UpsertPod(ctx, pod(i)); err != nil {
				t.Fatal(err)
			}
		}
		s.mu.Lock()
		arr := s.arrivals
		s.mu.Unlock()
		if !arr.bursting(arr.last()) {
			t.Skip("the machine is too slow to upsert 10 pods in a burst")
		}
		if err := s.WaitBatch(ctx); err != nil {
			t.Fatal(err)
		}
		// No pod came after the burst: the linger ends burstIdle after the latest arrival, not earlier
		// (the timer cannot fire early) and not BurstLinger later.
		if d := time.Since(arr.last()); d < burstIdle || d > 10*time.Second {
			t.Errorf("WaitBatch returned %v after the burst, want %v or a little more", d, burstIdle)
		}
	})
}
