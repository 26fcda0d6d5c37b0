package app

import (
	"os"
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
	for _, want := range []string{"pods watch", "nodes list", "persistentvolumes watch", "persistentvolumeclaims list",
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
