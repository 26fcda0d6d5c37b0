package scheduler

import (
	"context"
	"testing"
)

// checkAfter sees the state as a solution would leave it (the batch's pods
// on their nodes, evicted victims gone) and leaves the scheduler's state
// as it found it: it changes the state in place for the check and
// restores it.
func TestCheckAfterSeesTheSolutionAndRestoresTheState(t *testing.T) {
	ctx := context.Background()
	s := newTest(t, Config{})
	addNodes(t, s, Node{Name: "n1", CPU: 1000, Memory: 4000}, Node{Name: "n2", CPU: 1000, Memory: 4000})
	pods := []Pod{
		{Name: "victim", NodeName: "n1", CPU: 500, Memory: 100, Phase: PhaseRunning},
		{Name: "a", CPU: 800, Memory: 100},
		{Name: "b", CPU: 800, Memory: 100},
	}
	for _, p := range pods {
		if err := s.UpsertPod(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	a, b, victim := s.state.Pods["a"], s.state.Pods["b"], s.state.Pods["victim"]
	cases := []struct {
		name    string
		victims []*Pod
		placed  map[string]string
		ok      bool
	}{
		{"a pod on each node but the victim's: fits", nil, map[string]string{"a": "n2", "b": ""}, true},
		{"two 800 m pods on one 1,000 m node do not fit", nil, map[string]string{"a": "n2", "b": "n2"}, false},
		{"an 800 m pod beside the 500 m victim does not fit", []*Pod{victim}, map[string]string{"a": "n1", "b": "n2", "victim": "n1"}, false},
		{"it fits once the victim is evicted", []*Pod{victim}, map[string]string{"a": "n1", "b": "n2"}, true},
	}
	for _, c := range cases {
		err := s.checkAfter([]*Pod{a, b}, c.victims, c.placed)
		if (err == nil) != c.ok {
			t.Errorf("%s: check says %v", c.name, err)
		}
		if len(s.state.Pods) != 3 || s.state.Pods["a"] != a || s.state.Pods["b"] != b || s.state.Pods["victim"] != victim {
			t.Fatalf("%s: the state's pods were not restored: %v", c.name, s.state.Pods)
		}
		if a.NodeName != "" || b.NodeName != "" || victim.NodeName != "n1" {
			t.Fatalf("%s: a pod of the state was changed: a on %q, b on %q, victim on %q", c.name, a.NodeName, b.NodeName, victim.NodeName)
		}
	}
}
