package app

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// failedScheduling waits for a pod's FailedScheduling event and its PodScheduled=False condition, and returns
// the event's message once both carry the same one.
func failedScheduling(t *testing.T, f *fakeAPI, ns, name string) string {
	t.Helper()
	var msg string
	eventually(t, "FailedScheduling of "+name, 20*time.Second, func() bool {
		p := f.pod(t, ns, name)
		for _, e := range f.events(ns, name) {
			if m, ok := strings.CutPrefix(e, "FailedScheduling: "); ok {
				for _, c := range p.Status.Conditions {
					if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Message == m {
						msg = m
						return true
					}
				}
			}
		}
		return false
	})
	return msg
}

// TestUnschedulableMessageCountsNodesPerReason: a pod that fits no node gets kube-scheduler's message for
// the same cluster, in its event and its PodScheduled=False condition: one node short of CPU, one tainted,
// one unschedulable. /explain/w/big serves the full explanation, one line per node; a pod the state lacks and
// a bound pod are 404 with what is wrong.
func TestUnschedulableMessageCountsNodesPerReason(t *testing.T) {
	tainted := testNode("n3", "8", "")
	tainted.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}}
	cordoned := testNode("n2", "8", "")
	cordoned.Spec.Unschedulable = true
	f := newFakeAPI(t, testNode("n1", "2", ""), cordoned, tainted, testPod("big", "4", 0, ""), testPod("small", "1", 0, "n1"))
	s := startFake(t, f, func(c *Config) { c.DisablePreemption = true })
	want := "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable."
	if got := failedScheduling(t, f, "w", "big"); got != want {
		t.Errorf("message %q\nwant %q", got, want)
	}

	h := s.endpoints(context.Background())
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/explain/w/big", nil))
	body := rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("/explain/w/big: %d %s", rec.Code, body)
	}
	for _, line := range []string{"pod w/big: " + want + "\n", "node n1: Insufficient cpu\n", "node n2: node(s) were unschedulable\n",
		"node n3: node(s) had untolerated taint(s)\n"} {
		if !strings.Contains(body, line) {
			t.Errorf("/explain/w/big lacks %q:\n%s", line, body)
		}
	}
	for path, wantErr := range map[string]string{"/explain/w/nope": "no such pod", "/explain/w/small": "not pending: bound to node n1", "/explain/w": "want NAMESPACE/POD"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 404 || !strings.Contains(rec.Body.String(), wantErr) {
			t.Errorf("%s: %d %q, want 404 naming %q", path, rec.Code, rec.Body.String(), wantErr)
		}
	}
	var ee *ExplainError
	if _, err := s.Explain("w", "nope"); !errors.As(err, &ee) || ee.Pod != "w/nope" {
		t.Errorf("Explain of a missing pod: %v, want an *ExplainError naming w/nope", err)
	}
}

// TestJointFailureNamesThePod: two pending pods each anti-affine to the other, one node: the batch places
// one; the other's message counts the node against pod anti-affinity, as kube-scheduler's would once the
// first is bound, and names the pod placed with it by the same batch. With preemption on (the default), the
// message ends as kube-scheduler's does, with "preemption: " and why none helps.
func TestJointFailureNamesThePod(t *testing.T) {
	solo := func(name string) *v1.Pod {
		p := testPod(name, "100m", 0, "")
		p.Labels = map[string]string{"app": "solo"}
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "solo"}}, TopologyKey: "kubernetes.io/hostname"}}}}
		return p
	}
	f := newFakeAPI(t, testNode("n1", "4", ""), solo("a"), solo("b"))
	startFake(t, f, nil)
	var placed, left string
	eventually(t, "one of the two bound", 20*time.Second, func() bool {
		a, b := f.pod(t, "w", "a"), f.pod(t, "w", "b")
		switch {
		case a.Spec.NodeName != "" && b.Spec.NodeName != "":
			t.Fatal("both anti-affine pods bound to n1")
		case a.Spec.NodeName != "":
			placed, left = "a", "b"
		case b.Spec.NodeName != "":
			placed, left = "b", "a"
		}
		return placed != ""
	})
	got := failedScheduling(t, f, "w", left)
	want := "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules. Weave: H14 pod anti-affinity with w/" + placed + " on n1. preemption: "
	if !strings.HasPrefix(got, want) {
		t.Errorf("message %q\nwant it to begin %q", got, want)
	}
}
