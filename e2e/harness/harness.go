// Package harness runs a real kube-apiserver with an embedded etcd inside the test process, creates nodes and
// pods, and runs a scheduler — the real kube-scheduler or weave-scheduler — against it, one at a time. Both
// Kubernetes components are those of the module's k8s.io/kubernetes, v1.37.2, started after upstream's
// integration-test recipe (test/integration/util: InitTestAPIServer, StartSchedulerWithDone).
package harness

import (
	"context"
	"fmt"
	"path"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/storage/etcd3/testserver"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

// Cluster is a live API server backed by an embedded etcd.
type Cluster struct {
	Config *rest.Config // admin config, with QPS limits raised for load generation
	Client kubernetes.Interface
}

// Start runs etcd and kube-apiserver in-process with upstream's test defaults; both stop when the test ends.
func Start(t testing.TB) *Cluster {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith is Start with options (feature gates, runtime config).
func StartWith(t testing.TB, o Options) *Cluster {
	t.Helper()
	flags, err := o.apply(t)
	if err != nil {
		t.Fatal(err)
	}
	etcdClient := testserver.RunEtcd(t, testserver.NewTestConfig(t))
	storage := storagebackend.NewDefaultConfig(path.Join(uuid.New().String(), "registry"), nil)
	storage.Transport.ServerList = etcdClient.Endpoints()
	server := kubeapiservertesting.StartTestServerOrDie(t, nil, flags, storage)
	t.Cleanup(server.TearDownFn)
	cfg := rest.CopyConfig(server.ClientConfig)
	cfg.QPS, cfg.Burst = 10000, 20000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &Cluster{Config: cfg, Client: client}
}

// NodeSpec describes the nodes CreateNodes makes.
type NodeSpec struct {
	CPU    string            // allocatable CPU, e.g. "4"
	Memory string            // allocatable memory, e.g. "16Gi"
	Pods   int               // allocatable pod count
	Labels map[string]string // extra labels (kubernetes.io/hostname is always set)
	// Resources are more capacity and allocatable: extended resources (nvidia.com/gpu), hugepages.
	Resources v1.ResourceList
	Taints    []v1.Taint
}

// PodSpec describes the pods CreatePods makes.
type PodSpec struct {
	SchedulerName string
	CPU           string // request, e.g. "100m"
	Memory        string // request, e.g. "128Mi"
	Labels        map[string]string
	NodeSelector  map[string]string
	// Priority is spec.priority (the harness disables the Priority admission plugin, so no PriorityClass
	// is needed).
	Priority int32
	// GracePeriod is spec.terminationGracePeriodSeconds; 0 makes a bound pod's deletion (or eviction)
	// immediate: there is no kubelet to finish a graceful one.
	GracePeriod *int64
}

func parallel(n, workers int, f func(i int) error) error {
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// CreateNodes creates n ready nodes named prefix-0 … prefix-(n-1). The API server drops the status on create,
// so it is written afterwards with UpdateStatus.
func (c *Cluster) CreateNodes(ctx context.Context, prefix string, n int, spec NodeSpec) ([]string, error) {
	names := make([]string, n)
	err := parallel(n, 32, func(i int) error {
		name := fmt.Sprintf("%s-%d", prefix, i)
		names[i] = name
		return c.CreateNode(ctx, name, spec)
	})
	return names, err
}

// CreateNode creates one ready node.
func (c *Cluster) CreateNode(ctx context.Context, name string, spec NodeSpec) error {
	labels := map[string]string{"kubernetes.io/hostname": name}
	for k, v := range spec.Labels {
		labels[k] = v
	}
	pods := spec.Pods
	if pods == 0 {
		pods = 110
	}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: v1.NodeSpec{Taints: spec.Taints}}
	created, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	alloc := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse(spec.CPU),
		v1.ResourceMemory: resource.MustParse(spec.Memory),
		v1.ResourcePods:   *resource.NewQuantity(int64(pods), resource.DecimalSI),
	}
	for r, q := range spec.Resources {
		alloc[r] = q
	}
	created.Status = v1.NodeStatus{
		Capacity:    alloc,
		Allocatable: alloc,
		Phase:       v1.NodeRunning,
		Conditions: []v1.NodeCondition{{
			Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
		}},
	}
	_, err = c.Client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	return err
}

// CreatePods creates n pending pods named prefix-0 … in namespace ns.
func (c *Cluster) CreatePods(ctx context.Context, ns, prefix string, n int, spec PodSpec) ([]string, error) {
	names := make([]string, n)
	err := parallel(n, 32, func(i int) error {
		names[i] = fmt.Sprintf("%s-%d", prefix, i)
		return c.CreatePod(ctx, ns, names[i], spec)
	})
	return names, err
}

// CreatePod creates one pending pod.
func (c *Cluster) CreatePod(ctx context.Context, ns, name string, spec PodSpec) error {
	req := v1.ResourceList{}
	if spec.CPU != "" {
		req[v1.ResourceCPU] = resource.MustParse(spec.CPU)
	}
	if spec.Memory != "" {
		req[v1.ResourceMemory] = resource.MustParse(spec.Memory)
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: spec.Labels},
		Spec: v1.PodSpec{
			SchedulerName:                 spec.SchedulerName,
			NodeSelector:                  spec.NodeSelector,
			Priority:                      &spec.Priority,
			TerminationGracePeriodSeconds: spec.GracePeriod,
			Containers: []v1.Container{{
				Name: "c", Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: req},
			}},
		},
	}
	_, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	return err
}

