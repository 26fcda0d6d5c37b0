package harness

import (
	"slices"
	"strings"
	"testing"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	"k8s.io/kubernetes/pkg/features"
)

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want string // a part of the error; "" for none
	}{
		{"no options are upstream's defaults", Options{}, ""},
		{"the workload-aware scheduling gates together are accepted",
			Options{FeatureGates: map[string]bool{"GenericWorkload": true, "TopologyAwareWorkloadScheduling": true}}, ""},
		{"an unknown gate is refused by name",
			Options{FeatureGates: map[string]bool{"NoSuchGate": true}}, "unrecognized feature gate: NoSuchGate"},
		{"a gate without the gate it depends on is refused",
			Options{FeatureGates: map[string]bool{"TopologyAwareWorkloadScheduling": true}}, "depends on features that are disabled: [GenericWorkload]"},
		{"a gate locked to its default cannot be turned off",
			Options{FeatureGates: map[string]bool{"PLEGOnDemandRelist": false}}, "locked to true"},
		{"a runtime-config group/version is accepted",
			Options{RuntimeConfig: map[string]string{"scheduling.k8s.io/v1beta1": "true"}}, ""},
		{"a runtime-config entry without a value is refused",
			Options{RuntimeConfig: map[string]string{"scheduling.k8s.io/v1beta1": ""}}, `runtime config "scheduling.k8s.io/v1beta1"=""`},
		{"an authorization mode is accepted", Options{AuthorizationModes: []string{"Node", "RBAC"}}, ""},
		{"an authorization mode holding a second one is refused",
			Options{AuthorizationModes: []string{"Node,RBAC"}}, `authorization mode "Node,RBAC"`},
		{"a runtime-config key holding a second entry is refused",
			Options{RuntimeConfig: map[string]string{"a/v1=true,b/v1": "true"}}, `runtime config "a/v1=true,b/v1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case tc.want != "" && err == nil:
				t.Fatalf("no error, want one containing %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q, want one containing %q", err, tc.want)
			}
		})
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload) {
		t.Error("validate turned GenericWorkload on in the process")
	}
}

func TestOptionsApply(t *testing.T) {
	admission := "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition,Priority,StorageObjectInUseProtection"
	for _, tc := range []struct {
		name  string
		o     Options
		flags []string
	}{
		{"no options give upstream's flags", Options{},
			[]string{"--endpoint-reconciler-type=none", admission}},
		{"GenericWorkload serves scheduling.k8s.io/v1beta1 as upstream's InitTestAPIServer does",
			Options{FeatureGates: map[string]bool{"GenericWorkload": true}},
			[]string{"--endpoint-reconciler-type=none", admission, "--runtime-config=scheduling.k8s.io/v1beta1=true"}},
		{"an explicit runtime config wins over the one GenericWorkload implies",
			Options{FeatureGates: map[string]bool{"GenericWorkload": true}, RuntimeConfig: map[string]string{"scheduling.k8s.io/v1beta1": "false", "api/alpha": "true"}},
			[]string{"--endpoint-reconciler-type=none", admission, "--runtime-config=api/alpha=true,scheduling.k8s.io/v1beta1=false"}},
		{"authorization modes are the API server's --authorization-mode", Options{AuthorizationModes: []string{"Node", "RBAC"}},
			[]string{"--endpoint-reconciler-type=none", admission, "--authorization-mode=Node,RBAC"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flags, err := tc.o.apply(t)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(flags, tc.flags) {
				t.Errorf("flags\n%q\nwant\n%q", flags, tc.flags)
			}
			for g, v := range tc.o.FeatureGates {
				if got := utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(g)); got != v {
					t.Errorf("%s %v in the process, want %v", g, got, v)
				}
			}
		})
		if utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload) {
			t.Errorf("%s: GenericWorkload still on after the subtest", tc.name)
		}
	}
}

// The baseline weave-scheduler is held to is kube-scheduler v1.37.2 (issue 22): a change of the e2e module's
// k8s.io/kubernetes must be deliberate.
func TestKubernetesVersionIsTheBaseline(t *testing.T) {
	if got := KubernetesVersion(); got != "v1.37.2" {
		t.Errorf("k8s.io/kubernetes %s, want v1.37.2", got)
	}
}
