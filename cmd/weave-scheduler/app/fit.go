package app

import (
	"github.com/weavesql/weave/scheduler"
)

// fitter answers "does this pod fit some node as the state is?" for the triage of unplaced pods. It gives
// the answer of State.FeasibleNodes (non-empty), but State.Check reads every pod of the state for each node
// it tries: FeasibleNodes costs nodes × pods per pod, 0.3 s at 500 nodes and 2,500 pods, and 9-53 s for the
// triage's 20 pods on the loaded bench machine (PreemptionBasic). The fitter sums the requests of the bound
// pods per node once, and runs Check only on the nodes where the pod's requests fit in what is left (H5 is
// part of Check, so a node it skips would fail Check too). On a full cluster, the case of preemption, no
// node is left to check.
type fitter struct {
	st   *scheduler.State
	used map[string]*usage
}

type usage struct{ cpu, mem, sto, pods int64 }

func live(p *scheduler.Pod) bool {
	return p.Phase == "" || p.Phase == scheduler.PhasePending || p.Phase == scheduler.PhaseRunning
}

func newFitter(st *scheduler.State) *fitter {
	f := &fitter{st: st, used: map[string]*usage{}}
	for name := range st.Nodes {
		f.used[name] = &usage{}
	}
	for _, p := range st.Pods {
		if p.NodeName == "" || !live(p) {
			continue
		}
		u := f.used[p.NodeName]
		if u == nil {
			continue // on a node the state does not know: Check fails it wherever it is
		}
		u.cpu, u.mem, u.sto, u.pods = u.cpu+p.CPU, u.mem+p.Memory, u.sto+p.Storage, u.pods+1
	}
	return f
}

// roomFor reports whether the requests of p (unbound in the state) fit in what the bound pods leave of node.
func (f *fitter) roomFor(p *scheduler.Pod, node string) bool {
	n, u := f.st.Nodes[node], f.used[node]
	return u.cpu+p.CPU <= n.CPU && u.mem+p.Memory <= n.Memory && u.sto+p.Storage <= n.Storage && u.pods+1 <= n.Pods
}

// fitsSomewhere reports whether p, a pod of the state without a node, fits some node alone: the nodes with
// room for its requests are tried with State.Check.
func (f *fitter) fitsSomewhere(p *scheduler.Pod) bool {
	q := *p
	saved, had := f.st.Pods[q.Name]
	f.st.Pods[q.Name] = &q
	defer func() {
		if had {
			f.st.Pods[q.Name] = saved
		} else {
			delete(f.st.Pods, q.Name)
		}
	}()
	for name := range f.st.Nodes {
		if !f.roomFor(p, name) {
			continue
		}
		q.NodeName = name
		if f.st.Check([]*scheduler.Pod{&q}) == nil {
			return true
		}
	}
	return false
}
