package scheduler

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestDropRejectedKeepsTheRestOfTheBatch: with Config.DropRejected, pods
// the independent check rejects are left unplaced, the others are checked
// again (a pod that relied on a dropped one is dropped in turn) and bound,
// where without it the whole batch fails with ErrCheck. The disagreement
// is made by a taint on n1 that only the check sees (the state in memory,
// not the database the model reads): a is rejected on n1, c, which
// tolerates it, loses its affinity to a, and b on n2 stays.
func TestDropRejectedKeepsTheRestOfTheBatch(t *testing.T) {
	t.Parallel()
	for _, d := range raceDBs(stateDBs()) {
		for _, drop := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/DropRejected=%v", d.name, drop), func(t *testing.T) {
				s := newOn(t, d, Config{DropRejected: drop})
				addNodes(t, s, Node{Name: "n1", CPU: 4000, Memory: 4000}, Node{Name: "n2", CPU: 4000, Memory: 4000})
				only := func(n string) map[string]string { return map[string]string{LabelHostname: n} }
				addPods(t, s,
					Pod{Name: "a", Labels: map[string]string{"app": "a"}, NodeSelector: only("n1"), CPU: 100},
					Pod{Name: "b", NodeSelector: only("n2"), CPU: 100},
					Pod{Name: "c", CPU: 100, Tolerations: []Toleration{{Key: "hidden", Operator: "Exists"}},
						Affinity: []PodAffinityTerm{{Required: true, Selector: SelectLabels(map[string]string{"app": "a"}), TopologyKey: LabelHostname}}})
				s.mu.Lock()
				s.state.Nodes["n1"].Taints = []Taint{{Key: "hidden", Effect: "NoSchedule"}}
				s.mu.Unlock()
				bs, us, err := s.ScheduleBatch(context.Background())
				if !drop {
					if !errors.Is(err, ErrCheck) {
						t.Fatalf("bindings %v, unschedulable %v, error %v; want ErrCheck", bs, us, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if want := []Binding{{Pod: "b", Node: "n2"}}; !reflect.DeepEqual(bs, want) {
					t.Errorf("bindings %v, want %v", bs, want)
				}
				reasons := map[string]string{}
				for _, u := range us {
					reasons[u.Pod] = u.Reason
				}
				for pod, fault := range map[string]string{"a": "a on n1: H10", "c": "c on n1: H14 affinity unmet"} {
					if want := ReasonCheckRejected + ": " + fault; !strings.HasPrefix(reasons[pod], want) {
						t.Errorf("%s: reason %q, want it to begin %q", pod, reasons[pod], want)
					}
				}
				if len(us) != 2 {
					t.Errorf("unschedulable %v, want a and c", us)
				}
				if st := s.State(); st.Pods["a"].NodeName != "" || st.Pods["c"].NodeName != "" || st.Pods["b"].NodeName != "n2" {
					t.Errorf("state after the batch: a on %q, b on %q, c on %q", st.Pods["a"].NodeName, st.Pods["b"].NodeName, st.Pods["c"].NodeName)
				}
			})
		}
	}
}
