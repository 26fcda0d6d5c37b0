package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/weavesql/weave/e2e/harness"
	"github.com/weavesql/weave/e2e/internal/oracle"
	"github.com/weavesql/weave/e2e/internal/oracle/differential"
)

// TestLiveParity runs one workload twice, each time on a fresh in-process API server: scheduled by
// weave-scheduler, then by kube-scheduler v1.37.2 (default profile), with the same objects but
// spec.schedulerName. The workload mixes what kube-scheduler v1.37 honours (parityPods says which pods use
// what). Then kube-scheduler's own Filter plugins (the oracle) re-validate the final state of both runs.
//
// It asserts, for weave-scheduler:
//   - every binding passes every Filter plugin on its node given the other pods (the order-dependent ones,
//     required pod affinity and topology spread, by differential's replay): no wrong binding, and no other
//     finding of differential.JudgeLive but missed placements, which are reported;
//   - the pods with scheduling gates stay unbound while gated and are bound once their gates are removed
//     (with no bind error: the API server refuses to bind a gated pod, so an attempt would count as one);
//   - the pods using what it refuses (spec.resourceClaims; a claim of a WaitForFirstConsumer class) stay
//     pending with a FailedScheduling event and a PodScheduled=False condition whose message names the field;
//   - it binds at least as many of the supported pods as kube-scheduler (the workload is not tight: every
//     supported pod fits but one, which fits nowhere).
//
// kube-scheduler's bindings are judged and reported the same way (they should pass too: a rejection of
// theirs is a doubt about the oracle). The counts each scheduler bound are in the test log. 19 s for both
// runs on the loaded 2-core machine (2026-11-27, 1e69517). E2E_WEAVE_DISABLE=H5 (policies to disable,
// comma-separated) runs the mutation check: the test must then fail (with H5 off, NodeResourcesFit rejects two
// GPU pods; with H14 off, InterPodAffinity a cache pod outside the zones of team-b's db pods).
func TestLiveParity(t *testing.T) {
	if testing.Short() {
		t.Skip("two live clusters")
	}
	o := newOracle(t)
	var weave, kube parityRun
	t.Run("weave-scheduler", func(t *testing.T) { weave = runParity(t, o, weaveName) })
	t.Run("kube-scheduler", func(t *testing.T) { kube = runParity(t, o, "") })
	if weave.verdict.res.Case == nil || kube.verdict.res.Case == nil {
		t.Fatal("a run did not finish")
	}
	w, k := weave.verdict.boundOf(weave.supported), kube.verdict.boundOf(kube.supported)
	t.Logf("supported pods bound: weave-scheduler %d, kube-scheduler %d of %d (%d pods in all: %d refused by weave-scheduler)",
		w, k, len(weave.supported), len(weave.pods), len(weave.pods)-len(weave.supported))
	if w < k {
		t.Errorf("weave-scheduler bound %d of the %d supported pods, kube-scheduler %d: weave leaves pending a pod kube-scheduler places", w, len(weave.supported), k)
	}
	var onlyKube []string
	for _, p := range kube.supported {
		if kube.verdict.bound[p] != "" && weave.verdict.bound[p] == "" {
			onlyKube = append(onlyKube, p)
		}
	}
	if len(onlyKube) > 0 {
		t.Logf("bound by kube-scheduler, left pending by weave-scheduler: %v", onlyKube)
	}
}

// parityRun is one scheduler's run of the parity workload.
type parityRun struct {
	pods      []string // every pod, namespace/name
	supported []string // the pods weave-scheduler does not refuse
	verdict   liveVerdict
}

// The parity workload's namespaces, with the labels the namespaceSelectors read.
var parityNamespaces = map[string]map[string]string{
	"team-a": {"team": "a", "env": "prod"},
	"team-b": {"team": "b", "env": "prod"},
	"team-c": {"team": "c", "env": "dev"},
}

const (
	gpu        = v1.ResourceName("nvidia.com/gpu")
	zoneKey    = v1.LabelTopologyZone
	hostKey    = v1.LabelHostname
	generation = "example.com/generation"
)

