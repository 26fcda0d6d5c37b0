package harness

import (
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"

	"k8s.io/kubernetes/pkg/scheduler"
)

// KubernetesVersion returns the version of the k8s.io/kubernetes module this binary was built with, that of
// the in-process kube-apiserver and kube-scheduler (e.g. "v1.37.2"); "unknown" if it cannot tell (a
// replacement by a local directory).
func KubernetesVersion() string {
	const mod = "k8s.io/kubernetes"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == mod {
				if d.Replace != nil {
					d = d.Replace
				}
				if d.Version != "" {
					return d.Version
				}
			}
		}
	}
	// A test binary's build information lists no dependencies; the module's source files, as the binary
	// names them, are under k8s.io/kubernetes@VERSION/ (in the module cache, or relative with -trimpath).
	file, _ := runtime.FuncForPC(reflect.ValueOf(scheduler.New).Pointer()).FileLine(reflect.ValueOf(scheduler.New).Pointer())
	if _, v, ok := strings.Cut(file, mod+"@"); ok {
		if v, _, ok := strings.Cut(v, "/"); ok {
			return v
		}
	}
	return "unknown"
}
