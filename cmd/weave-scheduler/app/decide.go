package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// Snapshot is a cluster as weave-scheduler's informers deliver it: the objects of one moment.
type Snapshot struct {
	Nodes                  []*v1.Node
	Pods                   []*v1.Pod
	Namespaces             []*v1.Namespace
	PersistentVolumes      []*v1.PersistentVolume
	PersistentVolumeClaims []*v1.PersistentVolumeClaim
	StorageClasses         []*storagev1.StorageClass
}

// Decision is what weave-scheduler decides for the pending pods of a Snapshot that name it. Pods are named
// namespace/name.
type Decision struct {
	// Bindings maps each pod placed to its node.
	Bindings map[string]string
	// Unschedulable maps each pod the placement model left without a node to the reason.
	Unschedulable map[string]string
	// Refused maps each pod that uses a field weave-scheduler does not support to the message naming it.
	Refused map[string]string
	// Gated lists the pods held back by spec.schedulingGates, in name order.
	Gated []string
}

// Decide runs weave-scheduler's placement over a snapshot with the conversions, policies and checks of a live
// replica (cfg as for one; the state is the in-memory default whatever cfg.StateDB says), batch after batch
// until no pending pod is left to try: as in the live loop, a pod a batch leaves without a node is tried again
// in the next batch if it fits some node alone, and is unschedulable otherwise (or once a batch binds nothing);
// bindings are assumed, nothing is preempted. It talks to no API server. Differential tests judge its decisions against
// kube-scheduler's own Filter plugins.
func Decide(ctx context.Context, cfg Config, snap Snapshot) (Decision, error) {
	s, ctx, stop, err := snapshotServer(ctx, cfg, snap)
	if err != nil {
		return Decision{}, err
	}
	defer stop()
	d := Decision{Bindings: map[string]string{}, Unschedulable: map[string]string{}, Refused: map[string]string{}}
	for len(s.brain.Pending()) > 0 {
		bs, us, err := s.brain.ScheduleBatch(ctx)
		if err != nil {
			return Decision{}, fmt.Errorf("decide: %w", err)
		}
		for _, b := range bs {
			d.Bindings[b.Pod] = b.Node
		}
		if len(bs) == 0 && len(us) == 0 {
			return Decision{}, fmt.Errorf("decide: a batch decided nothing with %d pods pending", len(s.brain.Pending()))
		}
		// As the loop's triage (failed): a pod the batch left out that fits some node alone as the state now
		// is stays queued for the next batch, while batches still bind pods; the others are unschedulable.
		st := s.brain.PolicyState()
		for _, u := range us {
			if sp := st.Pods[u.Pod]; len(bs) > 0 && sp != nil && st.FitsSomewhere(sp) {
				continue
			}
			d.Unschedulable[u.Pod] = u.Reason
			if err := s.brain.DeletePod(ctx, u.Pod); err != nil {
				return Decision{}, err
			}
		}
	}
	s.mu.Lock()
	for k, msg := range s.refused {
		d.Refused[k] = msg
	}
	s.mu.Unlock()
	for _, p := range snap.Pods {
		if p.Spec.NodeName == "" && s.ours(p) && gated(p) {
			d.Gated = append(d.Gated, podKey(p))
		}
	}
	sort.Strings(d.Gated)
	return d, nil
}

// snapshotServer is a replica over a snapshot, its informers started and synced: weave-scheduler's
// conversions and state, without an API server. It runs under the context returned (derived from ctx) until
// stop is called.
func snapshotServer(ctx context.Context, cfg Config, snap Snapshot) (*Server, context.Context, func(), error) {
	cfg.StateDB = ""
	cfg.BatchWait = -1 // no idle wait: every pending pod is there from the start
	cfg.LeaderElect = false
	if cfg.SchedulerName == "" {
		cfg.SchedulerName = DefaultConfig().SchedulerName
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultConfig().BatchSize
	}
	var objs []runtime.Object
	for _, n := range snap.Nodes {
		objs = append(objs, n)
	}
	for _, p := range snap.Pods {
		objs = append(objs, p)
	}
	for _, n := range snap.Namespaces {
		objs = append(objs, n)
	}
	for _, pv := range snap.PersistentVolumes {
		objs = append(objs, pv)
	}
	for _, pvc := range snap.PersistentVolumeClaims {
		objs = append(objs, pvc)
	}
	for _, sc := range snap.StorageClasses {
		objs = append(objs, sc)
	}
	s, err := NewWithClient(cfg, fake.NewClientset(objs...), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := func() {
		cancel()
		s.events.wait() // after cancel, before the state closes
		s.brain.Close()
		s.closeDB()
	}
	if err := s.startInformers(ctx); err != nil {
		stop()
		return nil, nil, nil, err
	}
	return s, ctx, stop, nil
}
