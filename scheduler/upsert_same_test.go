package scheduler

import (
	"context"
	"testing"
)

// TestUpsertSamePodWritesNothing: a pod reported again as the state holds
// it — the binding of a pod the scheduler assumed bound — writes no row;
// a pod that changed is written again. Counted by triggers on the pod
// table, in the state database itself.
func TestUpsertSamePodWritesNothing(t *testing.T) {
	t.Parallel()
	db := openSQLiteFile(t)
	s := newTest(t, Config{DB: db})
	for _, q := range []string{
		"create table pod_writes (n integer)",
		"insert into pod_writes values (0)",
		"create trigger pod_inserted after insert on pod begin update pod_writes set n = n + 1; end",
		"create trigger pod_deleted after delete on pod begin update pod_writes set n = n + 1; end",
		"create trigger pod_updated after update on pod begin update pod_writes set n = n + 1; end",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	writes := func() int {
		var n int
		if err := db.QueryRow("select n from pod_writes").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	ctx := context.Background()
	addNodes(t, s, Node{Name: "n1", CPU: 1000, Memory: 1000})
	pod := Pod{Name: "p", CPU: 100, Memory: 100, Labels: map[string]string{"app": "web"},
		Tolerations: []Toleration{{Key: "k", Operator: "Exists"}}}
	addPods(t, s, pod)
	placed, _ := schedule(t, s)
	if placed["p"] != "n1" {
		t.Fatalf("placed %v", placed)
	}
	before := writes()
	bound := pod
	bound.NodeName = "n1" // what the informer reports once the binding is done
	if err := s.UpsertPod(ctx, bound); err != nil {
		t.Fatal(err)
	}
	if got := writes(); got != before {
		t.Errorf("the pod as the state holds it: %d writes to the pod table, want none", got-before)
	}
	bound.Phase = PhaseRunning
	if err := s.UpsertPod(ctx, bound); err != nil {
		t.Fatal(err)
	}
	if got := writes(); got == before {
		t.Error("a pod whose phase changed was not written")
	}
	if s.State().Pods["p"].Phase != PhaseRunning {
		t.Errorf("state: phase %q, want Running", s.State().Pods["p"].Phase)
	}
	var phase string
	if err := db.QueryRow("select phase from pod where name = 'p'").Scan(&phase); err != nil || phase != PhaseRunning {
		t.Errorf("database: phase %q (%v), want Running", phase, err)
	}
}
