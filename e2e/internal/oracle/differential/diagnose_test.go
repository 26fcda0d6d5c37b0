package differential

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/weavesql/weave/cmd/weave-scheduler/app"
	"github.com/weavesql/weave/e2e/internal/oracle"
	"github.com/weavesql/weave/e2e/internal/oracle/gen"
)

// TestDiagnosisMatchesKubeScheduler: on random cluster states (package gen), for every pod weave-scheduler
// queues, the reasons app.Diagnose gives each node (what weave-scheduler's FailedScheduling message counts)
// are the reasons kube-scheduler v1.37.2's own PreFilter and Filter plugins give it on the same state
// (oracle.Judge: the first rejecting plugin's, node by node); so the "0/N nodes are available: ..." texts are
// equal. WEAVE_DIAG_CASES sets the number of cases (seeds 1..n).
func TestDiagnosisMatchesKubeScheduler(t *testing.T) {
	n := envInt(t, "WEAVE_DIAG_CASES", 60)
	o := newOracle(t)
	pods, nodes, rejected := 0, 0, 0
	seen := map[string]int{} // reason → nodes
	var mismatches []string
	for seed := int64(1); seed <= int64(n); seed++ {
		c := gen.Generate(seed, gen.Options{})
		ds, err := app.Diagnose(t.Context(), app.DefaultConfig(), app.Snapshot{Nodes: c.Nodes, Pods: c.Pods(), Namespaces: c.Namespaces})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		pending := map[string]*v1.Pod{}
		for _, p := range c.Pending {
			pending[key(p)] = p
		}
		cluster := oracle.Cluster{Nodes: c.Nodes, Namespaces: c.Namespaces, Pods: c.Bound}
		keys := make([]string, 0, len(ds))
		for k := range ds {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			d, p := ds[k], pending[k]
			if p == nil {
				t.Fatalf("seed %d: a diagnosis of %s, not a pending pod of the case", seed, k)
			}
			v, err := o.Judge(t.Context(), cluster, p)
			if err != nil {
				t.Fatalf("seed %d: %s: %v", seed, k, err)
			}
			pods++
			want := kubeMessage(len(c.Nodes), v)
			if got := d.FitMessage(); got != want && v.PreEnqueue == nil {
				var diff []string
				for _, node := range c.Nodes {
					var w []string
					if r := v.Nodes[node.Name]; r != nil {
						w = slices.Sorted(slices.Values(r.Reasons))
					}
					g := slices.Sorted(slices.Values(d.Reasons[node.Name]))
					if !slices.Equal(w, g) {
						diff = append(diff, fmt.Sprintf("    %s: kube %q, weave %q", node.Name, w, g))
					}
				}
				mismatches = append(mismatches, fmt.Sprintf("seed %d, pod %s:\n  kube:  %s\n  weave: %s\n%s", seed, k, want, got, strings.Join(diff, "\n")))
			}
			for _, node := range c.Nodes {
				nodes++
				if r := v.Nodes[node.Name]; r != nil {
					rejected++
					for _, why := range r.Reasons {
						seen[why]++
					}
				}
			}
		}
	}
	t.Logf("%d pods on %d nodes in all, %d rejections; reasons: %v", pods, nodes, rejected, seen)
	if len(mismatches) > 0 {
		t.Errorf("%d of %d pods diagnosed otherwise than kube-scheduler's plugins:\n%s", len(mismatches), pods, strings.Join(mismatches, "\n"))
	}
	if pods < 100 || len(seen) < 8 {
		t.Errorf("the cases exercise too little: %d pods, %d distinct reasons", pods, len(seen))
	}
}

// kubeMessage is kube-scheduler v1.37.2's FitError text for a verdict (framework/types.go: a PreFilter
// rejection's message, or the sorted histogram of the nodes' reasons), without the preemption part.
func kubeMessage(numNodes int, v oracle.Verdict) string {
	msg := fmt.Sprintf("0/%d nodes are available:", numNodes)
	hist := map[string]int{}
	for _, r := range v.Nodes {
		if r != nil {
			for _, why := range r.Reasons {
				hist[why]++
			}
		}
	}
	if v.PreFilter != nil { // its message alone (Status.Message joins the reasons with ", ")
		return msg + " " + strings.Join(v.PreFilter.Reasons, ", ") + "."
	}
	var parts []string
	for why, k := range hist {
		parts = append(parts, fmt.Sprintf("%d %s", k, why))
	}
	sort.Strings(parts)
	if len(parts) > 0 {
		msg += " " + strings.Join(parts, ", ") + "."
	}
	return msg
}
