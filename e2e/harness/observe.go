package harness

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// CreatePodsTimed creates n pending pods named prefix-0 … in namespace ns, like CreatePods, and returns the
// time each Create request was sent: the start of the pod's scheduling latency, measured on the client's
// clock (creationTimestamp has a resolution of one second).
func (c *Cluster) CreatePodsTimed(ctx context.Context, ns, prefix string, n int, spec PodSpec) (map[string]time.Time, error) {
	var mu sync.Mutex
	sent := map[string]time.Time{}
	err := parallel(n, 32, func(i int) error {
		name := fmt.Sprintf("%s-%d", prefix, i)
		t := time.Now()
		mu.Lock()
		sent[name] = t
		mu.Unlock()
		return c.CreatePod(ctx, ns, name, spec)
	})
	return sent, err
}

// BindWatch follows the pods of a namespace through an informer of its own (a watch on the admin client): when
// each pod was first seen bound, every node it was seen on and every node it was seen nominated to, in order.
type BindWatch struct {
	mu        sync.Mutex
	first     map[string]time.Time
	nodes     map[string][]string
	nominated map[string][]string
	stop      context.CancelFunc
}

// WatchBindings starts a BindWatch on namespace ns; it stops with ctx, Stop, or the test.
func (c *Cluster) WatchBindings(ctx context.Context, ns string) (*BindWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &BindWatch{first: map[string]time.Time{}, nodes: map[string][]string{}, nominated: map[string][]string{}, stop: cancel}
	f := informers.NewSharedInformerFactoryWithOptions(c.Client, 0, informers.WithNamespace(ns))
	inf := f.Core().V1().Pods().Informer()
	seen := func(obj any) {
		p, ok := obj.(*v1.Pod)
		if !ok {
			return
		}
		now := time.Now()
		w.mu.Lock()
		defer w.mu.Unlock()
		if nn := p.Status.NominatedNodeName; nn != "" {
			if l := w.nominated[p.Name]; len(l) == 0 || l[len(l)-1] != nn {
				w.nominated[p.Name] = append(l, nn)
			}
		}
		if p.Spec.NodeName == "" {
			return
		}
		if _, ok := w.first[p.Name]; !ok {
			w.first[p.Name] = now
		}
		if ns := w.nodes[p.Name]; len(ns) == 0 || ns[len(ns)-1] != p.Spec.NodeName {
			w.nodes[p.Name] = append(ns, p.Spec.NodeName)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    seen,
		UpdateFunc: func(_, obj any) { seen(obj) },
	}); err != nil {
		cancel()
		return nil, err
	}
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return w, nil
}

// Stop stops the informer.
func (w *BindWatch) Stop() { w.stop() }

// Bound returns when each pod seen bound was first seen so.
func (w *BindWatch) Bound() map[string]time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]time.Time, len(w.first))
	for k, v := range w.first {
		out[k] = v
	}
	return out
}

// Nodes returns the nodes a pod was seen on, in order: one for a pod bound once.
func (w *BindWatch) Nodes(pod string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.nodes[pod]...)
}

// Nominated returns the nodes a pod was seen nominated to (status.nominatedNodeName), in order. The API server
// clears the field when it binds the pod (ClearingNominatedNodeNameAfterBinding, on by default since v1.35:
// pkg/registry/core/pod/storage/storage.go), so a nomination is only seen before the binding.
func (w *BindWatch) Nominated(pod string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.nominated[pod]...)
}

// Cutter hands out a rest.Config whose connections to the API server it can cut, all at once: every watch
// and request in flight of the clients built from it fails as if the API server had restarted, and the
// clients dial again (client-go's reflectors re-list and re-watch).
type Cutter struct {
	mu    sync.Mutex
	conns map[net.Conn]bool
}

// Cuttable returns a copy of the cluster's admin configuration dialling through a new Cutter.
func (c *Cluster) Cuttable() (*rest.Config, *Cutter) {
	cu := &Cutter{conns: map[net.Conn]bool{}}
	cfg := rest.CopyConfig(c.Config)
	var d net.Dialer
	cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		cu.mu.Lock()
		cu.conns[conn] = true
		cu.mu.Unlock()
		return conn, nil
	}
	return cfg, cu
}

// Cut closes every connection dialled so far and returns how many there were.
func (cu *Cutter) Cut() int {
	cu.mu.Lock()
	defer cu.mu.Unlock()
	n := len(cu.conns)
	for conn := range cu.conns {
		conn.Close()
		delete(cu.conns, conn)
	}
	return n
}