// parityNodes creates the nodes: eight general ones (4 CPU, 16 GiB) in zones a, b, c, node-6 tainted
// NoExecute (flaky) and node-7 PreferNoSchedule; three GPU nodes (8 CPU, 4 nvidia.com/gpu in status, tainted
// NoSchedule); a batch node tainted dedicated=batch:NoSchedule. Every node has an integer generation label
// for Gt/Lt.
func parityNodes(ctx context.Context, c *harness.Cluster) error {
	for i := range 8 {
		spec := harness.NodeSpec{CPU: "4", Memory: "16Gi", Labels: map[string]string{
			"pool": "general", zoneKey: string(rune('a' + min(i/3, 2))), generation: fmt.Sprint(i%5 + 1)}}
		switch i {
		case 6:
			spec.Taints = []v1.Taint{{Key: "flaky", Value: "true", Effect: v1.TaintEffectNoExecute}}
		case 7:
			spec.Taints = []v1.Taint{{Key: "maintenance", Value: "soon", Effect: v1.TaintEffectPreferNoSchedule}}
		}
		if err := c.CreateNode(ctx, fmt.Sprintf("node-%d", i), spec); err != nil {
			return err
		}
	}
	for i := range 3 {
		spec := harness.NodeSpec{CPU: "8", Memory: "32Gi",
			Labels:    map[string]string{"pool": "gpu", "accelerator": "nvidia-a100", zoneKey: string(rune('a' + i)), generation: "5"},
			Resources: v1.ResourceList{gpu: resource.MustParse("4")},
			Taints:    []v1.Taint{{Key: string(gpu), Value: "present", Effect: v1.TaintEffectNoSchedule}}}
		if err := c.CreateNode(ctx, fmt.Sprintf("gpu-%d", i), spec); err != nil {
			return err
		}
	}
	return c.CreateNode(ctx, "batch-0", harness.NodeSpec{CPU: "4", Memory: "16Gi",
		Labels: map[string]string{"pool": "batch", zoneKey: "c", generation: "2"},
		Taints: []v1.Taint{{Key: "dedicated", Value: "batch", Effect: v1.TaintEffectNoSchedule}}})
}

// parityObjects creates what the pods refer to: the labelled namespaces, a RuntimeClass with overhead
// (the RuntimeClass admission plugin copies it into spec.overhead), a WaitForFirstConsumer StorageClass and a
// claim of it.
func parityObjects(ctx context.Context, c *harness.Cluster) error {
	for _, ns := range []string{"team-a", "team-b", "team-c"} {
		if err := c.CreateLabelledNamespace(ctx, ns, parityNamespaces[ns]); err != nil {
			return err
		}
	}
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "kata"}, Handler: "kata",
		Overhead: &nodev1.Overhead{PodFixed: resourceList("250m", "128Mi")}}
	if _, err := c.Client.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{}); err != nil {
		return err
	}
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local-wffc"}, Provisioner: "kubernetes.io/no-provisioner",
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)}
	if _, err := c.Client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		return err
	}
	pvc := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "team-c", Name: "wffc-data"},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: ptr.To("local-wffc"),
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}}}
	_, err := c.Client.CoreV1().PersistentVolumeClaims("team-c").Create(ctx, pvc, metav1.CreateOptions{})
	return err
}

// Pods of the parity workload with a role in the assertions.
var (
	parityGated       = []string{"team-b/gated-0", "team-b/gated-1", "team-b/gated-2", "team-b/gated-3"}
	parityRefused     = map[string]string{"team-c/claim-0": "spec.resourceClaims", "team-c/wffc-0": "spec.volumes[data].persistentVolumeClaim"}
	parityFitsNowhere = "team-a/gpu-huge-0" // 8 GPUs: no node has them
)

