package app

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/weavesql/weave/scheduler"
)

// metrics are weave-scheduler's Prometheus metrics, on their own registry.
type metrics struct {
	reg          *prometheus.Registry
	phase        *prometheus.HistogramVec // seconds per batch phase
	batchSize    prometheus.Histogram
	scheduled    prometheus.Counter
	unschedule   prometheus.Counter
	refused      prometheus.Counter
	deferred     prometheus.Counter
	bindErrors   prometheus.Counter
	skipped      *prometheus.CounterVec // placements dropped by the re-check, by reason
	solveErrors  prometheus.Counter
	preempted    prometheus.Counter
	hintRequeues prometheus.Counter
	variables    prometheus.Gauge
	constraints  prometheus.Gauge
	pending      prometheus.Gauge
	leader       prometheus.Gauge
	e2eLatencies prometheus.Histogram
}

func newMetrics() *metrics {
	const ns = "weave_scheduler"
	m := &metrics{
		reg: prometheus.NewRegistry(),
		phase: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "batch_phase_duration_seconds",
			Help:    "Time per batch phase: fetch, ground, solve, extract, verify (Weave), check (re-check before binding), bind, total.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"phase"}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "batch_size",
			Help: "Pods per batch.", Buckets: prometheus.ExponentialBuckets(1, 2, 11)}),
		scheduled:   prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "pods_scheduled_total", Help: "Pods bound."}),
		unschedule:  prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "pods_unschedulable_total", Help: "Placement attempts that left a pod without a node."}),
		refused:     prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "pods_refused_total", Help: "Refusals of pending pods using a field weave-scheduler does not support (one per pod and message)."}),
		deferred:    prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "pods_deferred_total", Help: "Pods a batch left unplaced although they fit a node alone (retried in the next batch)."}),
		bindErrors:  prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "bind_errors_total", Help: "Failed Binding requests."}),
		skipped:     prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "placements_dropped_total", Help: "Placements dropped by the re-check before binding."}, []string{"reason"}),
		solveErrors: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "solve_errors_total", Help: "Batches without a usable solution."}),
		preempted:   prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "pods_preempted_total", Help: "Pods evicted by preemption."}),
		hintRequeues: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "pods_requeued_by_hint_total",
			Help: "Backed-off pods requeued before their backoff ended by a bound pod's change that may let them fit (inter-pod affinity)."}),
		variables:   prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "model_variables", Help: "Variables of the latest model."}),
		constraints: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "model_constraints", Help: "Constraints of the latest model."}),
		pending:     prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "pending_pods", Help: "Pods waiting for this scheduler."}),
		leader:      prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "is_leader", Help: "1 while this replica holds the Lease."}),
		e2eLatencies: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "pod_scheduling_duration_seconds",
			Help: "From the pod's creation to its binding.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 16)}),
	}
	m.reg.MustRegister(m.phase, m.batchSize, m.scheduled, m.unschedule, m.refused, m.deferred, m.bindErrors, m.skipped, m.solveErrors, m.preempted, m.hintRequeues,
		m.variables, m.constraints, m.pending, m.leader, m.e2eLatencies,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// speculations registers the counts of the scheduler's speculations (scheduler.SpeculationStats).
func (m *metrics) speculations(brain *scheduler.Scheduler) {
	count := func(name, help string, f func(scheduler.SpeculationStats) int) {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "weave_scheduler", Name: name, Help: help},
			func() float64 { return float64(f(brain.SpeculationStats())) }))
	}
	count("speculations_solved_total", "Batches of the pod expected next, decided ahead while idle (--speculate).",
		func(s scheduler.SpeculationStats) int { return s.Solved })
	count("speculations_used_total", "Batches placed from a speculation.", func(s scheduler.SpeculationStats) int { return s.Used })
	count("speculations_stale_total", "Speculations dropped: the state changed, or another pod came.", func(s scheduler.SpeculationStats) int { return s.Stale })
	count("speculations_interrupted_total", "Speculations cut short by a pod's arrival.", func(s scheduler.SpeculationStats) int { return s.Interrupted })
	count("pods_placed_ahead_total", "Pods placed on arrival while an extension of a speculation was solved.",
		func(s scheduler.SpeculationStats) int { return s.Ahead })
}
