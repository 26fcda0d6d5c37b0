package bench

import (
	"bufio"
	"math"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Percentiles are the percentiles the report shows (the paper's boxplots: 5, 25, 50, 75, 95; and 99).
var Percentiles = []float64{5, 25, 50, 75, 95, 99}

// percentile returns the p-th percentile (0 < p <= 100) of xs by the nearest-rank method; NaN when empty.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	k := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(k, 0), len(s)-1)]
}

func median(xs []float64) float64 { return percentile(xs, 50) }

// ms converts a duration to float milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// rollingMedian returns, for each i, the median of xs[max(0,i-w+1) .. i].
func rollingMedian(xs []float64, w int) []float64 {
	out := make([]float64, len(xs))
	for i := range xs {
		out[i] = median(xs[max(0, i-w+1) : i+1])
	}
	return out
}

// promText is a parsed Prometheus text exposition: series (name with labels, as printed) → value.
type promText map[string]float64

func parseProm(text string) promText {
	out := promText{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out
}

func scrapeHandler(serve func(*httptest.ResponseRecorder)) promText {
	rec := httptest.NewRecorder()
	serve(rec)
	return parseProm(rec.Body.String())
}

// histogram is a cumulative Prometheus histogram: upper bounds and cumulative counts.
type histogram struct {
	bounds []float64
	counts []float64
	count  float64
	sum    float64
}

// sub returns h - o bucket by bucket (the observations between two snapshots).
func (h histogram) sub(o histogram) histogram {
	if len(o.counts) != len(h.counts) {
		return h
	}
	out := histogram{bounds: h.bounds, counts: make([]float64, len(h.counts)), count: h.count - o.count, sum: h.sum - o.sum}
	for i := range h.counts {
		out.counts[i] = h.counts[i] - o.counts[i]
	}
	return out
}

// quantile estimates the q-quantile (0..1) by linear interpolation inside the bucket, as PromQL's
// histogram_quantile does; NaN when empty.
func (h histogram) quantile(q float64) float64 {
	if h.count <= 0 || len(h.bounds) == 0 {
		return math.NaN()
	}
	rank := q * h.count
	prevBound, prevCount := 0.0, 0.0
	for i, b := range h.bounds {
		if h.counts[i] >= rank {
			if h.counts[i] == prevCount {
				return b
			}
			return prevBound + (b-prevBound)*(rank-prevCount)/(h.counts[i]-prevCount)
		}
		prevBound, prevCount = b, h.counts[i]
	}
	return h.bounds[len(h.bounds)-1] // in the +Inf bucket: the largest finite bound
}

// kubeHistogram reads a histogram of the in-process kube-scheduler from the component-base legacy
// registry, summed over the series whose labels include every pair of match.
func kubeHistogram(name string, match map[string]string) (histogram, error) {
	mfs, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		return histogram{}, err
	}
	var h histogram
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if !labelsMatch(m.GetLabel(), match) || m.GetHistogram() == nil {
				continue
			}
			hh := m.GetHistogram()
			if h.bounds == nil {
				for _, b := range hh.GetBucket() {
					h.bounds = append(h.bounds, b.GetUpperBound())
					h.counts = append(h.counts, 0)
				}
			}
			for i, b := range hh.GetBucket() {
				if i < len(h.counts) {
					h.counts[i] += float64(b.GetCumulativeCount())
				}
			}
			h.count += float64(hh.GetSampleCount())
			h.sum += hh.GetSampleSum()
		}
	}
	return h, nil
}

func labelsMatch(ls []*dto.LabelPair, match map[string]string) bool {
	for k, v := range match {
		found := false
		for _, l := range ls {
			if l.GetName() == k && l.GetValue() == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}
