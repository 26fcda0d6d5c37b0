package differential

import (
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/weavesql/weave/cmd/weave-scheduler/app"
	"github.com/weavesql/weave/scheduler"
)

// Attribute finds why weave left a pod without a node that kube-scheduler's plugins would give it (a missed
// placement): it decides the final state again with that pod alone pending and pinned (nodeSelector on the
// hostname label) to a node the oracle lets it onto, first as configured (if weave places it now, the batch
// it was decided with is to blame), then with each hard policy disabled in turn.
// The answer names the policies whose disabling alone lets weave place the pod, or says none does. Each try
// is a whole app.Decide: an explanation costs a second or more.
func Attribute(ctx context.Context, cfg app.Config, r Result, f Finding) (string, error) {
	if f.Kind != MissedPlacement {
		return "", fmt.Errorf("attribute: a %s is not a missed placement", f.Kind)
	}
	var pod *v1.Pod
	snap := app.Snapshot{Nodes: r.Case.Nodes, Namespaces: r.Case.Namespaces}
	for _, p := range r.Case.Bound {
		snap.Pods = append(snap.Pods, p)
	}
	for _, p := range r.Case.Pending {
		switch n := r.Decision.Bindings[key(p)]; {
		case key(p) == f.Pod:
			// Pinned by its hostname label to the first node the oracle lets it onto, so that a policy
			// disabled cannot send it elsewhere instead.
			pod = p.DeepCopy()
			if nd := r.node(f.Feasible[0]); nd != nil && nd.Labels[v1.LabelHostname] != "" {
				if pod.Spec.NodeSelector == nil {
					pod.Spec.NodeSelector = map[string]string{}
				}
				pod.Spec.NodeSelector[v1.LabelHostname] = nd.Labels[v1.LabelHostname]
			}
			snap.Pods = append(snap.Pods, pod)
		case n != "":
			b := p.DeepCopy()
			b.Spec.NodeName = n
			snap.Pods = append(snap.Pods, b)
		}
	}
	if pod == nil {
		return "", fmt.Errorf("attribute: no pending pod %s", f.Pod)
	}
	// Weave places the pod where kube-scheduler would (a node the policy kept it from); a placement
	// elsewhere, as disabling a policy may allow, explains nothing.
	places := func(cfg app.Config) (bool, error) {
		d, err := app.Decide(ctx, cfg, snap)
		if err != nil {
			return false, err
		}
		return slices.Contains(f.Feasible, d.Bindings[f.Pod]), nil
	}
	ok, err := places(cfg)
	if err != nil {
		return "app.Decide fails on the final state with the pod alone pending: " + decideErrorClass(err.Error()), nil
	}
	if ok {
		return "weave places it when it is the only pending pod (the batch left it out)", nil
	}
	var culprits, failed []string
	seen := map[string]bool{}
	for _, p := range scheduler.Policies {
		if !p.Hard || seen[p.ID] || slices.Contains(scheduler.RequiredPolicies, p.ID) {
			continue
		}
		seen[p.ID] = true
		c := cfg
		c.DisabledPolicies = append(slices.Clone(cfg.DisabledPolicies), p.ID)
		ok, err := places(c)
		switch {
		case err != nil:
			failed = append(failed, p.ID)
		case ok:
			culprits = append(culprits, p.ID+" ("+p.Plugin+")")
		}
	}
	why := "no single hard policy disabled lets weave place it where kube-scheduler would"
	if len(culprits) > 0 {
		why = "weave places it where kube-scheduler would with " + strings.Join(culprits, " or ") + " disabled"
	}
	if len(failed) > 0 {
		why += fmt.Sprintf(" (app.Decide failed with %s disabled)", strings.Join(failed, ", "))
	}
	return why, nil
}
