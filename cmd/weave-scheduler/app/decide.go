package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/weavesql/weave/scheduler"
)

// Snapshot is a cluster as weave-scheduler's informers deliver it: the objects of one moment. It is the cluster of
// an API server that serves scheduling.k8s.io/v1beta1 PodGroups (feature gate GenericWorkload on; where it is off
// the API server drops spec.schedulingGroup, so no pod names a group): PodGroups are read as a live replica
// reads them (podgroups.go).
type Snapshot struct {
	Nodes                  []*v1.Node
	Pods                   []*v1.Pod
	Namespaces             []*v1.Namespace
	PersistentVolumes      []*v1.PersistentVolume
	PersistentVolumeClaims []*v1.PersistentVolumeClaim
	StorageClasses         []*storagev1.StorageClass
	PodGroups              []*schedulingv1beta1.PodGroup
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
	// Waiting maps each pod of a PodGroup that is not tried to why: its PodGroup does not exist, or fewer than
	// the group's minCount pods exist (kube-scheduler's GangScheduling PreEnqueue keeps them).
	Waiting map[string]string
}

// Decide runs weave-scheduler's placement over a snapshot with the conversions, policies and checks of a live
// replica (cfg as for one; the state is the in-memory default whatever cfg.StateDB says), batch after batch
// until no pending pod is left to try: as in the live loop, a pod a batch leaves without a node is tried again
// in the next batch if it fits some node alone, and is unschedulable otherwise (or once a batch binds nothing),
// and a PodGroup a batch leaves whole without a node is unschedulable as a group (podGroupOutcome); bindings are
// assumed, nothing is preempted. It talks to no API server. Differential tests judge its decisions against
// kube-scheduler's own Filter plugins.
func Decide(ctx context.Context, cfg Config, snap Snapshot) (Decision, error) {
	s, ctx, stop, err := snapshotServer(ctx, cfg, snap)
	if err != nil {
		return Decision{}, err
	}
	defer stop()
	d := Decision{Bindings: map[string]string{}, Unschedulable: map[string]string{}, Refused: map[string]string{}, Waiting: map[string]string{}}
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
		// As the loop's outcome for PodGroups (podGroupOutcome): a group the batch left whole without a node,
		// with fewer than minCount members bound, is unschedulable as a group.
		st := s.brain.PolicyState()
		us, failedGroups := s.groupsLeftOut(st, bs, us)
		for pod, msg := range failedGroups {
			d.Unschedulable[pod] = msg
			if err := s.brain.DeletePod(ctx, pod); err != nil {
				return Decision{}, err
			}
		}
		// As the loop's triage (failed): a pod the batch left out that fits some node alone as the state now
		// is stays queued for the next batch, while batches still bind pods; the others are unschedulable.
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
	st := s.brain.State()
	for _, p := range snap.Pods {
		k := podKey(p)
		if p.Spec.NodeName != "" || !s.ours(p) {
			continue
		}
		if gated(p) {
			d.Gated = append(d.Gated, k)
			continue
		}
		_, bound := d.Bindings[k]
		_, unsched := d.Unschedulable[k]
		_, refused := d.Refused[k]
		if g := podGroupOf(p); g != "" && !bound && !unsched && !refused && st.Pods[k] != nil {
			d.Waiting[k] = waitingMessage(st, g)
		}
	}
	sort.Strings(d.Gated)
	return d, nil
}

// groupsLeftOut splits a batch's unschedulable pods as the live loop's podGroupOutcome does: the pods of a group
// that the batch left whole without a node while fewer than its minCount members are bound (st: the state
// after the batch) are unschedulable as a group, each with the group's message; the others are returned for the
// triage of single pods.
func (s *Server) groupsLeftOut(st *scheduler.State, bs []scheduler.Binding, us []scheduler.Unschedulable) ([]scheduler.Unschedulable, map[string]string) {
	admitted := map[string]bool{}
	for _, b := range bs {
		if p := st.Pods[b.Pod]; p != nil && p.PodGroup != "" {
			admitted[p.PodGroup] = true
		}
	}
	failed := map[string][]scheduler.Unschedulable{}
	var rest []scheduler.Unschedulable
	for _, u := range us {
		g := ""
		if p := st.Pods[u.Pod]; p != nil {
			g = p.PodGroup
		}
		if g == "" || admitted[g] {
			rest = append(rest, u)
			continue
		}
		failed[g] = append(failed[g], u)
	}
	out := map[string]string{}
	for g, pods := range failed {
		s.mu.Lock()
		view, known := s.groups[g]
		s.mu.Unlock()
		running := 0
		for _, p := range st.Pods {
			if p.PodGroup == g && p.NodeName != "" && livePod(p) {
				running++
			}
		}
		if !known || int64(running) >= view.group.MinCount {
			rest = append(rest, pods...) // a running gang's extra members are placed one by one
			continue
		}
		sort.Slice(pods, func(i, j int) bool { return pods[i].Pod < pods[j].Pod })
		msg := groupUnschedulableMessage(g, view.group, len(pods), running, pods[0].Reason)
		for _, u := range pods {
			out[u.Pod] = msg
		}
	}
	return rest, out
}

// waitingMessage says why the pods of PodGroup g are not tried: the PodGroup does not exist, or fewer than its
// minCount pods exist (live, bound or not, as GangScheduling's PreEnqueue counts them).
func waitingMessage(st *scheduler.State, g string) string {
	pg := st.PodGroups[g]
	if pg == nil {
		return fmt.Sprintf("waiting for PodGroup %s (spec.schedulingGroup.podGroupName), which does not exist", g)
	}
	n := 0
	for _, p := range st.Pods {
		if p.PodGroup == g && livePod(p) {
			n++
		}
	}
	return fmt.Sprintf("waiting for PodGroup %s: %d of its minCount %d pods exist", g, n, max(pg.MinCount, 1))
}

// livePod: a pod that holds or will hold a node (scheduler's live).
func livePod(p *scheduler.Pod) bool {
	return p.Phase == scheduler.PhasePending || p.Phase == scheduler.PhaseRunning
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
	for _, g := range snap.PodGroups {
		objs = append(objs, g)
	}
	client := fake.NewClientset(objs...)
	// The snapshot's API server serves PodGroups (Snapshot), so they are read as a live replica reads them.
	client.Resources = append(client.Resources, &metav1.APIResourceList{GroupVersion: podGroupsGroupVersion,
		APIResources: []metav1.APIResource{{Name: "podgroups", Namespaced: true, Kind: "PodGroup"}}})
	s, err := NewWithClient(cfg, client, slog.New(slog.NewTextHandler(io.Discard, nil)))
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
