// Package app is weave-scheduler: a Kubernetes scheduler whose policy is SQL. Informers keep the state
// database of package scheduler current; the leader solves batches of pending pods with Weave, re-checks each
// placement against the latest informer view, and binds through the Binding subresource.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/weavesql/weave"
	"github.com/weavesql/weave/scheduler"
)

// Hooks let tests act between the phases of a batch, and benchmarks record batches.
type Hooks struct {
	// AfterSolve runs after a batch is solved, before the re-check and the bindings.
	AfterSolve func(ctx context.Context, bindings []scheduler.Binding)
	// AfterBatch runs at the end of every batch that decided pods, on the loop's path: it must be
	// quick (weave-bench's probe scraped the metrics in AfterSolve, 10 ms a batch on the loop's path).
	AfterBatch func(BatchReport)
}

// BatchReport is one batch of the loop: when it started, its pods, what Weave reported of its solve
// and the batch's whole time (solve, re-check, queueing the bindings, the unplaced pods' triage).
type BatchReport struct {
	Start        time.Time
	Size, Placed int // pods in the batch, and those the model placed
	Stats        weave.Stats
	// Speculated is set when the batch was placed from a speculation (Config.Speculate): Stats are then
	// those of the speculation's solve, which ran before the batch, while the loop was idle.
	Speculated bool
	Total      time.Duration
}

// Server is one weave-scheduler replica.
type Server struct {
	cfg     Config
	client  kubernetes.Interface
	log     *slog.Logger
	brain   *scheduler.Scheduler
	closeDB func() // closes the state database after brain
	stop    context.CancelCauseFunc
	metrics *metrics
	Hooks   Hooks

	factory    informers.SharedInformerFactory
	podLister  corelisters.PodLister
	nodeLister corelisters.NodeLister
	pvLister   corelisters.PersistentVolumeLister
	pvcLister  corelisters.PersistentVolumeClaimLister
	scLister   storagelisters.StorageClassLister
	pdbLister  policylisters.PodDisruptionBudgetLister
	recorder   events.EventRecorder
	broadcast  events.EventBroadcaster

	synced atomic.Bool
	leader atomic.Bool

	mu       sync.Mutex
	inflight map[string]string      // pod key → node while its binding is under way
	backoff  map[string]*time.Timer // pods kept out of the queue until their retry time
	affine   map[string]bool        // backed-off pods with required inter-pod (anti-)affinity terms (hints.go)
	attempts map[string]int         // failed attempts per pod (the backoff's exponent)
	// nominated holds the preemptors whose victims are being evicted (preempt.go): each is assumed on its
	// nominated node in the state and bound once its victims are gone.
	nominated   map[string]*nomination
	readyNoms   []readyNomination              // preemptors whose victims are gone, for the running binder (bindNominated)
	bindingNoms bool                           // a binder of ready preemptors runs
	claimUsers  map[string]map[string]struct{} // claim (namespace/name) → the pending pods using it (volumes.go)
	refused     map[string]string              // pending pods weave-scheduler does not schedule → the message sent (refuse.go)
	binds       chan bindJob
	evicting    chan struct{}                   // a slot per eviction request under way (evictWorkers slots)
	loopCtx     atomic.Pointer[context.Context] // the leader's context (bindings of nominated pods)

	// PodGroups (podgroups.go).
	groups        map[string]podGroupView // PodGroups (namespace/name) as read
	groupAdmitted map[string]bool         // PodGroups whose PodGroupInitiallyScheduled=True was sent
	groupsOff     string                  // why PodGroups are not read ("" when they are), set before the informers start

	handlersSynced []cache.InformerSynced // the event handlers have seen the informers' initial lists
	events         *eventQueue            // the informers' events, applied in order (events.go)
}

type bindJob struct {
	pod  *v1.Pod
	node string
}

