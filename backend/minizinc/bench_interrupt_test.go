package minizinc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weavesql/weave/cp"
)

// BenchmarkMaxMinInterrupt measures how long cp overruns a small time
// limit, or a context cancelled after the same delay, on the largest
// max-min instance (5,000 items x 10,000 bins), whose root phases alone
// take seconds: metric solve-ms is the wall time of the Solve call,
// overrun-ms what exceeds the limit, status 0 is UNKNOWN.
//
//	go test ./backend/minizinc -run '^$' -bench MaxMinInterrupt -benchtime 1x
func BenchmarkMaxMinInterrupt(b *testing.B) {
	in := genMaxMin(5000, 10000, 1000, 0.85, 2)
	for _, limit := range []time.Duration{20 * time.Millisecond, 200 * time.Millisecond, time.Second} {
		for _, mode := range []string{"limit", "cancel"} {
			b.Run(fmt.Sprintf("%s=%v", mode, limit), func(b *testing.B) {
				for b.Loop() {
					ctx, p := context.Background(), cp.Params{Seed: 1}
					if mode == "limit" {
						p.TimeLimit = limit
					} else {
						var cancel context.CancelFunc
						ctx, cancel = context.WithCancel(ctx)
						defer cancel()
						time.AfterFunc(limit, cancel)
					}
					t0 := time.Now()
					r, err := in.m.Solve(ctx, p)
					wall := time.Since(t0)
					if err != nil {
						b.Fatal(err)
					}
					if r.HasSolution() {
						if err := in.m.Verify(r); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(wall.Microseconds())/1000, "solve-ms")
					b.ReportMetric(float64((wall-limit).Microseconds())/1000, "overrun-ms")
					b.ReportMetric(float64(r.Status), "status")
				}
			})
		}
	}
}
