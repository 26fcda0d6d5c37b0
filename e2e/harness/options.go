package harness

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/features"
)

// Options configures a cluster beyond upstream's test defaults; the zero value is those defaults.
type Options struct {
	// FeatureGates overrides Kubernetes feature gates, e.g. {"GenericWorkload": true,
	// "TopologyAwareWorkloadScheduling": true}. They are set on the process-wide gate
	// (k8s.io/apiserver/pkg/util/feature.DefaultMutableFeatureGate) before the API server starts, as
	// upstream's integration tests do (featuregatetesting.SetFeatureGatesDuringTest, then
	// test/integration/util.InitTestAPIServer): the API server copies that gate at its start and every
	// kube-scheduler started in this process reads it, so both run with the same gates. The previous values
	// come back when the test ends (StartClusterWith: when stop is called). Being process-wide, they
	// apply to anything else running in the process meanwhile: two clusters with different gates cannot
	// run at once.
	FeatureGates map[string]bool
	// RuntimeConfig is the API server's --runtime-config, API group/version → "true" or "false", e.g.
	// {"scheduling.k8s.io/v1beta1": "true"}. With GenericWorkload on, scheduling.k8s.io/v1beta1 (PodGroup,
	// Workload) is served unless set here, as InitTestAPIServer does.
	RuntimeConfig map[string]string
	// AuthorizationModes is the API server's --authorization-mode, e.g. {"RBAC"} for a test that needs
	// service accounts denied what no role grants them; empty: upstream's test default, AlwaysAllow.
	AuthorizationModes []string
}

// disabledAdmission are the admission plugins the API server runs without, upstream's list
// (test/integration/util.InitTestAPIServer, v1.37.2): no service accounts or token controller here,
// nodes tainted by no controller, pods given spec.priority directly (no PriorityClass needed), no PVC
// protection controller.
var disabledAdmission = []string{"ServiceAccount", "TaintNodesByCondition", "Priority", "StorageObjectInUseProtection"}

// validate checks the options without changing anything: every gate must be known, settable and have
// its dependencies on, every runtime-config entry a group/version and a value.
func (o Options) validate() error {
	if len(o.FeatureGates) > 0 {
		g := utilfeature.DefaultMutableFeatureGate.DeepCopy()
		if err := g.SetFromMap(o.FeatureGates); err != nil {
			return fmt.Errorf("harness: feature gates %s: %w", formatGates(o.FeatureGates), err)
		}
	}
	for k, v := range o.RuntimeConfig {
		if k == "" || strings.ContainsAny(k, "=, ") || v == "" || strings.ContainsAny(v, "=, ") {
			return fmt.Errorf("harness: runtime config %q=%q: want an API group/version (or api/all) and a value such as true", k, v)
		}
	}
	for _, m := range o.AuthorizationModes {
		if m == "" || strings.ContainsAny(m, "=, ") {
			return fmt.Errorf("harness: authorization mode %q: want one mode such as RBAC", m)
		}
	}
	return nil
}

// apply validates the options, sets the feature gates for t's lifetime and returns the API server's
// flags.
func (o Options) apply(t testing.TB) ([]string, error) {
	t.Helper()
	if err := o.validate(); err != nil {
		return nil, err
	}
	if len(o.FeatureGates) > 0 {
		overrides := featuregatetesting.FeatureOverrides{}
		for k, v := range o.FeatureGates {
			overrides[featuregate.Feature(k)] = v
		}
		featuregatetesting.SetFeatureGatesDuringTest(t, utilfeature.DefaultFeatureGate, overrides)
	}
	rc := map[string]string{}
	if utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload) {
		rc[schedulingv1beta1.SchemeGroupVersion.String()] = "true"
	}
	for k, v := range o.RuntimeConfig {
		rc[k] = v
	}
	flags := []string{
		"--endpoint-reconciler-type=none",
		"--disable-admission-plugins=" + strings.Join(disabledAdmission, ","),
	}
	if len(rc) > 0 {
		flags = append(flags, "--runtime-config="+formatMap(rc))
	}
	if len(o.AuthorizationModes) > 0 {
		flags = append(flags, "--authorization-mode="+strings.Join(o.AuthorizationModes, ","))
	}
	return flags, nil
}

func formatGates(m map[string]bool) string {
	s := map[string]string{}
	for k, v := range m {
		s[k] = fmt.Sprint(v)
	}
	return formatMap(s)
}

// formatMap writes m as k1=v1,k2=v2 in key order.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = k + "=" + m[k]
	}
	return strings.Join(keys, ",")
}
