package app

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestDeployRBAC: deploy/rbac.yaml's ClusterRole grants what the scheduler calls, preemption and volume
// zones included, and no write access to pods themselves.
func TestDeployRBAC(t *testing.T) {
	data, err := os.ReadFile("../../../deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type rule struct {
		APIGroups []string `json:"apiGroups"`
		Resources []string `json:"resources"`
		Verbs     []string `json:"verbs"`
	}
	granted := map[string]bool{}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var obj struct {
			Kind  string `json:"kind"`
			Rules []rule `json:"rules"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		if obj.Kind != "ClusterRole" {
			continue
		}
		for _, r := range obj.Rules {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					granted[res+" "+v] = true
				}
			}
		}
	}
	for _, want := range []string{"pods watch", "nodes list", "namespaces watch", "namespaces list", "persistentvolumes watch", "persistentvolumeclaims list", "storageclasses watch",
		"pods/binding create", "pods/eviction create", "pods/status patch",
		"podgroups watch", "podgroups get", "podgroups/status update"} {
		if !granted[want] {
			t.Errorf("the ClusterRole does not grant %s", want)
		}
	}
	for _, never := range []string{"pods delete", "pods update", "pods patch", "pods create"} {
		if granted[never] {
			t.Errorf("the ClusterRole grants %s", never)
		}
	}
}

// TestDeployGCSettings: deploy/deployment.yaml runs weave-scheduler with a less frequent collector
// (GOGC above the default 100) and a soft memory limit (GOMEMLIMIT) that the runtime accepts and that
// stays below the container's memory limit, so that the collector works harder before the kernel kills.
func TestDeployGCSettings(t *testing.T) {
	data, err := os.ReadFile("../../../deploy/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var dep struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Name string `json:"name"`
						Env  []struct {
							Name  string `json:"name"`
							Value string `json:"value"`
						} `json:"env"`
						Resources struct {
							Limits map[string]string `json:"limits"`
						} `json:"resources"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &dep); err != nil {
		t.Fatal(err)
	}
	cs := dep.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("%d containers", len(cs))
	}
	env := map[string]string{}
	for _, e := range cs[0].Env {
		env[e.Name] = e.Value
	}
	if gogc, err := strconv.Atoi(env["GOGC"]); err != nil || gogc <= 100 {
		t.Errorf("GOGC %q: want a number above the default 100", env["GOGC"])
	}
	soft, err := bytesOf(env["GOMEMLIMIT"])
	if err != nil {
		t.Fatalf("GOMEMLIMIT: %v", err)
	}
	hard, err := bytesOf(cs[0].Resources.Limits["memory"])
	if err != nil {
		t.Fatalf("memory limit: %v", err)
	}
	if soft >= hard {
		t.Errorf("GOMEMLIMIT %s is not below the container's limit %s", env["GOMEMLIMIT"], cs[0].Resources.Limits["memory"])
	}
}

// bytesOf reads a size the Go runtime (GOMEMLIMIT) and Kubernetes both write with binary suffixes
// (900MiB, 1Gi).
func bytesOf(s string) (int64, error) {
	for _, u := range []struct {
		suffix string
		mul    int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			n, err := strconv.ParseInt(strings.TrimSuffix(s, u.suffix), 10, 64)
			return n * u.mul, err
		}
	}
	return 0, fmt.Errorf("%q: no binary size suffix", s)
}

// TestDeploySecurePort: deploy/ serves and probes the HTTPS port (DefaultSecurePort) as kube-scheduler's,
// annotates it for Prometheus, and grants what its delegated authentication and authorization need:
// TokenReviews and SubjectAccessReviews (system:auth-delegator), the client CAs of
// kube-system/extension-apiserver-authentication, and a ClusterRole a scraper is bound to for /metrics.
func TestDeploySecurePort(t *testing.T) {
	data, err := os.ReadFile("../../../deploy/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type probe struct {
		HTTPGet struct {
			Path   string `json:"path"`
			Port   string `json:"port"`
			Scheme string `json:"scheme"`
		} `json:"httpGet"`
	}
	var dep struct {
		Spec struct {
			Template struct {
				Metadata struct {
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
				Spec struct {
					Containers []struct {
						Args  []string `json:"args"`
						Ports []struct {
							Name          string `json:"name"`
							ContainerPort int    `json:"containerPort"`
						} `json:"ports"`
						LivenessProbe  probe `json:"livenessProbe"`
						ReadinessProbe probe `json:"readinessProbe"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &dep); err != nil {
		t.Fatal(err)
	}
	c := dep.Spec.Template.Spec.Containers[0]
	port := ""
	for _, p := range c.Ports {
		if p.ContainerPort == DefaultSecurePort {
			port = p.Name
		}
	}
	if port == "" {
		t.Fatalf("no container port %d in %+v", DefaultSecurePort, c.Ports)
	}
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--secure-port") || strings.HasPrefix(a, "--bind-address") {
			t.Errorf("argument %s: the manifest is written for the default port", a)
		}
	}
	for name, p := range map[string]probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		g := p.HTTPGet
		if g.Port != port || g.Scheme != "HTTPS" || (g.Path != "/healthz" && g.Path != "/readyz" && g.Path != "/livez") {
			t.Errorf("%s probe %+v: want an always-allowed path on port %s, scheme HTTPS", name, g, port)
		}
	}
	a := dep.Spec.Template.Metadata.Annotations
	if a["prometheus.io/port"] != strconv.Itoa(DefaultSecurePort) || a["prometheus.io/scheme"] != "https" || a["prometheus.io/scrape"] != "true" {
		t.Errorf("Prometheus annotations %v: want port %d, scheme https", a, DefaultSecurePort)
	}

	data, err = os.ReadFile("../../../deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type ref struct {
		Kind      string `json:"kind"`
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	}
	found := map[string]bool{}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata ref    `json:"metadata"`
			RoleRef  ref    `json:"roleRef"`
			Subjects []ref  `json:"subjects"`
			Rules    []struct {
				NonResourceURLs []string `json:"nonResourceURLs"`
				Verbs           []string `json:"verbs"`
			} `json:"rules"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		sa := len(obj.Subjects) == 1 && obj.Subjects[0] == ref{"ServiceAccount", "weave-scheduler", "kube-system"}
		switch {
		case obj.Kind == "ClusterRoleBinding" && obj.RoleRef.Kind == "ClusterRole" && obj.RoleRef.Name == "system:auth-delegator" && sa:
			found["auth-delegator"] = true
		case obj.Kind == "RoleBinding" && obj.Metadata.Namespace == "kube-system" && obj.RoleRef.Kind == "Role" &&
			obj.RoleRef.Name == "extension-apiserver-authentication-reader" && sa:
			found["authentication-reader"] = true
		case obj.Kind == "ClusterRole":
			for _, r := range obj.Rules {
				if fmt.Sprint(r.NonResourceURLs) == "[/metrics]" && fmt.Sprint(r.Verbs) == "[get]" {
					found["metrics-reader"] = true
				}
				if fmt.Sprint(r.NonResourceURLs) == "[/explain/*]" && fmt.Sprint(r.Verbs) == "[get]" {
					found["explain-reader"] = true
				}
			}
		}
	}
	for _, want := range []string{"auth-delegator", "authentication-reader", "metrics-reader", "explain-reader"} {
		if !found[want] {
			t.Errorf("rbac.yaml: no %s", want)
		}
	}
}
