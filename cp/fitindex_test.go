package cp

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"
)

// withFitIndexCheck indexes every bin-packing group, however few its
// bins, and fails t whenever the index's value choice scores differently
// from the scan's (ties may differ), for the duration of f.
func withFitIndexCheck(t *testing.T, f func()) (queries int) {
	defer func(old int) { fitIndexMinBins, fitIndexCheck = old, nil }(fitIndexMinBins)
	fitIndexMinBins = 1
	fitIndexCheck = func(got, want float64, ok, ok2 bool) {
		queries++
		if ok != ok2 || (ok && math.Abs(got-want) > 1e-8*(1+math.Abs(want))) {
			t.Fatalf("fit index chose a bin of score %v (found %v), the scan %v (found %v)", got, ok, want, ok2)
		}
	}
	f()
	return queries
}

// The fit index answers a bin of the best score the scan over every bin
// finds, at every decision, on the brute-force packings (shared resources, items
// outside the bins, load holes, backtracking) and on larger max-min and
// placement models with restarts, both value choices and LNS.
func TestFitIndexAgreesWithScan(t *testing.T) {
	n := withFitIndexCheck(t, func() { TestBinPackingAgainstBruteForce(t) })
	if n == 0 {
		t.Fatal("the index served no query")
	}
	models := map[string]func(seed uint64) *Model{
		"maxmin100x50":   func(seed uint64) *Model { m, _, _ := maxMinModel(100, 50, 20, seed); return m },
		"maxmin1000x500": func(seed uint64) *Model { m, _, _ := maxMinModel(1000, 500, 200, seed); return m },
		"assign150x100":  func(seed uint64) *Model { return assignModel(150, 100, seed) },
		"assign100x500":  func(seed uint64) *Model { return assignModel(100, 500, seed) },
	}
	for name, gen := range models {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", name, seed), func(t *testing.T) {
				m := gen(seed)
				n := withFitIndexCheck(t, func() {
					r, err := m.Solve(context.Background(), Params{TimeLimit: 200 * time.Millisecond, Seed: int64(seed)})
					if err != nil {
						t.Fatal(err)
					}
					if r.HasSolution() {
						if err := m.Verify(r); err != nil {
							t.Fatal(err)
						}
					}
				})
				t.Logf("%d queries", n)
			})
		}
	}
	m, err := loadModel("testdata/placement500.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	withFitIndexCheck(t, func() {
		if _, err := m.Solve(context.Background(), Params{TimeLimit: 300 * time.Millisecond, Seed: 1}); err != nil {
			t.Fatal(err)
		}
	})
}
