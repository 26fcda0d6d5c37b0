package oracle

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	toolscache "k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	schedcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// Excluded lists the plugins of v1.37.2's default profile (with its default feature gates) that the oracle
// leaves out, and why.
var Excluded = map[string]string{
	names.DefaultPreemption:          "PostFilter only: preemption is not judged",
	names.DynamicResources:           "needs the scheduler's DRA manager (claim and slice trackers); its PreEnqueue verdict for a pod with spec.resourceClaims in a cluster without ResourceClaims is emulated",
	names.GangScheduling:             "workload plugin (GenericWorkload, off by default)",
	names.TopologyPlacementGenerator: "workload plugin (TopologyAwareWorkloadScheduling, off by default)",
	names.PodGroupPodsCount:          "workload plugin (TopologyAwareWorkloadScheduling, off by default)",
	names.DeferredPodScheduling:      "InPlacePodVerticalScalingSchedulerPreemption, off by default",
}

// Cluster is a cluster state as the oracle judges it.
type Cluster struct {
	Nodes []*v1.Node
	// Pods may hold any pods: like kube-scheduler's cache, the oracle counts those bound to one of Nodes
	// (spec.nodeName set) and not terminal (its informer drops Succeeded and Failed pods).
	Pods []*v1.Pod
	// Namespaces are what InterPodAffinity's namespaceSelector reads.
	Namespaces []*v1.Namespace
}

// Rejection is why a plugin keeps a pod off a node (or out of the queue).
type Rejection struct {
	// Plugin names the plugin, or the plugins of a PreFilterResult that left the node out, comma-separated.
	Plugin string
	// Code is the status code: Unschedulable, UnschedulableAndUnresolvable or (PreEnqueue) UnschedulableAndUnresolvable.
	Code string
	// Reasons are the plugin's reasons.
	Reasons []string
}

func (r *Rejection) String() string {
	if r == nil {
		return "passes"
	}
	return fmt.Sprintf("%s: %s", r.Plugin, strings.Join(r.Reasons, "; "))
}

// Verdict is the oracle's judgement of one pod in one cluster state.
type Verdict struct {
	// PreEnqueue is set when a PreEnqueue plugin keeps the pod out of the scheduling queue: it is not tried on
	// any node (every node then carries the same rejection).
	PreEnqueue *Rejection
	// PreFilter is set when a PreFilter plugin rejects the pod (every node then carries the same rejection):
	// kube-scheduler's message is then its message alone.
	PreFilter *Rejection
	// Nodes maps every node of the cluster to nil if the pod passes every PreFilter and Filter plugin there,
	// or to the first rejection, in the order kube-scheduler runs its plugins.
	Nodes map[string]*Rejection
}

// Passes reports whether the pod may be bound to node.
func (v Verdict) Passes(node string) bool {
	r, ok := v.Nodes[node]
	return ok && r == nil
}

// Feasible lists the nodes the pod may be bound to, in name order.
func (v Verdict) Feasible() []string {
	var out []string
	for n, r := range v.Nodes {
		if r == nil {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Oracle holds one framework of kube-scheduler's default profile. Its methods are safe for concurrent use
// (they take turns: the plugins read one snapshot at a time).
type Oracle struct {
	mu         sync.Mutex
	fw         framework.Framework
	lister     *swapLister
	namespaces toolscache.Indexer
	cancel     context.CancelFunc
}

// swapLister is the snapshot the plugins were given at construction; each judgement swaps in its own
// (kube-scheduler updates its one snapshot in place before each cycle).
type swapLister struct{ fwk.SharedLister }

// New builds the framework: the in-tree registry, the default profile of the v1 component config with its
// default plugin arguments, minus Excluded, over an informer factory that is never started (the oracle
// fills the stores it reads).
func New() (*Oracle, error) {
	metrics.Register() // the framework's instrumented plugins need the scheduler's metrics (idempotent)
	cfg, err := latest.Default()
	if err != nil {
		return nil, err
	}
	if len(cfg.Profiles) != 1 {
		return nil, fmt.Errorf("oracle: the default configuration has %d profiles", len(cfg.Profiles))
	}
	prof := cfg.Profiles[0]
	prof.Plugins = prof.Plugins.DeepCopy()
	var kept []config.Plugin
	for _, p := range prof.Plugins.MultiPoint.Enabled {
		if _, out := Excluded[p.Name]; !out {
			kept = append(kept, p)
		}
	}
	prof.Plugins.MultiPoint.Enabled = kept

	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	lister := &swapLister{schedcache.NewEmptySnapshot()}
	ctx, cancel := context.WithCancel(context.Background())
	fw, err := frameworkruntime.NewFramework(ctx, plugins.NewInTreeRegistry(), &prof,
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithSnapshotSharedLister(lister),
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())),
	)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("oracle: %w", err)
	}
	return &Oracle{
		fw:         fw,
		lister:     lister,
		namespaces: factory.Core().V1().Namespaces().Informer().GetIndexer(),
		cancel:     cancel,
	}, nil
}