// RESTConfig builds the API client configuration from cfg (kubeconfig or in-cluster).
func RESTConfig(cfg Config) (*rest.Config, error) {
	var rc *rest.Config
	var err error
	if cfg.Kubeconfig != "" {
		rc, err = clientcmdConfig(cfg.Kubeconfig)
	} else {
		rc, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, err
	}
	rc.QPS, rc.Burst = cfg.QPS, cfg.Burst
	rc.UserAgent = "weave-scheduler"
	return rc, nil
}

// New creates a replica; Run starts it.
func New(cfg Config, rc *rest.Config, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	return NewWithClient(cfg, client, log)
}

// NewWithClient creates a replica that talks to the API server through client (a fake clientset in tests).
func NewWithClient(cfg Config, client kubernetes.Interface, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	log = log.With("scheduler", cfg.SchedulerName, "identity", cfg.Identity)
	if cfg.NominationTimeout <= 0 {
		cfg.NominationTimeout = DefaultConfig().NominationTimeout
	}
	var srv *Server // set below; Evictable is called only by preemption plans, once the server runs
	brain, closeDB, err := openBrain(cfg, scheduler.Config{
		Name:        cfg.SchedulerName,
		BatchSize:   cfg.BatchSize,
		BatchIdle:   cfg.BatchWait,
		BurstLinger: cfg.BurstLinger,
		Speculate:   cfg.Speculate,
		Timeout:     cfg.SolverTimeout,

		ImprovementTimeout:                   cfg.SolverImprovementTimeout,
		UnplacedImprovementTimeout:           cfg.SolverUnplacedImprovementTimeout,
		GapLimit:                             cfg.SolverGapLimit,
		PreemptionImprovementTimeout:         cfg.PreemptionImprovementTimeout,
		PreemptionUnplacedImprovementTimeout: cfg.PreemptionUnplacedImprovementTimeout,
		NodeSample:                           cfg.NodeSample,
		GangReserveAfter:                     cfg.GangReserveAfter,
		Verify:                               cfg.Verify,

		DisabledPolicies: cfg.DisabledPolicies,
		Evictable:        func(p *scheduler.Pod) (bool, string) { return srv.evictable(p) }, // disruption.go
		DisruptionBudget: func(p *scheduler.Pod) (string, int64) { return srv.disruptionBudget(p) },
		// A placement the independent check rejects is left out of the batch, which keeps the rest (the check
		// is what guards the bindings; backing off the whole batch delayed up to BatchSize pods).
		DropRejected: true,
	}, log)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg: cfg, client: client, log: log,
		brain: brain, closeDB: closeDB, metrics: newMetrics(),
		inflight: map[string]string{}, backoff: map[string]*time.Timer{}, affine: map[string]bool{}, attempts: map[string]int{},
		nominated: map[string]*nomination{}, claimUsers: map[string]map[string]struct{}{}, refused: map[string]string{}, events: newEventQueue(),
		groups: map[string]podGroupView{}, groupAdmitted: map[string]bool{},
		binds: make(chan bindJob, 4*cfg.BatchSize), evicting: make(chan struct{}, evictWorkers),
	}
	s.factory = informers.NewSharedInformerFactory(client, 0)
	s.podLister = s.factory.Core().V1().Pods().Lister()
	s.nodeLister = s.factory.Core().V1().Nodes().Lister()
	s.pvLister = s.factory.Core().V1().PersistentVolumes().Lister()
	s.pvcLister = s.factory.Core().V1().PersistentVolumeClaims().Lister()
	s.scLister = s.factory.Storage().V1().StorageClasses().Lister()
	s.pdbLister = s.factory.Policy().V1().PodDisruptionBudgets().Lister()
	srv = s
	s.metrics.speculations(brain)
	s.broadcast = events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	s.recorder = s.broadcast.NewRecorder(scheme.Scheme, cfg.SchedulerName)
	return s, nil
}

// Client returns the replica's API client.
func (s *Server) Client() kubernetes.Interface { return s.client }

// Ready reports whether the informers have synced.
func (s *Server) Ready() bool { return s.synced.Load() }

// Leader reports whether this replica holds the Lease (always true without leader election once running).
func (s *Server) Leader() bool { return s.leader.Load() }

