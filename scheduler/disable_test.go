package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/weavesql/weave"
)

// Every policy that may be disabled can be, alone, in both models: no other
// file depends on its views.
func TestDisableEachPolicyCompiles(t *testing.T) {
	t.Parallel()
	for _, id := range PolicyIDs() {
		if isRequired(id) {
			continue
		}
		for _, k := range []ModelKind{Placement, Preemption} {
			src, err := ModelSQL(k, []string{id})
			if err != nil {
				t.Fatalf("%s %s: %v", k, id, err)
			}
			if _, err := weave.Compile(src, CompileOptions()...); err != nil {
				t.Fatalf("%s without %s: %v", k, id, err)
			}
		}
	}
}

func isRequired(id string) bool {
	for _, r := range RequiredPolicies {
		if r == id {
			return true
		}
	}
	return false
}

func TestDisabledPolicyErrors(t *testing.T) {
	_, err := New(Config{DisabledPolicies: []string{"S9", "S99"}})
	if err == nil || !strings.Contains(err.Error(), `"S99"`) || !strings.Contains(err.Error(), "H1, H2") || !strings.Contains(err.Error(), "S9") {
		t.Fatalf("unknown policy: %v", err)
	}
	for _, id := range RequiredPolicies {
		_, err := New(Config{DisabledPolicies: []string{id}})
		if err == nil || !strings.Contains(err.Error(), id+" cannot be disabled") {
			t.Fatalf("%s: %v", id, err)
		}
	}
	if err := CheckDisabled([]string{"s9", " n1 ", ""}); err != nil {
		t.Fatal(err)
	}
	src, _ := ModelSQL(Placement, []string{"H14"})
	if strings.Contains(src, "h14") {
		t.Fatal("H14 disabled but one of its files is in the model")
	}
}

// S9 (image locality) decides the node: the pod goes where its image is,
// though the other node is emptier; without S9 it goes to the emptier one.
// (N4, which would keep one of the two empty nodes free, is off.)
func TestDisabledSoftPolicy(t *testing.T) {
	for _, off := range []bool{false, true} {
		// The scores differ by a few points, below the default GapLimit (50), and the search of two nodes
		// ends at once when it is exhausted: without the gap limit and with a long improvement wait the
		// batch ends at the optimum, not at its first placement (worst fit: big), where it ended under
		// -race in CI.
		cfg := Config{DisabledPolicies: []string{"N4"}, GapLimit: -1, ImprovementTimeout: time.Second}
		if off {
			cfg.DisabledPolicies = []string{"N4", "S9"}
		}
		s := newTest(t, cfg)
		addNodes(t, s,
			Node{Name: "big", CPU: 4400, Memory: 8400},
			Node{Name: "small", CPU: 4000, Memory: 8000, Images: map[string]int64{"app:1": 20000}})
		addPods(t, s, Pod{Name: "p", CPU: 1000, Memory: 1000, Images: []string{"app:1"}})
		placed, _ := schedule(t, s)
		want := "small"
		if off {
			want = "big"
		}
		if placed["p"] != want {
			t.Fatalf("S9 disabled %v: placed %v, want %s", off, placed, want)
		}
	}
}

// A disabled hard policy no longer restricts: H12 (node selector) and H5
// (capacity) forbid the only node; disabled, the pod is placed there, and
// the independent check agrees.
func TestDisabledHardPolicy(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"H12", "H5"} {
		for _, off := range []bool{false, true} {
			cfg := Config{}
			if off {
				cfg.DisabledPolicies = []string{id}
			}
			s := newTest(t, cfg)
			addNodes(t, s, Node{Name: "n1", CPU: 4000, Memory: 8000, Labels: map[string]string{"disk": "hdd"}})
			p := Pod{Name: "p", CPU: 1000, Memory: 1000}
			if id == "H12" {
				p.NodeSelector = map[string]string{"disk": "ssd"}
			} else {
				p.CPU = 6000
			}
			addPods(t, s, p)
			placed, us := schedule(t, s)
			if off && placed["p"] != "n1" || !off && (len(placed) != 0 || len(us) != 1) {
				t.Fatalf("%s disabled %v: placed %v, unschedulable %v", id, off, placed, us)
			}
			st := s.PolicyState()
			q := *st.Pods["p"]
			q.NodeName = ""
			if got := st.FeasibleNodes(&q); off != (len(got) == 1) {
				t.Fatalf("%s disabled %v: feasible %v", id, off, got)
			}
		}
	}
}
