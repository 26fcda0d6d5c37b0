package harness

import (
	"context"
	"testing"
	"time"
)

func TestKubeSchedulerBindsPods(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	c := Start(t)
	t.Logf("API server ready in %v", time.Since(start))
	if _, err := c.CreateNodes(ctx, "node", 10, NodeSpec{CPU: "4", Memory: "16Gi"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateNamespace(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	c.RunKubeScheduler(ctx, t)
	if _, err := c.CreatePods(ctx, "w", "p", 50, PodSpec{CPU: "100m", Memory: "128Mi"}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if _, err := c.WaitBound(ctx, "w", 50, time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Logf("50 pods bound in %v", time.Since(t0))
}