// Run runs the replica until ctx is cancelled or, with leader election, until it loses the Lease, or until
// it loses its state schema (scheduler.ErrStateLost: the PostgreSQL connection holding its lock is gone;
// restarted, the replica claims a schema again and rebuilds its state).
func (s *Server) Run(ctx context.Context) error {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	s.stop = stop
	err := s.run(ctx)
	if cause := context.Cause(ctx); errors.Is(cause, scheduler.ErrStateLost) {
		return cause
	}
	return err
}

func (s *Server) run(ctx context.Context) error {
	defer s.closeDB()
	defer s.brain.Close()
	defer s.events.wait() // after cancel, before the state closes
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopServing, err := s.serve(ctx) // serving.go
	if err != nil {
		return err
	}
	defer stopServing()
	s.broadcast.StartRecordingToSink(ctx.Done())
	defer s.broadcast.Shutdown()
	if err := s.startInformers(ctx); err != nil {
		return err
	}
	for i := 0; i < s.cfg.BindWorkers; i++ {
		go s.bindWorker(ctx)
	}
	if !s.cfg.LeaderElect {
		s.leader.Store(true)
		s.metrics.leader.Set(1)
		return s.scheduleLoop(ctx)
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: s.cfg.LeaseNamespace, Name: s.cfg.LeaseName},
		Client:     s.client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: s.cfg.Identity},
	}
	var loopErr error
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   s.cfg.LeaseDuration,
		RenewDeadline:   s.cfg.RenewDeadline,
		RetryPeriod:     s.cfg.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            s.cfg.LeaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				s.log.Info("became leader")
				s.leader.Store(true)
				s.metrics.leader.Set(1)
				loopErr = s.scheduleLoop(ctx)
			},
			OnStoppedLeading: func() {
				s.leader.Store(false)
				s.metrics.leader.Set(0)
				s.log.Info("stopped leading")
			},
			OnNewLeader: func(id string) { s.log.Info("leader", "holder", id) },
		},
	})
	if err != nil {
		return err
	}
	le.Run(ctx)
	if ctx.Err() != nil {
		return nil
	}
	if loopErr != nil && !errors.Is(loopErr, context.Canceled) {
		return loopErr
	}
	return errors.New("lost the leader lease")
}

// --- informers -> state ---

func (s *Server) startInformers(ctx context.Context) error {
	s.events.start(ctx)
	// What converting a pod reads is synced before the pods: its claims, their volumes and storage classes,
	// the namespaces (namespace selectors) and the PodGroups. Started together, a pod could be converted
	// before the claim informer held its claim, and was reported "persistentvolumeclaim not found" at
	// start-up although the claim existed (TestVolumePlugins, about 1 run in 10 on a loaded machine).
	vols, err := s.volumeInformers()
	if err != nil {
		return err
	}
	namespaces, err := s.namespaceInformer()
	if err != nil {
		return err
	}
	first := append([]cache.SharedIndexInformer{namespaces}, vols...)
	groups, err := s.podGroupInformer() // nil where PodGroups are not served
	if err != nil {
		return err
	}
	if groups != nil {
		first = append(first, groups)
	}
	if err := s.syncInformers(ctx, first); err != nil {
		return err
	}
	nodes := s.factory.Core().V1().Nodes().Informer()
	pods := s.factory.Core().V1().Pods().Informer()
	regNodes, err := nodes.AddEventHandler(s.events.queued(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { s.nodeChanged(nil, obj.(*v1.Node)) },
		UpdateFunc: func(old, obj any) {
			s.nodeChanged(old.(*v1.Node), obj.(*v1.Node))
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if n, ok := obj.(*v1.Node); ok {
				s.must("delete node", s.brain.DeleteNode(context.Background(), n.Name))
			}
		},
	}))
	if err != nil {
		return err
	}
	regPods, err := pods.AddEventHandler(s.events.queued(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.podChanged(nil, obj.(*v1.Pod)) },
		UpdateFunc: func(old, obj any) { s.podChanged(old.(*v1.Pod), obj.(*v1.Pod)) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if p, ok := obj.(*v1.Pod); ok {
				s.podDeleted(p)
			}
		},
	}))
	if err != nil {
		return err
	}
	s.handlersSynced = append(s.handlersSynced, regNodes.HasSynced, regPods.HasSynced)
	if err := s.syncInformers(ctx, []cache.SharedIndexInformer{nodes, pods}); err != nil {
		return err
	}
	s.synced.Store(true)
	s.log.Info("informers synced")
	return nil
}

