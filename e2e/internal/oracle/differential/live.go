package differential

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/weavesql/weave/cmd/weave-scheduler/app"
	"github.com/weavesql/weave/e2e/internal/oracle"
	"github.com/weavesql/weave/e2e/internal/oracle/gen"
)

// Live is the state of a live cluster as its API server holds it once a scheduler has run: what JudgeLive
// judges.
type Live struct {
	Nodes      []*v1.Node
	Namespaces []*v1.Namespace
	// Pods are every pod of the cluster.
	Pods []*v1.Pod
	// Scheduler is the spec.schedulerName of the pods whose outcome is judged: those bound are its
	// bindings, those pending its unschedulable (or refused, or gated) pods. Pods of other schedulers that
	// are bound hold their nodes; pending ones are left out.
	Scheduler string
	// Refused maps pods (namespace/name) the scheduler refused to the message it gave (the PodScheduled=False
	// condition's); a pending pod not in it counts as unschedulable.
	Refused map[string]string
}

// JudgeLive judges a live state as Judge judges app.Decide's decision on a generated case: the scheduler's
// bound pods are its bindings, each judged with all the others made and, where the verdict depends on the
// order of the bindings, by replay (some order in which kube-scheduler, one pod at a time, makes them all);
// its pending pods without scheduling gates are unschedulable (a missed placement if one fits a node of the
// final state) unless Refused names them (then the message must name a spec field). The scheduler's pods
// appear in the Result's case as pending pods of gen.SchedulerName without spec.nodeName, whatever
// scheduler placed them.
func JudgeLive(ctx context.Context, o *oracle.Oracle, l Live) (Result, error) {
	c := &gen.Case{Nodes: l.Nodes, Namespaces: l.Namespaces}
	d := app.Decision{Bindings: map[string]string{}, Unschedulable: map[string]string{}, Refused: map[string]string{}}
	for _, p := range l.Pods {
		if p.Spec.SchedulerName != l.Scheduler {
			if p.Spec.NodeName != "" {
				c.Bound = append(c.Bound, p)
			}
			continue
		}
		k := key(p)
		q := p.DeepCopy()
		q.Spec.SchedulerName = gen.SchedulerName
		q.Spec.NodeName = ""
		c.Pending = append(c.Pending, q)
		switch msg, refused := l.Refused[k]; {
		case p.Spec.NodeName != "":
			d.Bindings[k] = p.Spec.NodeName
		case len(p.Spec.SchedulingGates) > 0:
			d.Gated = append(d.Gated, k)
		case refused:
			d.Refused[k] = msg
		default:
			d.Unschedulable[k] = podScheduledMessage(p)
		}
	}
	return Judge(ctx, o, c, d)
}

// podScheduledMessage is the message of a pod's PodScheduled=False condition, or says there is none.
func podScheduledMessage(p *v1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
			return c.Reason + ": " + c.Message
		}
	}
	return "(pending, no PodScheduled=False condition)"
}