// Close stops the framework's background work.
func (o *Oracle) Close() {
	o.cancel()
	frameworkruntime.WaitForShutdown(o.fw)
}

// Plugins lists the plugins the oracle runs at each extension point it uses, in the order it runs them.
func (o *Oracle) Plugins() (preEnqueue, preFilter, filter []string) {
	ps := o.fw.ListPlugins()
	get := func(s config.PluginSet) []string {
		var out []string
		for _, p := range s.Enabled {
			out = append(out, p.Name)
		}
		return out
	}
	return get(ps.PreEnqueue), get(ps.PreFilter), get(ps.Filter)
}

// Judge runs the PreEnqueue, PreFilter and Filter plugins for pod over the cluster c, with pod itself left
// out of c (a bound pod is judged where it stands: as if it were being scheduled onto the rest).
func (o *Oracle) Judge(ctx context.Context, c Cluster, pod *v1.Pod) (Verdict, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	v := Verdict{Nodes: make(map[string]*Rejection, len(c.Nodes))}
	all := func(r *Rejection) {
		for _, n := range c.Nodes {
			v.Nodes[n.Name] = r
		}
	}
	for _, pl := range o.fw.PreEnqueuePlugins() {
		if s := pl.PreEnqueue(ctx, pod); !s.IsSuccess() {
			v.PreEnqueue = rejection(s, pl.Name())
			all(v.PreEnqueue)
			return v, nil
		}
	}
	if len(pod.Spec.ResourceClaims) > 0 {
		// DynamicResources.PreEnqueue: a claim the pod references must exist (foreachPodResourceClaim);
		// a Cluster holds no ResourceClaim.
		v.PreEnqueue = &Rejection{Plugin: names.DynamicResources, Code: fwk.UnschedulableAndUnresolvable.String(),
			Reasons: []string{"resourceclaim not found (emulated: the cluster has no ResourceClaim objects)"}}
		all(v.PreEnqueue)
		return v, nil
	}

	known := make(map[string]bool, len(c.Nodes))
	for _, n := range c.Nodes {
		known[n.Name] = true
	}
	pods := make([]*v1.Pod, 0, len(c.Pods))
	for _, p := range c.Pods {
		if p.Spec.NodeName == "" || !known[p.Spec.NodeName] || terminal(p) || samePod(p, pod) {
			continue
		}
		pods = append(pods, p)
	}
	o.lister.SharedLister = schedcache.NewSnapshot(pods, c.Nodes)
	ns := make([]interface{}, len(c.Namespaces))
	for i, n := range c.Namespaces {
		ns[i] = n
	}
	if err := o.namespaces.Replace(ns, ""); err != nil {
		return v, err
	}

	// As findNodesThatFitPod does.
	state := framework.NewCycleState()
	preRes, s, withNodes := o.fw.RunPreFilterPlugins(ctx, state, pod)
	if !s.IsSuccess() {
		if !s.IsRejected() {
			return v, fmt.Errorf("oracle: PreFilter of %s/%s: %w", pod.Namespace, pod.Name, s.AsError())
		}
		plugin := s.Plugin()
		if plugin == "" { // the PreFilterResults of withNodes left no node
			plugin = strings.Join(sets.List(withNodes), ",")
		}
		v.PreFilter = rejection(s, plugin)
		all(v.PreFilter)
		return v, nil
	}
	for _, n := range c.Nodes {
		if !preRes.AllNodes() && !preRes.NodeNames.Has(n.Name) {
			pl := sets.List(withNodes)
			v.Nodes[n.Name] = &Rejection{Plugin: strings.Join(pl, ","), Code: fwk.UnschedulableAndUnresolvable.String(),
				Reasons: []string{fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", pl)}}
			continue
		}
		ni, err := o.lister.NodeInfos().Get(n.Name)
		if err != nil {
			return v, err
		}
		s := o.fw.RunFilterPlugins(ctx, state, pod, ni)
		switch {
		case s.IsSuccess():
			v.Nodes[n.Name] = nil
		case s.IsRejected():
			v.Nodes[n.Name] = rejection(s, s.Plugin())
		default:
			return v, fmt.Errorf("oracle: Filter of %s/%s on %s: %w", pod.Namespace, pod.Name, n.Name, s.AsError())
		}
	}
	return v, nil
}

func rejection(s *fwk.Status, plugin string) *Rejection {
	return &Rejection{Plugin: plugin, Code: s.Code().String(), Reasons: slices.Clone(s.Reasons())}
}

func terminal(p *v1.Pod) bool {
	return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
}

func samePod(a, b *v1.Pod) bool {
	return (a.UID != "" && a.UID == b.UID) || (a.Namespace == b.Namespace && a.Name == b.Name)
}