// syncInformers starts the informers created so far (infs among them) and waits until their caches are
// filled, every registered handler has seen its initial list, and the event queue has applied it.
func (s *Server) syncInformers(ctx context.Context, infs []cache.SharedIndexInformer) error {
	// A watch error is logged and the reflector relists (then the handlers see every object again: the state
	// converges to the fresh list).
	for _, inf := range infs {
		_ = inf.SetWatchErrorHandler(func(r *cache.Reflector, err error) {
			s.log.Warn("watch interrupted; relisting", "error", err)
		})
	}
	s.factory.Start(ctx.Done())
	for typ, ok := range s.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer %v did not sync", typ)
		}
	}
	// The caches are filled before the handlers have seen every object of the initial lists: wait for the
	// handlers too, or the first batch may solve on a state without some bound pods (and place pods on
	// nodes that are full).
	if !cache.WaitForCacheSync(ctx.Done(), s.handlersSynced...) {
		return fmt.Errorf("informer handlers did not sync")
	}
	for s.events.pending.Load() > 0 && ctx.Err() == nil { // and for the queue to apply them
		time.Sleep(time.Millisecond)
	}
	return nil
}

func (s *Server) must(what string, err error) {
	if err != nil {
		s.log.Error("state update failed", "op", what, "error", err)
		s.stateLost(err)
	}
}

// stateLost stops the replica when its state schema is lost: its state can no longer be kept current.
func (s *Server) stateLost(err error) bool {
	if !errors.Is(err, scheduler.ErrStateLost) {
		return false
	}
	if s.stop != nil {
		s.stop(err)
	}
	return true
}

func (s *Server) nodeChanged(old, n *v1.Node) {
	nn := toNode(n)
	if old != nil && reflect.DeepEqual(toNode(old), nn) {
		return // heartbeat: nothing the policies read changed
	}
	s.must("upsert node", s.brain.UpsertNode(context.Background(), nn))
	// A new or changed node may make room for pods that were unschedulable: retry them now.
	s.flushBackoff()
}

func terminal(p *v1.Pod) bool {
	return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
}

func (s *Server) ours(p *v1.Pod) bool { return p.Spec.SchedulerName == s.cfg.SchedulerName }

