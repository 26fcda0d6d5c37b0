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
		"pods/binding create", "pods/eviction create", "pods/status patch"} {
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
