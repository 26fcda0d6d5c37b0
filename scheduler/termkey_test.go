package scheduler

import "testing"

// termKey names a node-affinity term by what it requires: the order of
// requirements and of In values does not matter, anything else does.
func TestTermKey(t *testing.T) {
	a := []NodeRequirement{{Key: "zone", Operator: "In", Values: []string{"z0", "z1"}}, {Key: "gpu", Operator: "Exists"}}
	same := []NodeRequirement{{Key: "gpu", Operator: "Exists"}, {Key: "zone", Operator: "In", Values: []string{"z1", "z0", "z1"}}}
	if termKey(a) != termKey(same) {
		t.Errorf("reordered requirements and values give another key")
	}
	for name, other := range map[string][]NodeRequirement{
		"another value":          {{Key: "zone", Operator: "In", Values: []string{"z0", "z2"}}, {Key: "gpu", Operator: "Exists"}},
		"another operator":       {{Key: "zone", Operator: "NotIn", Values: []string{"z0", "z1"}}, {Key: "gpu", Operator: "Exists"}},
		"a requirement less":     {{Key: "zone", Operator: "In", Values: []string{"z0", "z1"}}},
		"values split otherwise": {{Key: "zone", Operator: "In", Values: []string{"z0z1"}}, {Key: "gpu", Operator: "Exists"}},
	} {
		if termKey(other) == termKey(a) {
			t.Errorf("%s: same key", name)
		}
	}
}
