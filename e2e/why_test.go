package e2e

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weavesql/weave/e2e/harness"
)

// TestLiveWhyPending: "why is my pod pending?" on one live cluster where kube-scheduler v1.37.2 and
// weave-scheduler run side by side, each with its own namespace holding the same pods. Five nodes (two in
// zone a, three in zone b, one of those tainted and one cordoned) and pods bound directly (host-port holders
// on both zone-a nodes; in each namespace a pod app=db and two pods app=s on a zone-a node) make each pending
// pod fail for one kube-scheduler reason: CPU, node selector, taint, pod anti-affinity, topology spread (skew
// and missing label), host ports; the tainted and cordoned nodes add theirs to every message. Two pods
// anti-affine to each other (a joint failure) leave one pending once the other is bound. For every pod,
// weave-scheduler's PodScheduled=False message (the same as its FailedScheduling event) counts the same
// reasons on the same numbers of nodes as kube-scheduler's for its twin (the part before "preemption:"); for
// the joint pair it names the pod bound with it; and Server.Explain serves the per-node detail.
func TestLiveWhyPending(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t0 := time.Now()
	c := harness.Start(t)
	zone := func(z, pool string) map[string]string {
		return map[string]string{v1.LabelTopologyZone: z, "pool": pool, "region": "r1"}
	}
	spec := func(l map[string]string, taints ...v1.Taint) harness.NodeSpec {
		return harness.NodeSpec{CPU: "4", Memory: "8Gi", Pods: 110, Labels: l, Taints: taints}
	}
	for name, s := range map[string]harness.NodeSpec{
		"n-a1": spec(zone("a", "a")), "n-a2": spec(zone("a", "a")), "n-b1": spec(zone("b", "b")),
		"n-taint":  spec(zone("b", "b"), v1.Taint{Key: "dedicated", Value: "x", Effect: v1.TaintEffectNoSchedule}),
		"n-cordon": spec(zone("b", "b")),
	} {
		if err := c.CreateNode(ctx, name, s); err != nil {
			t.Fatal(err)
		}
	}
	n, err := c.Client.CoreV1().Nodes().Get(ctx, "n-cordon", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Spec.Unschedulable = true
	if _, err := c.Client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"why-fixture", "why-kube", "why-weave"} {
		if err := c.CreateNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	bound := func(ns, name, node string) *podBuilder {
		return makePod(ns, name, "").req("100m", "64Mi").with(func(p *v1.Pod) { p.Spec.NodeName = node })
	}
	hostPort := func(p *v1.Pod) {
		p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: v1.ProtocolTCP}}
	}
	fixtures := []*v1.Pod{bound("why-fixture", "holder-1", "n-a1").with(hostPort).obj(), bound("why-fixture", "holder-2", "n-a2").with(hostPort).obj()}
	for _, ns := range []string{"why-kube", "why-weave"} {
		fixtures = append(fixtures, bound(ns, "db", "n-a1").labels("app", "db").obj(),
			bound(ns, "s-1", "n-a1").labels("app", "s").obj(), bound(ns, "s-2", "n-a1").labels("app", "s").obj())
	}
	for _, p := range fixtures {
		if _, err := c.Client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	c.RunKubeScheduler(ctx, t)
	cfg := liveWeaveConfig("why")
	s, _, _ := startWeave(t, c, cfg, nil)
	t.Logf("cluster and both schedulers up in %v", time.Since(t0).Round(time.Millisecond))

	antiTo := func(app string) func(*v1.Pod) {
		return func(p *v1.Pod) {
			affinity(p).PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}, TopologyKey: "region"}}}
		}
	}
	spread := func(key string) func(*v1.Pod) {
		return func(p *v1.Pod) {
			ignore := v1.NodeInclusionPolicyIgnore
			p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: v1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "s"}}, NodeAffinityPolicy: &ignore}}
		}
	}
	selector := func(kv ...string) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Spec.NodeSelector = map[string]string{}
			for i := 0; i+1 < len(kv); i += 2 {
				p.Spec.NodeSelector[kv[i]] = kv[i+1]
			}
		}
	}
	none := func(*v1.Pod) {}
	cases := []struct {
		name   string
		labels []string
		cpu    string
		mod    func(*v1.Pod)
	}{
		{"cpu", nil, "16", none},
		{"selector", nil, "100m", selector("pool", "c")},
		{"taint", nil, "100m", selector("kubernetes.io/hostname", "n-taint")},
		{"anti", []string{"app", "web"}, "100m", antiTo("db")},
		{"spread", []string{"app", "s"}, "100m", func(p *v1.Pod) { selector(v1.LabelTopologyZone, "a")(p); spread(v1.LabelTopologyZone)(p) }},
		{"spread-label", []string{"app", "s"}, "100m", spread("rack")},
		{"ports", nil, "100m", func(p *v1.Pod) { selector("pool", "a")(p); hostPort(p) }},
		{"pair-1", []string{"app", "pair"}, "100m", antiTo("pair")},
		{"pair-2", []string{"app", "pair"}, "100m", antiTo("pair")},
	}
	schedulers := map[string]string{"why-kube": "", "why-weave": cfg.SchedulerName}
	var pods []*v1.Pod
	for _, ns := range []string{"why-kube", "why-weave"} {
		for _, cs := range cases {
			pods = append(pods, makePod(ns, cs.name, schedulers[ns]).labels(cs.labels...).req(cs.cpu, "64Mi").with(cs.mod).obj())
		}
	}
	if err := createPaced(ctx, c, pods, 0); err != nil {
		t.Fatal(err)
	}

	// Every pod but one of each pair stays pending with PodScheduled=False; wait for all the messages.
	msgs := map[string]string{} // namespace/name → the condition's message
	pairBound := map[string]string{}
	waitFor(t, "every pending pod's PodScheduled=False message", 45*time.Second, func() bool {
		for _, ns := range []string{"why-kube", "why-weave"} {
			l, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range l.Items {
				if p.Spec.NodeName != "" {
					if strings.HasPrefix(p.Name, "pair-") {
						pairBound[ns] = p.Name
					}
					continue
				}
				if cond := condition(&p, v1.PodScheduled); cond != nil && cond.Status == v1.ConditionFalse && cond.Reason == v1.PodReasonUnschedulable {
					msgs[ns+"/"+p.Name] = cond.Message
				}
			}
		}
		return len(msgs) == 2*(len(cases)-1) && len(pairBound) == 2
	})
	for _, cs := range cases {
		if strings.HasPrefix(cs.name, "pair-") {
			continue
		}
		compareWhy(t, cs.name, msgs["why-kube/"+cs.name], msgs["why-weave/"+cs.name])
	}
	left := map[string]string{"pair-1": "pair-2", "pair-2": "pair-1"}
	kubePair, weavePair := left[pairBound["why-kube"]], left[pairBound["why-weave"]]
	weaveMsg := msgs["why-weave/"+weavePair]
	compareWhy(t, "pair", msgs["why-kube/"+kubePair], weaveMsg)
	if want := "Weave: H14 pod anti-affinity with why-weave/" + pairBound["why-weave"] + " on n-"; !strings.Contains(weaveMsg, want) {
		t.Errorf("joint failure: weave's message %q does not name the pod bound with it (%q)", weaveMsg, want)
	}
	// The event carries the condition's text.
	for _, cs := range cases {
		name := cs.name
		if strings.HasPrefix(name, "pair-") {
			name = weavePair
		}
		found := false
		for _, e := range eventsFor(t, c, "why-weave", name) {
			found = found || e == "FailedScheduling: "+msgs["why-weave/"+name]
		}
		if !found {
			t.Errorf("why-weave/%s: no FailedScheduling event with its condition's message %q: %v", name, msgs["why-weave/"+name], eventsFor(t, c, "why-weave", name))
		}
	}
	text, err := s.Explain("why-weave", "cpu")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"node n-a1: Insufficient cpu\n", "node n-cordon: node(s) were unschedulable\n", "node n-taint: node(s) had untolerated taint(s)\n"} {
		if !strings.Contains(text, line) {
			t.Errorf("Explain(why-weave/cpu) lacks %q:\n%s", line, text)
		}
	}
	t.Logf("done in %v; weave's explanation of why-weave/cpu:\n%s", time.Since(t0).Round(time.Millisecond), text)
}