// parityPods is the workload: about seventy pods; what each group exercises is in its comment.
func parityPods(sched string) []*v1.Pod {
	var out []*v1.Pod
	add := func(n int, ns, prefix string, f func(b *podBuilder)) {
		for i := range n {
			b := makePod(ns, fmt.Sprintf("%s-%d", prefix, i), sched)
			f(b)
			out = append(out, b.obj())
		}
	}
	tolerateGPU := v1.Toleration{Key: string(gpu), Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}
	gpuPod := func(n int64) func(b *podBuilder) {
		return func(b *podBuilder) {
			b.labels("app", "train").req("1", "2Gi").with(func(p *v1.Pod) {
				// An extended resource is requested through its limit (the API server copies it to requests).
				p.Spec.Containers[0].Resources.Limits = v1.ResourceList{gpu: *resource.NewQuantity(n, resource.DecimalSI)}
				p.Spec.NodeSelector = map[string]string{"accelerator": "nvidia-a100"}
				p.Spec.Tolerations = []v1.Toleration{tolerateGPU}
			})
		}
	}
	// GPU pods: 2 GPUs each, 10 of the 12 in the cluster; one asks for 8 and fits nowhere.
	add(5, "team-a", "gpu-train", gpuPod(2))
	add(1, "team-a", "gpu-huge", gpuPod(8))

	// Scheduling gates, removed once the rest has settled.
	add(4, "team-b", "gated", func(b *podBuilder) {
		b.labels("app", "gated").req("200m", "256Mi").with(func(p *v1.Pod) {
			p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/quota"}}
		})
	})
	// Sidecars: a restartable init container before a regular one; the pod needs 1.3 CPU (the sidecar runs
	// beside the init container), 0.8 once started.
	add(4, "team-b", "sidecar", func(b *podBuilder) {
		b.labels("app", "mesh").req("500m", "256Mi").with(func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{
				{Name: "proxy", Image: "registry.k8s.io/pause:3.10", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways),
					Resources: v1.ResourceRequirements{Requests: resourceList("300m", "64Mi")}},
				{Name: "migrate", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{Requests: resourceList("1", "512Mi")}},
			}
		})
	})
	// Pod-level resources: spec.resources, containers without requests.
	add(3, "team-b", "podres", func(b *podBuilder) {
		b.labels("app", "podres").with(func(p *v1.Pod) {
			p.Spec.Resources = &v1.ResourceRequirements{Requests: resourceList("1", "1Gi"), Limits: resourceList("2", "2Gi")}
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "helper", Image: "registry.k8s.io/pause:3.10"})
		})
	})
	// A RuntimeClass with overhead: spec.overhead comes from admission, not from here.
	add(3, "team-a", "kata", func(b *podBuilder) {
		b.labels("app", "sandboxed").req("500m", "256Mi").with(func(p *v1.Pod) { p.Spec.RuntimeClassName = ptr.To("kata") })
	})
	// Topology spread over zones: a selector with expressions, minDomains, both inclusion policies Honor
	// (the GPU and batch nodes, outside the pods' node affinity, and node-6, whose NoExecute taint they do not
	// tolerate, are no domain's), matchLabelKeys.
	add(9, "team-a", "web", func(b *podBuilder) {
		b.labels("app", "web", "tier", "front", "pod-template-hash", "v1").req("200m", "128Mi").with(func(p *v1.Pod) {
			affinity(p).NodeAffinity = &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "pool", Operator: v1.NodeSelectorOpIn, Values: []string{"general"}}}}}}}
			p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: zoneKey, WhenUnsatisfiable: v1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"},
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"front", "edge"}}}},
				MinDomains:         ptr.To[int32](3),
				NodeAffinityPolicy: ptr.To(v1.NodeInclusionPolicyHonor), NodeTaintsPolicy: ptr.To(v1.NodeInclusionPolicyHonor),
				MatchLabelKeys: []string{"pod-template-hash"},
			}}
		})
	})
	// Topology spread over hostnames with both policies Ignore: every node is a domain, the tainted ones
	// empty, so the global minimum is 0 and no node takes more than maxSkew; minDomains below the count.
	add(6, "team-a", "api", func(b *podBuilder) {
		b.labels("app", "api", "version", "v2", "pod-template-hash", "a7").req("200m", "128Mi").with(func(p *v1.Pod) {
			p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
				MaxSkew: 2, TopologyKey: hostKey, WhenUnsatisfiable: v1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"api"}},
					{Key: "version", Operator: metav1.LabelSelectorOpExists}}},
				MinDomains:         ptr.To[int32](3),
				NodeAffinityPolicy: ptr.To(v1.NodeInclusionPolicyIgnore), NodeTaintsPolicy: ptr.To(v1.NodeInclusionPolicyIgnore),
				MatchLabelKeys: []string{"pod-template-hash"},
			}}
		})
	})
	// Pod anti-affinity between the db pods: a multi-label selector with an expression, hostname.
	add(3, "team-b", "db", func(b *podBuilder) {
		b.labels("app", "db", "role", "primary", "tier", "data").req("500m", "1Gi").with(func(p *v1.Pod) {
			affinity(p).PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"},
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "role", Operator: metav1.LabelSelectorOpIn, Values: []string{"primary", "replica"}}}},
				TopologyKey: hostKey}}}
		})
	})
	// Pod affinity across namespaces (namespaces): in a zone holding a db primary of team-b.
	add(4, "team-a", "cache", func(b *podBuilder) {
		b.labels("app", "cache").req("100m", "128Mi").with(func(p *v1.Pod) {
			affinity(p).PodAffinity = &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db", "role": "primary"}},
				Namespaces:    []string{"team-b"}, TopologyKey: zoneKey}}}
		})
	})
	// namespaceSelector: off the nodes of team b's databases, in a zone with a front-end web pod of a prod
	// namespace.
	add(3, "team-c", "metrics", func(b *podBuilder) {
		b.labels("app", "metrics").req("100m", "64Mi").with(func(p *v1.Pod) {
			affinity(p).PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"db"}}, {Key: "role", Operator: metav1.LabelSelectorOpExists}}},
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}}, TopologyKey: hostKey}}}
			affinity(p).PodAffinity = &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "front"}},
				NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"prod"}}}},
				TopologyKey: zoneKey}}}
		})
	})
	// Taints and tolerations: the batch node's NoSchedule taint tolerated (Equal) and required by node
	// affinity; node-6's NoExecute taint tolerated for a while.
	add(3, "team-c", "batch", func(b *podBuilder) {
		b.labels("app", "batch").req("500m", "512Mi").with(func(p *v1.Pod) {
			p.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "batch", Effect: v1.TaintEffectNoSchedule}}
			affinity(p).NodeAffinity = &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "pool", Operator: v1.NodeSelectorOpIn, Values: []string{"batch"}}}}}}}
		})
	})
	add(2, "team-c", "flaky", func(b *podBuilder) {
		b.labels("app", "flaky").req("100m", "64Mi").with(func(p *v1.Pod) {
			p.Spec.Tolerations = []v1.Toleration{{Key: "flaky", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](3600)}}
		})
	})
	// Node affinity with Gt and Lt (generation 3 or 4, general pool) or matchFields (node-0, generation 1).
	add(3, "team-c", "gen", func(b *podBuilder) {
		b.labels("app", "gen").req("200m", "128Mi").with(func(p *v1.Pod) {
			affinity(p).NodeAffinity = &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{
					{MatchExpressions: []v1.NodeSelectorRequirement{
						{Key: generation, Operator: v1.NodeSelectorOpGt, Values: []string{"2"}},
						{Key: generation, Operator: v1.NodeSelectorOpLt, Values: []string{"5"}},
						{Key: "pool", Operator: v1.NodeSelectorOpIn, Values: []string{"general"}}}},
					{MatchFields: []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{"node-0"}}}},
				}}}
		})
	})
	// Host ports with hostIP: 8080/TCP on 127.0.0.1 and on every address (0.0.0.0) conflict; 8080/UDP does
	// not conflict with either.
	hostPort := func(ip string, proto v1.Protocol) func(b *podBuilder) {
		return func(b *podBuilder) {
			b.labels("app", "edge").req("100m", "64Mi").with(func(p *v1.Pod) {
				p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080, HostIP: ip, Protocol: proto}}
			})
		}
	}
	add(3, "team-b", "port-local", hostPort("127.0.0.1", v1.ProtocolTCP))
	add(2, "team-b", "port-any", hostPort("0.0.0.0", v1.ProtocolTCP))
	add(2, "team-b", "port-udp", hostPort("127.0.0.1", v1.ProtocolUDP))

	// What weave-scheduler refuses: a ResourceClaim (dynamic resource allocation) and a claim of a
	// WaitForFirstConsumer class (delayed volume binding). kube-scheduler leaves both pending too here: the
	// ResourceClaim does not exist, and no volume can be provisioned for the claim.
	out = append(out, makePod("team-c", "claim-0", sched).labels("app", "dra").req("100m", "64Mi").with(func(p *v1.Pod) {
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("gpu-claim")}}
		p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
	}).obj())
	out = append(out, makePod("team-c", "wffc-0", sched).labels("app", "db-local").req("100m", "64Mi").with(func(p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "wffc-data"}}}}
	}).obj())
	return out
}

