package scheduler

import (
	"context"
	"testing"
)

// BenchmarkNew: starting a scheduler on its own in-memory SQLite (what
// every test's newTest pays, and weave-scheduler at start): both models
// compiled, the schema created, both models connected.
func BenchmarkNew(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s, err := New(Config{})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkNewFirstBatch: starting a scheduler and placing one pod on one
// node, the first batch included: what a scheduler's start costs until it
// has bound something, wherever the work of starting is done.
func BenchmarkNewFirstBatch(b *testing.B) {
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		s, err := New(Config{BatchIdle: -1})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.UpsertNode(ctx, node("n1", "za")); err != nil {
			b.Fatal(err)
		}
		if err := s.UpsertPod(ctx, Pod{Name: "p", CPU: 100}); err != nil {
			b.Fatal(err)
		}
		bs, _, err := s.SchedulePending(ctx)
		if err != nil || len(bs) != 1 || bs[0].Node != "n1" {
			b.Fatalf("bindings %v, %v", bs, err)
		}
		s.Close()
	}
}