// compareWhy holds weave-scheduler's message for a pod to kube-scheduler's for its twin: the same reasons,
// each on the same number of nodes, out of the same number.
func compareWhy(t *testing.T, name, kube, weave string) {
	t.Helper()
	kn, kh, err := parseWhy(kube)
	if err != nil {
		t.Errorf("%s: kube-scheduler's message: %v", name, err)
		return
	}
	wn, wh, err := parseWhy(weave)
	if err != nil {
		t.Errorf("%s: weave-scheduler's message: %v", name, err)
		return
	}
	if kn != wn || !maps.Equal(kh, wh) {
		t.Errorf("%s: weave-scheduler says\n  %s\nkube-scheduler says\n  %s", name, weave, kube)
		return
	}
	t.Logf("%s: both count %v of %d nodes\n  kube:  %s\n  weave: %s", name, wh, wn, kube, weave)
}

var whyHead = regexp.MustCompile(`^0/(\d+) nodes are available: `)

// parseWhy reads the node count and the "count reason" histogram of a FitError message, up to the first
// ". " (kube-scheduler's " preemption: ..." and weave-scheduler's " Weave: ..." come after it) or the final ".".
func parseWhy(msg string) (int, map[string]int, error) {
	m := whyHead.FindStringSubmatch(msg)
	if m == nil {
		return 0, nil, fmt.Errorf("%q does not begin \"0/N nodes are available: \"", msg)
	}
	n, _ := strconv.Atoi(m[1])
	rest := msg[len(m[0]):]
	if i := strings.Index(rest, ". "); i >= 0 {
		rest = rest[:i]
	}
	rest = strings.TrimSuffix(rest, ".")
	h := map[string]int{}
	for _, part := range strings.Split(rest, ", ") {
		k, why, ok := strings.Cut(part, " ")
		count, err := strconv.Atoi(k)
		if !ok || err != nil {
			return 0, nil, fmt.Errorf("%q: %q is not \"count reason\"", msg, part)
		}
		h[why] += count
	}
	return n, h, nil
}
