package app

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/tools/cache"
)

// The informers' events are applied to the state in order by one goroutine of their own, and the loop
// waits for it to catch up before each solve (drainEvents). Applied on the informers' goroutines, each
// event waited for the state's lock, which a batch holds while it solves and a preemption plan for
// seconds at 500 nodes; the next batch or plan took the lock again before the next event, so the
// handlers applied about one event per solve. In PreemptionBasic at 500 nodes the deletions of evicted
// victims fell minutes behind: 477 evictions, 32 preemptors bound after 130 s.
type eventQueue struct {
	mu      sync.Mutex
	q       []func()
	wake    chan struct{}
	pending atomic.Int64   // events queued or being applied
	running sync.WaitGroup // run, between start and its return
}

func newEventQueue() *eventQueue { return &eventQueue{wake: make(chan struct{}, 1)} }

func (e *eventQueue) push(f func()) {
	e.pending.Add(1)
	e.mu.Lock()
	e.q = append(e.q, f)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// start applies the events on a goroutine of its own until ctx is done.
func (e *eventQueue) start(ctx context.Context) {
	e.running.Add(1)
	go func() {
		defer e.running.Done()
		e.run(ctx)
	}()
}

// wait returns once the goroutine of start has returned (at once if none was started). The server waits
// for it before closing the state: an event applied to a closed state fails, and at shutdown, with the
// informers' last events still queued, each failure was logged as an error.
func (e *eventQueue) wait() { e.running.Wait() }

// run applies the events until ctx is done; the events still queued then are dropped.
func (e *eventQueue) run(ctx context.Context) {
	for {
		e.mu.Lock()
		q := e.q
		e.q = nil
		e.mu.Unlock()
		for _, f := range q {
			if ctx.Err() != nil {
				return
			}
			f()
			e.pending.Add(-1)
		}
		if len(q) > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-e.wake:
		}
	}
}

// drain waits until every event queued so far is applied, or for at most max (a stream of events does
// not stop the loop).
func (e *eventQueue) drain(ctx context.Context, max time.Duration) {
	deadline := time.Now().Add(max)
	for e.pending.Load() > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
}

// queued wraps informer event handlers so that they run on the event queue.
func (e *eventQueue) queued(h cache.ResourceEventHandlerFuncs) cache.ResourceEventHandlerFuncs {
	out := cache.ResourceEventHandlerFuncs{}
	if h.AddFunc != nil {
		out.AddFunc = func(obj any) { e.push(func() { h.AddFunc(obj) }) }
	}
	if h.UpdateFunc != nil {
		out.UpdateFunc = func(old, obj any) { e.push(func() { h.UpdateFunc(old, obj) }) }
	}
	if h.DeleteFunc != nil {
		out.DeleteFunc = func(obj any) { e.push(func() { h.DeleteFunc(obj) }) }
	}
	return out
}
