package app

// "Why is my pod pending?": the FailedScheduling message of a pod that fits no node, and the full explanation
// served at /explain/NAMESPACE/POD. Both come from scheduler.State.Diagnose: per node, the hard policies that
// reject the pod, worded as kube-scheduler v1.37.2's Filter plugins word them (so that alerts and dashboards
// written for kube-scheduler's messages keep working), then the other pods at fault.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/weavesql/weave/scheduler"
)

// explainer diagnoses the pods one triage found fitting no node, on that triage's copy of the state, when
// their report is sent: in the reporting goroutines, not in the loop. Diagnose changes the state's pod map
// while it runs, so the diagnoses of one copy take turns.
type explainer struct {
	mu   sync.Mutex
	st   *scheduler.State
	msgs map[string]string
}

func newExplainer(st *scheduler.State) *explainer {
	return &explainer{st: st, msgs: map[string]string{}}
}

// message is the pod's diagnosis (Diagnosis.Message), worked out once.
func (e *explainer) message(key string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if m, ok := e.msgs[key]; ok {
		return m
	}
	sp := e.st.Pods[key]
	if sp == nil { // failed only reports pods of the state
		return fmt.Sprintf("0/%d nodes are available.", len(e.st.Nodes))
	}
	m := e.st.Diagnose(sp).Message()
	e.msgs[key] = m
	return m
}

// failure returns the pod's report, worked out when called: the diagnosis, then, as kube-scheduler appends
// its PostFilter's message, "preemption: " and why preemption did not place the pod (none when preemption
// is "").
func (e *explainer) failure(key, preemption string) func() string {
	return func() string {
		m := e.message(key)
		if preemption != "" {
			m += " preemption: " + preemption
		}
		return m
	}
}

// ExplainError is Explain's answer for a pod it cannot explain: Pod (namespace/name) and what is wrong.
type ExplainError struct {
	Pod, Problem string
}

func (e *ExplainError) Error() string { return "explain " + e.Pod + ": " + e.Problem }

// Explain is the full explanation of a pending pod of this scheduler from the replica's live state (its
// informers' view): the message its FailedScheduling event carries, the nodes that take it alone (a pod that
// fits some node waits for a batch that places it), one line per node that rejects it with the reasons, and
// every pod at fault. A pod in backoff is explained as it would be retried. A pod weave-scheduler refuses,
// or that waits for its scheduling gates or its volumes, gets that. A pod that does not exist, is bound or
// being bound, or names another scheduler is an *ExplainError.
func (s *Server) Explain(namespace, name string) (string, error) {
	key := namespace + "/" + name
	if namespace == "" || name == "" || strings.Contains(name, "/") {
		return "", &ExplainError{Pod: key, Problem: "want NAMESPACE/POD"}
	}
	p, err := s.podLister.Pods(namespace).Get(name)
	switch {
	case err != nil:
		return "", &ExplainError{Pod: key, Problem: "no such pod in the scheduler's informer cache: " + err.Error()}
	case p.Spec.NodeName != "":
		return "", &ExplainError{Pod: key, Problem: "not pending: bound to node " + p.Spec.NodeName}
	case !s.ours(p):
		return "", &ExplainError{Pod: key, Problem: fmt.Sprintf("scheduled by %q, not by %q", p.Spec.SchedulerName, s.cfg.SchedulerName)}
	case gated(p):
		return fmt.Sprintf("pod %s: waits for its scheduling gates to be removed\n", key), nil
	}
	s.mu.Lock()
	node, binding := s.inflight[key]
	nom := s.nominated[key]
	refusal, refused := s.refused[key]
	s.mu.Unlock()
	switch {
	case binding:
		return "", &ExplainError{Pod: key, Problem: "not pending: being bound to node " + node}
	case nom != nil:
		return fmt.Sprintf("pod %s: nominated for node %s, where it is bound once the pods evicted for it are gone\n", key, nom.node), nil
	case refused:
		return fmt.Sprintf("pod %s: %s\n", key, refusal), nil
	}
	if fs := unsupported(p); len(fs) > 0 {
		return fmt.Sprintf("pod %s: %s\n", key, refusalMessage(fs)), nil
	}
	sp := toPod(p)
	if len(p.Spec.Volumes) > 0 {
		vols := volumeConstraints(p, s)
		if len(vols.unsupported) > 0 {
			return fmt.Sprintf("pod %s: %s\n", key, refusalMessage(vols.unsupported)), nil
		}
		if vols.waiting != "" {
			return fmt.Sprintf("pod %s: %s\n", key, vols.waiting), nil
		}
		sp.VolumeNodeSelectors = vols.selectors
	}
	return s.brain.Diagnose(sp).Detail(), nil
}

// serveExplain serves GET /explain/NAMESPACE/POD: Explain's text, or 404 with the ExplainError.
func (s *Server) serveExplain(w http.ResponseWriter, r *http.Request) {
	ns, name, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/explain/"), "/")
	text, err := s.Explain(ns, name)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	fmt.Fprint(w, text)
}

// Diagnose explains, for every pod of a snapshot that weave-scheduler would queue (pending, naming it, not
// gated, not refused), where it fits alone as the snapshot is, with the conversions and enabled policies of a
// live replica (cfg as for one): the diagnosis a FailedScheduling message is built from. Nothing is placed.
// It talks to no API server; differential tests hold the diagnoses to kube-scheduler's own Filter plugins.
func Diagnose(ctx context.Context, cfg Config, snap Snapshot) (map[string]*scheduler.Diagnosis, error) {
	s, _, stop, err := snapshotServer(ctx, cfg, snap)
	if err != nil {
		return nil, err
	}
	defer stop()
	st := s.brain.PolicyState()
	out := map[string]*scheduler.Diagnosis{}
	for _, key := range s.brain.Pending() {
		if sp := st.Pods[key]; sp != nil {
			out[key] = st.Diagnose(sp)
		}
	}
	return out, nil
}
