package bench

import (
	"math"
	"testing"
)

func TestPercentileIsNearestRank(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	for _, c := range []struct{ p, want float64 }{{5, 1}, {20, 1}, {21, 2}, {50, 3}, {95, 5}, {100, 5}} {
		if got := percentile(xs, c.p); got != c.want {
			t.Errorf("p%g = %g, want %g", c.p, got, c.want)
		}
	}
	if !math.IsNaN(percentile(nil, 50)) {
		t.Error("the percentile of nothing is a number")
	}
}

func TestRollingMedianUsesTheWindowBehind(t *testing.T) {
	got := rollingMedian([]float64{1, 9, 2, 8, 3}, 3)
	want := []float64{1, 1, 2, 8, 3}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("rolling median %v, want %v", got, want)
		}
	}
}

func TestHistogramQuantileInterpolatesInTheBucket(t *testing.T) {
	// 10 observations in (0, 1], 10 in (1, 2]: cumulative 10, 20.
	h := histogram{bounds: []float64{1, 2}, counts: []float64{10, 20}, count: 20}
	for _, c := range []struct{ q, want float64 }{{0.25, 0.5}, {0.5, 1}, {0.75, 1.5}, {1, 2}} {
		if got := h.quantile(c.q); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("q%g = %g, want %g", c.q, got, c.want)
		}
	}
	before := histogram{bounds: []float64{1, 2}, counts: []float64{10, 10}, count: 10}
	if got := h.sub(before).quantile(0.5); math.Abs(got-1.5) > 1e-9 {
		t.Errorf("the difference of two snapshots: median %g, want 1.5", got)
	}
}

func TestParsePromReadsSeriesWithLabels(t *testing.T) {
	m := parseProm("# HELP x y\nweave_scheduler_batch_size_sum 300\nweave_scheduler_batch_phase_duration_seconds_sum{phase=\"solve\"} 1.5\n")
	if m["weave_scheduler_batch_size_sum"] != 300 || m[`weave_scheduler_batch_phase_duration_seconds_sum{phase="solve"}`] != 1.5 {
		t.Errorf("parsed %v", m)
	}
}
