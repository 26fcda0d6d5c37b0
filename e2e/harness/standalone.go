package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"sync"
	"testing"

	"github.com/google/uuid"
	"k8s.io/apiserver/pkg/storage/etcd3/testserver"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
)

// StartCluster runs etcd and kube-apiserver in-process outside a test (a command such as weave-bench): it
// returns the cluster and a function that tears both down. logf receives the servers' test logs (nil
// discards them).
func StartCluster(ctx context.Context, logf func(format string, args ...any)) (c *Cluster, stop func(), err error) {
	return StartClusterWith(ctx, logf, Options{})
}

// StartClusterWith is StartCluster with options (feature gates, runtime config); the feature gates are
// restored by stop.
func StartClusterWith(ctx context.Context, logf func(format string, args ...any), o Options) (c *Cluster, stop func(), err error) {
	if err := o.validate(); err != nil {
		return nil, nil, err
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	dir, err := os.MkdirTemp("", "weave-harness-")
	if err != nil {
		return nil, nil, err
	}
	t := &standaloneTB{name: "weave-harness", logf: logf, dir: dir}
	stop = func() {
		t.cleanup()
		os.RemoveAll(dir)
	}
	// The test helpers report a failure with Fatal, which ends a test's goroutine; here it panics with
	// fatalError, recovered below.
	defer func() {
		if r := recover(); r != nil {
			fe, ok := r.(fatalError)
			if !ok {
				panic(r)
			}
			stop()
			c, stop, err = nil, nil, fmt.Errorf("harness: start the API server: %s", string(fe))
		}
	}()
	flags, err := o.apply(t)
	if err != nil {
		stop()
		return nil, nil, err
	}
	etcdClient := testserver.RunEtcd(t, testserver.NewTestConfig(t))
	storage := storagebackend.NewDefaultConfig(path.Join(uuid.New().String(), "registry"), nil)
	storage.Transport.ServerList = etcdClient.Endpoints()
	server, err := kubeapiservertesting.StartTestServer(t, nil, flags, storage)
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("harness: start the API server: %w", err)
	}
	t.Cleanup(server.TearDownFn)
	cfg := rest.CopyConfig(server.ClientConfig)
	cfg.QPS, cfg.Burst = 10000, 20000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		stop()
		return nil, nil, err
	}
	return &Cluster{Config: cfg, Client: client}, stop, nil
}

type fatalError string

// standaloneTB is the testing.TB the upstream test servers are started with outside a test. The embedded
// interface is nil: it only supplies testing.TB's unexported method; every method the servers call is
// defined here.
type standaloneTB struct {
	testing.TB
	name string
	logf func(format string, args ...any)
	dir  string

	mu       sync.Mutex
	cleanups []func()
	failed   bool
	tmp      int
	done     bool
}

func (t *standaloneTB) Helper()      {}
func (t *standaloneTB) Name() string { return t.name }

func (t *standaloneTB) Log(args ...any) { t.Logf("%s", fmt.Sprint(args...)) }

func (t *standaloneTB) Logf(format string, args ...any) {
	t.mu.Lock()
	done := t.done
	t.mu.Unlock()
	if !done {
		t.logf(format, args...)
	}
}

func (t *standaloneTB) Error(args ...any) { t.Errorf("%s", fmt.Sprint(args...)) }

func (t *standaloneTB) Errorf(format string, args ...any) {
	t.Logf("ERROR: "+format, args...)
	t.Fail()
}

func (t *standaloneTB) Fail() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failed = true
}

func (t *standaloneTB) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

func (t *standaloneTB) FailNow() {
	t.Fail()
	panic(fatalError("failed"))
}

func (t *standaloneTB) Fatal(args ...any) { t.Fatalf("%s", fmt.Sprint(args...)) }

func (t *standaloneTB) Fatalf(format string, args ...any) {
	t.Fail()
	msg := fmt.Sprintf(format, args...)
	t.Logf("FATAL: %s", msg)
	panic(fatalError(msg))
}

func (t *standaloneTB) Skip(args ...any)                 { t.Fatal(args...) }
func (t *standaloneTB) Skipf(format string, args ...any) { t.Fatalf(format, args...) }
func (t *standaloneTB) SkipNow()                         { t.FailNow() }
func (t *standaloneTB) Skipped() bool                    { return false }
func (t *standaloneTB) Setenv(key, value string)         { os.Setenv(key, value) }
func (t *standaloneTB) Chdir(string)                     { t.Fatal("Chdir is not supported") }
func (t *standaloneTB) Context() context.Context         { return context.Background() }
func (t *standaloneTB) Attr(string, string)              {}
func (t *standaloneTB) Output() io.Writer                { return io.Discard }

func (t *standaloneTB) TempDir() string {
	t.mu.Lock()
	t.tmp++
	n := t.tmp
	t.mu.Unlock()
	d := path.Join(t.dir, fmt.Sprint(n))
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}

func (t *standaloneTB) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

// cleanup runs the cleanups in reverse order, then silences the logs.
func (t *standaloneTB) cleanup() {
	t.mu.Lock()
	fs := t.cleanups
	t.cleanups = nil
	t.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		func() {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(fatalError); !ok {
						panic(r)
					}
				}
			}()
			fs[i]()
		}()
	}
	t.mu.Lock()
	t.done = true
	t.mu.Unlock()
	runtime.GC()
}
