package sim

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weavesql/weave/scheduler"
)

func TestZZRows(t *testing.T) {
	ctx := context.Background()
	s, _ := scheduler.New(scheduler.Config{BatchSize: 100, BatchIdle: -1, Timeout: 500 * time.Millisecond})
	defer s.Close()
	c := New(s)
	c.AddNodes(ctx, "n", 500, 3, scheduler.Node{CPU: 64000, Memory: 256000, Storage: 100000, Pods: 110})
	pods := NginxRedis(30, 40, 40)
	for i := 0; i < 8; i++ {
		for _, p := range pods[:100] {
			c.Submit(ctx, p, 0)
		}
		pods = pods[100:]
		c.S.ScheduleBatch(ctx)
	}
	st := c.S.LastStats()
	fmt.Println(st.Rows)
	for n, v := range st.Views {
		fmt.Println(n, v.Variables, v.Constraints, v.Ground)
	}
}