// runParity runs the parity workload on a fresh cluster with weave-scheduler (sched weaveName) or
// kube-scheduler (sched ""), and judges the final state.
func runParity(t *testing.T, o *oracle.Oracle, sched string) parityRun {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	label := "kube-scheduler"
	if sched != "" {
		label = sched
	}
	t0 := time.Now()
	c := harness.Start(t)
	if err := parityNodes(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := parityObjects(ctx, c); err != nil {
		t.Fatal(err)
	}
	w, err := c.WatchBindings(ctx, metav1.NamespaceAll)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	bindErrors := func() float64 { return 0 }
	if sched == "" {
		c.RunKubeScheduler(ctx, t)
	} else {
		s, _, _ := startWeave(t, c, liveWeaveConfig("live"), nil)
		bindErrors = func() float64 { return metric(t, s, "weave_scheduler_bind_errors_total") }
	}
	t.Logf("%s: cluster and scheduler up in %v", label, time.Since(t0).Round(time.Millisecond))

	pods := parityPods(sched)
	run := parityRun{}
	for _, p := range pods {
		k := podKey(p)
		run.pods = append(run.pods, k)
		if _, refused := parityRefused[k]; !refused {
			run.supported = append(run.supported, k)
		}
	}
	t1 := time.Now()
	if err := createPaced(ctx, c, pods, 0); err != nil {
		t.Fatal(err)
	}
	kata, err := c.Client.CoreV1().Pods("team-a").Get(ctx, "kata-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if kata.Spec.Overhead.Cpu().MilliValue() != 250 {
		t.Fatalf("kata-0 created with spec.overhead %v: the RuntimeClass admission plugin did not set the RuntimeClass's", kata.Spec.Overhead)
	}

	// Everything but the gated pods, the refused ones and the one fitting nowhere can be bound.
	var want []string
	for _, k := range run.supported {
		if !slices.Contains(parityGated, k) && k != parityFitsNowhere {
			want = append(want, k)
		}
	}
	left, err := waitBoundKeys(ctx, c, want, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d of %d bindable pods bound in %v; not bound: %v", label, len(want)-len(left), len(want), time.Since(t1).Round(time.Millisecond), left)

	if sched != "" {
		// Refusals: pending, a FailedScheduling event and PodScheduled=False, both naming the field.
		for k, field := range parityRefused {
			ns, name, _ := strings.Cut(k, "/")
			waitFor(t, k+" refused", 30*time.Second, func() bool {
				p, err := c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if p.Spec.NodeName != "" {
					t.Fatalf("%s, which weave-scheduler refuses, bound to %s", k, p.Spec.NodeName)
				}
				cond := condition(p, v1.PodScheduled)
				if cond == nil || cond.Status != v1.ConditionFalse || !strings.Contains(cond.Message, field) {
					return false
				}
				for _, e := range eventsFor(t, c, ns, name) {
					if strings.HasPrefix(e, "FailedScheduling: ") && strings.Contains(e, field) {
						t.Logf("%s: %s; condition PodScheduled=False %s: %s", k, e, cond.Reason, cond.Message)
						return true
					}
				}
				return false
			})
		}
	}

	// The gated pods: not bound while gated; bound once the gates are removed.
	for _, k := range parityGated {
		if n := w.Nodes(strings.TrimPrefix(k, "team-b/")); len(n) > 0 {
			t.Errorf("%s bound to %v while gated", k, n)
		}
	}
	ungated := map[string]time.Time{}
	for _, k := range parityGated {
		name := strings.TrimPrefix(k, "team-b/")
		p, err := c.Client.CoreV1().Pods("team-b").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Spec.SchedulingGates = nil
		ungated[name] = time.Now()
		if _, err := c.Client.CoreV1().Pods("team-b").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	left, err = waitBoundKeys(ctx, c, parityGated, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("%s: gated pods %v not bound within 60 s of their gates' removal", label, left)
	}
	bound := w.Bound()
	for name, at := range ungated {
		if b, ok := bound[name]; ok && b.Before(at) {
			t.Errorf("%s: team-b/%s bound before its gate was removed", label, name)
		}
	}
	if n := bindErrors(); n > 0 {
		t.Errorf("%s: %v bind errors (the API server refuses to bind a gated pod)", label, n)
	}

	run.verdict = judgeLive(t, ctx, o, c, label, sched)
	v := run.verdict
	if sched != "" {
		if n := v.count(differential.WrongBinding); n > 0 {
			t.Errorf("%s: %d bindings the Filter plugins reject (findings above)", label, n)
		}
		if n := len(v.res.Findings) - v.count(differential.WrongBinding, differential.MissedPlacement); n > 0 {
			t.Errorf("%s: %d findings other than wrong bindings and missed placements (above)", label, n)
		}
		for k := range parityRefused {
			if v.bound[k] != "" {
				t.Errorf("%s: %s bound", label, k)
			}
		}
	} else if n := v.count(differential.WrongBinding); n > 0 {
		t.Logf("ORACLE DOUBT: the oracle rejects %d of kube-scheduler's own bindings (findings above)", n)
	}
	if n := v.count(differential.MissedPlacement); n > 0 {
		t.Logf("%s: %d pending pods fit a node of the final state (missed placements, above)", label, n)
	}
	t.Logf("%s: run in %v", label, time.Since(t0).Round(time.Millisecond))
	return run
}