func (s *Server) podChanged(old, p *v1.Pod) {
	key := podKey(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.Spec.NodeName == "" {
		if !s.ours(p) {
			return // another scheduler's pending pod takes no resources
		}
		if p.DeletionTimestamp != nil || terminal(p) {
			s.dropNominationLocked(key)
			s.must("delete pod", s.brain.DeletePod(context.Background(), key))
			return
		}
		if _, ok := s.backoff[key]; ok {
			return // re-read from the lister when its backoff ends
		}
		node, ok := s.inflight[key]
		if nom := s.nominated[key]; nom != nil && !ok {
			node, ok = nom.node, true
		}
		if ok {
			// The binding is under way, or the pod waits for its victims: keep it assumed on its node.
			sp := toPod(p)
			sp.NodeName = node
			s.must("upsert pod", s.brain.UpsertPod(context.Background(), sp))
			return
		}
		if old != nil && old.Spec.NodeName == "" && reflect.DeepEqual(old.Labels, p.Labels) && reflect.DeepEqual(old.Spec, p.Spec) {
			return // a status change (our own condition patch): nothing to re-place
		}
		if sp, ok := s.pendingPodLocked(p); ok {
			if old == nil && s.placeAheadLocked(p, sp) { // ahead.go
				return
			}
			s.must("upsert pod", s.brain.UpsertPod(context.Background(), sp))
		}
		return
	}
	s.must("upsert pod", s.brain.UpsertPod(context.Background(), toPod(p)))
	if p.Spec.NodeName != "" && terminal(p) {
		s.victimGoneLocked(key) // a finished pod frees its node like a deleted one
		s.requeueAfterGoneLocked(p)
		return
	}
	s.requeueAfterBoundLocked(old, p) // hints.go
}

func (s *Server) podDeleted(p *v1.Pod) {
	key := podKey(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.backoff[key]; ok {
		t.Stop()
		delete(s.backoff, key)
	}
	delete(s.affine, key)
	delete(s.attempts, key)
	delete(s.refused, key)
	s.forgetClaimsLocked(key, p.Namespace, podClaims(p))
	s.dropNominationLocked(key)
	s.must("delete pod", s.brain.DeletePod(context.Background(), key))
	s.victimGoneLocked(key)
	s.requeueAfterGoneLocked(p) // hints.go
}

// --- backoff ---

// backOff takes a pod out of the queue and brings it back after its delay (exponential per pod).
func (s *Server) backOff(p *v1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.backOffLocked(podKey(p))
}

func (s *Server) backOffLocked(key string) {
	if t := s.backoff[key]; t != nil {
		t.Stop()
	}
	delete(s.inflight, key)
	s.dropNominationLocked(key)
	s.attempts[key]++
	delay := s.cfg.InitialBackoff << min(s.attempts[key]-1, 16)
	if delay > s.cfg.MaxBackoff || delay <= 0 {
		delay = s.cfg.MaxBackoff
	}
	s.holdLocked(key, delay)
}

// park keeps a pending pod out of the queue for InitialBackoff without counting a failed attempt: a
// preemption plan placed other pods, and this one waits for the next round. Meanwhile the loop does not
// solve it again and again: each solve and each preemption plan holds the state's lock (PreemptPods for
// seconds at 500 nodes), and the informer's handlers, which apply one event per lock, fell behind (15 of
// 500 PreemptionBasic pods bound in 93 s, the victims' deletions queued behind the plans).
func (s *Server) park(p *v1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := podKey(p)
	if t := s.backoff[key]; t != nil {
		t.Stop()
	}
	s.holdLocked(key, s.cfg.InitialBackoff)
}

// holdLocked takes a pod out of the state until delay has passed; it is then read again from the lister.
func (s *Server) holdLocked(key string, delay time.Duration) {
	s.must("delete pod", s.brain.DeletePod(context.Background(), key))
	s.noteAffineLocked(key) // hints.go
	s.backoff[key] = time.AfterFunc(delay, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.backoff[key]; ok {
			s.requeueLocked(key)
		}
	})
}

// requeueLocked ends a pod's backoff: the pod is read again from the lister.
func (s *Server) requeueLocked(key string) {
	if t := s.backoff[key]; t != nil {
		t.Stop()
	}
	delete(s.backoff, key)
	delete(s.affine, key)
	ns, name, _ := strings.Cut(key, "/")
	p, err := s.podLister.Pods(ns).Get(name)
	if err != nil {
		delete(s.attempts, key)
		return
	}
	if p.Spec.NodeName == "" && p.DeletionTimestamp == nil && !terminal(p) {
		if sp, ok := s.pendingPodLocked(p); ok {
			s.must("upsert pod", s.brain.UpsertPod(context.Background(), sp))
		}
	}
}

// flushBackoff requeues every backed-off pod (the cluster changed).
func (s *Server) flushBackoff() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key := range s.backoff {
		s.requeueLocked(key)
	}
}

// HasPod and HasNode report whether the replica's informers currently see the object.
func (s *Server) HasPod(ns, name string) bool {
	_, err := s.podLister.Pods(ns).Get(name)
	return err == nil
}

func (s *Server) HasNode(name string) bool {
	_, err := s.nodeLister.Get(name)
	return err == nil
}

// Metrics returns the Prometheus registry's text exposition (tests and diagnostics).
func (s *Server) Metrics() http.Handler {
	return promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{})
}