// CreateNamespace creates a namespace.
func (c *Cluster) CreateNamespace(ctx context.Context, name string) error {
	return c.CreateLabelledNamespace(ctx, name, nil)
}

// CreateLabelledNamespace creates a namespace with labels (what a pod affinity term's namespaceSelector reads).
func (c *Cluster) CreateLabelledNamespace(ctx context.Context, name string, labels map[string]string) error {
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	_, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	return err
}

// WaitBound polls until every pod in ns with the given names has a node, and returns the bound pods' nodes.
func (c *Cluster) WaitBound(ctx context.Context, ns string, want int, timeout time.Duration) (map[string]string, error) {
	deadline := time.Now().Add(timeout)
	for {
		pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		bound := map[string]string{}
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" {
				bound[p.Name] = p.Spec.NodeName
			}
		}
		if len(bound) >= want {
			return bound, nil
		}
		if time.Now().After(deadline) {
			return bound, fmt.Errorf("%d of %d pods bound after %v", len(bound), want, timeout)
		}
		select {
		case <-ctx.Done():
			return bound, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// RunKubeScheduler runs the real kube-scheduler (default profile) until ctx is cancelled.
func (c *Cluster) RunKubeScheduler(ctx context.Context, t testing.TB) {
	t.Helper()
	if err := c.StartKubeScheduler(ctx); err != nil {
		t.Fatal(err)
	}
}

// StartKubeScheduler starts the real kube-scheduler, which runs until ctx is cancelled; it returns once the
// scheduler's informers have synced. Its configuration is the default one of the scheduler's v1 config API
// (one profile, default-scheduler, every default plugin) and its feature gates are the process's: v1.37.2's
// defaults (OpportunisticBatching on, GenericWorkload off) unless Options.FeatureGates changed them. It is
// built as upstream's test/integration/util.StartSchedulerWithDone builds it, without out-of-tree plugins.
func (c *Cluster) StartKubeScheduler(ctx context.Context) error {
	cfg, err := latest.Default()
	if err != nil {
		return err
	}
	informerFactory := scheduler.NewInformerFactory(c.Client, 0, nil)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: c.Client.EventsV1()})
	broadcaster.StartRecordingToSink(ctx.Done())
	go func() { <-ctx.Done(); broadcaster.Shutdown() }()
	sched, err := scheduler.New(ctx, c.Client, informerFactory, nil, profile.NewRecorderFactory(broadcaster),
		scheduler.WithKubeConfig(c.Config),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithExtenders(cfg.Extenders...),
		scheduler.WithParallelism(cfg.Parallelism),
	)
	if err != nil {
		return err
	}
	informerFactory.Start(ctx.Done())
	informerFactory.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		return err
	}
	go sched.Run(ctx)
	return nil
}

// SetRunning reports a bound pod Running and Ready, as its kubelet would (there is none here). The Eviction
// API checks PodDisruptionBudgets only for such pods: a Pending one is evicted regardless.
func (c *Cluster) SetRunning(ctx context.Context, ns, name string) error {
	p, err := c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	p.Status.Phase = v1.PodRunning
	p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.Now()})
	_, err = c.Client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	return err
}
