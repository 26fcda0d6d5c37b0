package scheduler

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestGangFairness: four nodes of 8 GPUs run small jobs (PodGroups of 2 ×
// 4 GPUs); each round the oldest finishes and a new one arrives, and a
// batch is solved. A large gang (workers × 8 GPUs) arrives behind them.
// Without the fairness rule each node that frees is taken by the next
// small job, and a gang of 4 × 8 GPUs, which needs the whole cluster,
// never runs. With GangReserveAfter, small jobs arriving after it wait
// once it has waited that long, the freed nodes stay free, and it runs
// within a few rounds. A gang that does not fit the cluster even empty
// (5 × 8 GPUs) reserves nothing: the small jobs keep running.
func TestGangFairness(t *testing.T) {
	const rounds = 12
	for _, tc := range []struct {
		name    string
		reserve time.Duration
		workers int
		runs    bool // the large gang runs within the rounds
		stream  bool // every small job of the last rounds runs
	}{
		{"without the rule a large gang starves", 0, 4, false, true},
		{"with the rule a large gang runs", time.Millisecond, 4, true, false},
		{"a gang larger than the cluster reserves nothing", time.Millisecond, 5, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has its own scheduler and database
			ctx := context.Background()
			s := newTest(t, Config{GangReserveAfter: tc.reserve})
			for i := 0; i < 4; i++ {
				addNodes(t, s, gpuNode(fmt.Sprintf("n%d", i), "r", 8))
			}
			job := 0
			var running []string // small jobs bound, oldest first
			small := func() string {
				name := fmt.Sprintf("small-%02d", job)
				job++
				addGroups(t, s, PodGroup{Name: name, MinCount: 2})
				addPods(t, s, gangPod(name+"-0", name, 4), gangPod(name+"-1", name, 4))
				return name
			}
			batch := func() map[string]string {
				time.Sleep(2 * tc.reserve)
				bs, _, err := s.SchedulePending(ctx)
				if err != nil {
					t.Fatal(err)
				}
				placed := map[string]string{}
				for _, b := range bs {
					placed[b.Pod] = b.Node
				}
				return placed
			}
			for i := 0; i < 4; i++ {
				running = append(running, small())
			}
			if placed := batch(); len(placed) != 8 {
				t.Fatalf("the first four small jobs: placed %v", placed)
			}
			addGroups(t, s, PodGroup{Name: "large", MinCount: int64(tc.workers)})
			for i := 0; i < tc.workers; i++ {
				addPods(t, s, gangPod(fmt.Sprintf("large-%d", i), "large", 8))
			}
			ranAt, lastStream := -1, 0
			for r := 1; r <= rounds && ranAt < 0; r++ {
				if len(running) > 0 {
					done := running[0]
					running = running[1:]
					for _, p := range []string{done + "-0", done + "-1"} {
						if err := s.DeletePod(ctx, p); err != nil {
							t.Fatal(err)
						}
					}
				}
				name := small()
				placed := batch()
				if placed["large-0"] != "" {
					if len(placed) < tc.workers {
						t.Fatalf("round %d: the large gang placed in part: %v", r, placed)
					}
					ranAt = r
				}
				if placed[name+"-0"] != "" {
					running = append(running, name)
					lastStream = r
				}
			}
			t.Logf("large gang of %d ran in round %d (-1: never); the newest small job last ran in round %d", tc.workers, ranAt, lastStream)
			if tc.runs != (ranAt > 0) {
				t.Errorf("large gang ran in round %d, want it to run: %v", ranAt, tc.runs)
			}
			if tc.stream && lastStream != rounds {
				t.Errorf("the newest small job last ran in round %d of %d: the stream was held back", lastStream, rounds)
			}
		})
	}
}
