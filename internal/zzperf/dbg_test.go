package zzperf

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weavesql/weave"
)

func TestDbgPlacement(t *testing.T) {
	for _, n := range []int{500, 5000} {
		m := placementModel(t, n, 100)
		for i := 0; i < 2; i++ {
			t0 := time.Now()
			res, err := m.Solve(context.Background(), weave.SolveOptions{Timeout: time.Second, Seed: 1, NoExplain: true})
			fmt.Println(n, time.Since(t0), err, res.Status, res.Stats.Fetch, res.Stats.Ground, res.Stats.Solve, res.Stats.Variables, res.Stats.Constraints, res.Stats.Branches)
		}
	}
}
