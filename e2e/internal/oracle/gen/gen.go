package gen

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// SchedulerName is the scheduler the pending pods name (a few name another one).
const SchedulerName = "weave-scheduler"

// Label keys of the generated objects.
const (
	LabelRack = "example.com/rack"
	LabelGen  = "example.com/gen" // a number: for Gt and Lt
	LabelDisk = "disk"
	LabelPool = "pool"
	LabelGPU  = "gpu"
	// Extended resources some nodes have.
	GPU = v1.ResourceName("nvidia.com/gpu")
	Foo = v1.ResourceName("example.com/foo")
	// Hugepages2Mi is the hugepages resource some nodes have.
	Hugepages2Mi = v1.ResourceName("hugepages-2Mi")
)

// Case is one generated cluster state.
type Case struct {
	Seed       int64
	Nodes      []*v1.Node
	Namespaces []*v1.Namespace
	// Bound pods have spec.nodeName: most Running, some Pending (not started), some terminal.
	Bound []*v1.Pod
	// Pending pods wait for a scheduler: SchedulerName's, and a few of another scheduler.
	Pending []*v1.Pod
}

// Pods returns the bound pods, then the pending ones.
func (c *Case) Pods() []*v1.Pod { return slices.Concat(c.Bound, c.Pending) }

// Options shape the states.
type Options struct {
	// Plain restricts pods to container CPU and memory requests and nodes to CPU, memory and pod counts:
	// no taints, labels to select on, affinity, spread, ports, other resources or extra containers.
	Plain bool
}

type g struct {
	r      *rand.Rand
	opts   Options
	c      *Case
	uid    int
	groups []*group
	// used approximates what the bound pods take of each node (cpu milli, memory MiB, pods).
	used map[string]*[3]int64
}

// A group is a set of replicas: the same labels and spec.
type group struct {
	name      string
	namespace string
	labels    map[string]string
	tmpl      *v1.Pod
	// pattern marks the nginx+redis groups, whose affinity is mostly left as the pattern has it.
	pattern bool
}

// Generate returns the case of seed.
func Generate(seed int64, opts Options) *Case {
	gn := &g{r: rand.New(rand.NewSource(seed)), opts: opts, c: &Case{Seed: seed}, used: map[string]*[3]int64{}}
	gn.namespaces()
	gn.nodes()
	gn.makeGroups()
	gn.pods()
	return gn.c
}

func (g *g) p(prob float64) bool { return g.r.Float64() < prob }

func pick[T any](g *g, xs ...T) T { return xs[g.r.Intn(len(xs))] }

func (g *g) between(lo, hi int) int { return lo + g.r.Intn(hi-lo+1) }

// Namespaces: default and three teams with labels; every namespace carries kubernetes.io/metadata.name.
var namespaceLabels = []struct {
	name   string
	labels map[string]string
}{
	{"default", nil},
	{"team-a", map[string]string{"env": "prod", "team": "a"}},
	{"team-b", map[string]string{"env": "dev", "team": "b"}},
	{"team-c", map[string]string{"env": "prod", "team": "c", "tier": "gold"}},
}

func (g *g) namespaces() {
	for _, n := range namespaceLabels {
		l := map[string]string{"kubernetes.io/metadata.name": n.name}
		for k, v := range n.labels {
			l[k] = v
		}
		g.c.Namespaces = append(g.c.Namespaces, &v1.Namespace{
			ObjectMeta: metav1.ObjectMeta{Name: n.name, UID: types.UID("ns-" + n.name), Labels: l},
			Status:     v1.NamespaceStatus{Phase: v1.NamespaceActive},
		})
	}
}

func qty(s string) resource.Quantity { return resource.MustParse(s) }

func mi(n int64) resource.Quantity { return *resource.NewQuantity(n<<20, resource.BinarySI) }

func milli(n int64) resource.Quantity { return *resource.NewMilliQuantity(n, resource.DecimalSI) }

// Node taints: a key, value and effect each; none of the kubelet's or node controller's condition taints.
var nodeTaints = []v1.Taint{
	{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule},
	{Key: "dedicated", Value: "db", Effect: v1.TaintEffectNoSchedule},
	{Key: "spot", Value: "true", Effect: v1.TaintEffectPreferNoSchedule},
	{Key: "maintenance", Effect: v1.TaintEffectNoExecute},
	{Key: "example.com/special", Value: "x", Effect: v1.TaintEffectNoSchedule},
	{Key: "example.com/drain", Value: "soon", Effect: v1.TaintEffectNoExecute},
}

// Declared features a node may list (NodeDeclaredFeatures; the names of
// k8s.io/component-helpers/nodedeclaredfeatures/features that a pod's spec can require).
const (
	FeatureRestartAll       = "RestartAllContainersOnContainerExits"
	FeatureUserNSHostNet    = "UserNamespacesHostNetworkSupport"
	FeatureBindMountOptions = "VolumeBindMountOptions"
)

func (g *g) nodes() {
	n := g.between(3, 12)
	for i := range n {
		name := fmt.Sprintf("node-%02d", i)
		cpu := int64(pick(g, 2000, 4000, 4000, 8000, 3500))
		mem := int64(pick(g, 4096, 8192, 8192, 16384, 6000))
		pods := int64(110)
		if g.p(0.2) {
			pods = int64(g.between(3, 10))
		}
		alloc := v1.ResourceList{
			v1.ResourceCPU:    milli(cpu),
			v1.ResourceMemory: mi(mem),
			v1.ResourcePods:   *resource.NewQuantity(pods, resource.DecimalSI),
		}
		labels := map[string]string{
			v1.LabelHostname:   name,
			v1.LabelOSStable:   "linux",
			v1.LabelArchStable: "amd64",
		}
		node := &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("node-uid-" + name), Labels: labels},
			Status: v1.NodeStatus{
				Conditions: []v1.NodeCondition{
					{Type: v1.NodeReady, Status: v1.ConditionTrue},
					{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse},
					{Type: v1.NodeDiskPressure, Status: v1.ConditionFalse},
					{Type: v1.NodePIDPressure, Status: v1.ConditionFalse},
				},
			},
		}
		if !g.opts.Plain {
			if g.p(0.9) {
				labels[v1.LabelTopologyZone] = pick(g, "zone-a", "zone-b", "zone-c")
			}
			if g.p(0.8) {
				labels[LabelRack] = fmt.Sprintf("rack-%d", g.between(1, 4))
			}
			if g.p(0.7) {
				labels[LabelDisk] = pick(g, "ssd", "hdd")
			}
			if g.p(0.6) {
				labels[LabelGen] = fmt.Sprint(g.between(1, 9))
			}
			if g.p(0.5) {
				labels[LabelPool] = pick(g, "general", "batch")
			}
			if g.p(0.9) {
				alloc[v1.ResourceEphemeralStorage] = *resource.NewQuantity(int64(pick(g, 20, 50, 100))<<30, resource.BinarySI)
			}
			if g.p(0.3) {
				alloc[GPU] = *resource.NewQuantity(int64(pick(g, 1, 2, 4)), resource.DecimalSI)
				labels[LabelGPU] = "true"
			}
			if g.p(0.3) {
				alloc[Foo] = *resource.NewQuantity(int64(pick(g, 1, 3, 5)), resource.DecimalSI)
			}
			if g.p(0.2) {
				alloc[Hugepages2Mi] = mi(int64(pick(g, 128, 256, 512)))
			}
			for _, t := range nodeTaints {
				if g.p(0.04) {
					node.Spec.Taints = append(node.Spec.Taints, t)
				}
			}
			if g.p(0.07) {
				node.Spec.Unschedulable = true
				if g.p(0.5) { // the node controller's taint, which may lag
					node.Spec.Taints = append(node.Spec.Taints, v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule})
				}
			}
			for _, f := range []string{FeatureRestartAll, FeatureUserNSHostNet, FeatureBindMountOptions} {
				if g.p(0.4) {
					node.Status.DeclaredFeatures = append(node.Status.DeclaredFeatures, f)
				}
			}
		}
		capacity := alloc.DeepCopy()
		capacity[v1.ResourceCPU] = milli(cpu + 100)
		capacity[v1.ResourceMemory] = mi(mem + 256)
		node.Status.Allocatable, node.Status.Capacity = alloc, capacity
		g.c.Nodes = append(g.c.Nodes, node)
		g.used[name] = &[3]int64{}
	}
}

// Label values of the pod groups.
var (
	apps  = []string{"web", "api", "db", "cache", "queue"}
	roles = []string{"nginx", "redis", "worker", "frontend"}
)

func (g *g) makeGroups() {
	n := g.between(3, 8)
	if g.opts.Plain {
		n = g.between(1, 3)
	}
	for i := 0; i < n; i++ {
		if !g.opts.Plain && g.p(0.3) {
			g.nginxRedis()
			i++
			continue
		}
		g.addGroup(g.plainGroup(fmt.Sprintf("g%d", len(g.groups))))
	}
	if g.opts.Plain {
		return
	}
	// Specs are drawn once every group's labels are known, so that selectors can name other groups.
	for _, gr := range g.groups {
		g.decorate(gr)
	}
}

func (g *g) addGroup(gr *group) { g.groups = append(g.groups, gr) }

func (g *g) plainGroup(name string) *group {
	ns := "default"
	if !g.opts.Plain {
		ns = pick(g, "default", "team-a", "team-b", "team-c")
	}
	labels := map[string]string{"app": pick(g, apps...)}
	if !g.opts.Plain {
		if g.p(0.8) {
			labels["role"] = pick(g, roles...)
		}
		if g.p(0.4) {
			labels["tier"] = pick(g, "front", "back")
		}
		if g.p(0.4) {
			labels["version"] = pick(g, "v1", "v2")
		}
		labels["pod-template-hash"] = fmt.Sprintf("%x", g.r.Intn(1<<16))
	}
	gr := &group{name: name, namespace: ns, labels: labels}
	gr.tmpl = g.basePod(gr)
	return gr
}

// nginxRedis adds the paper's pattern: redis replicas anti-affine to one another, nginx replicas affine to a
// redis of their app and anti-affine to one another (both by two labels).
func (g *g) nginxRedis() {
	app := pick(g, apps...)
	ns := pick(g, "default", "team-a", "team-b", "team-c")
	key := pick(g, v1.LabelHostname, v1.LabelHostname, v1.LabelTopologyZone, LabelRack)
	redis := &group{name: fmt.Sprintf("g%d-redis", len(g.groups)), namespace: ns, labels: map[string]string{"app": app, "role": "redis"}}
	redis.tmpl = g.basePod(redis)
	nginx := &group{name: fmt.Sprintf("g%d-nginx", len(g.groups)+1), namespace: ns, labels: map[string]string{"app": app, "role": "nginx"}}
	nginx.tmpl = g.basePod(nginx)
	sel := func(role string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app, "role": role}}
	}
	redis.tmpl.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
		{LabelSelector: sel("redis"), TopologyKey: v1.LabelHostname}}}}
	nginx.tmpl.Spec.Affinity = &v1.Affinity{
		PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
			{LabelSelector: sel("redis"), TopologyKey: key}}},
		PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
			{LabelSelector: sel("nginx"), TopologyKey: v1.LabelHostname}}},
	}
	redis.pattern, nginx.pattern = true, true
	g.addGroup(redis)
	g.addGroup(nginx)
}

func (g *g) basePod(gr *group) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: gr.namespace, Labels: copyMap(gr.labels)},
		Spec: v1.PodSpec{
			SchedulerName:                 SchedulerName,
			RestartPolicy:                 v1.RestartPolicyAlways,
			DNSPolicy:                     v1.DNSClusterFirst,
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			Priority:                      ptr.To[int32](0),
			PreemptionPolicy:              ptr.To(v1.PreemptLowerPriority),
			EnableServiceLinks:            ptr.To(true),
		},
	}
	nc := 1
	if !g.opts.Plain {
		nc = pick(g, 1, 1, 1, 2, 3)
	}
	for i := range nc {
		p.Spec.Containers = append(p.Spec.Containers, g.container(fmt.Sprintf("c%d", i), i == 0))
	}
	return p
}

func (g *g) container(name string, main bool) v1.Container {
	c := v1.Container{Name: name, Image: pick(g, "nginx:1.27", "redis:7", "busybox:1.36"), ImagePullPolicy: v1.PullIfNotPresent,
		TerminationMessagePath: v1.TerminationMessagePathDefault, TerminationMessagePolicy: v1.TerminationMessageReadFile}
	req := v1.ResourceList{}
	lim := v1.ResourceList{}
	if main || g.p(0.5) {
		if g.opts.Plain || g.p(0.9) {
			req[v1.ResourceCPU] = milli(int64(pick(g, 50, 100, 100, 250, 250, 500, 500, 750, 1000, 1500)))
		}
		if g.opts.Plain || g.p(0.85) {
			req[v1.ResourceMemory] = mi(int64(pick(g, 64, 128, 256, 256, 512, 512, 1024, 1536, 2048)))
		}
	}
	if !g.opts.Plain {
		if g.p(0.15) {
			req[v1.ResourceEphemeralStorage] = *resource.NewQuantity(int64(pick(g, 1, 5, 10, 30))<<30, resource.BinarySI)
		}
		if main && g.p(0.1) {
			req[GPU] = *resource.NewQuantity(int64(pick(g, 1, 1, 2)), resource.DecimalSI)
			lim[GPU] = req[GPU] // extended resources: requests equal limits
		}
		if g.p(0.08) {
			req[Foo] = *resource.NewQuantity(int64(pick(g, 1, 2, 3)), resource.DecimalSI)
			lim[Foo] = req[Foo]
		}
		if main && g.p(0.05) {
			req[Hugepages2Mi] = mi(int64(pick(g, 64, 128, 256)))
			lim[Hugepages2Mi] = req[Hugepages2Mi]
			if _, ok := req[v1.ResourceMemory]; !ok {
				req[v1.ResourceMemory] = mi(256)
			}
			lim[v1.ResourceMemory] = req[v1.ResourceMemory]
		}
		if g.p(0.2) {
			if q, ok := req[v1.ResourceCPU]; ok {
				lim[v1.ResourceCPU] = milli(q.MilliValue() * 2)
			}
		}
	}
	if len(req) > 0 {
		c.Resources.Requests = req
	}
	if len(lim) > 0 {
		c.Resources.Limits = lim
	}
	return c
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// decorate draws the group's spec: scheduling constraints, extra containers, ports, resources.
func (g *g) decorate(gr *group) {
	s := &gr.tmpl.Spec
	extra := !gr.pattern || g.p(0.3)
	// Pod affinity and anti-affinity, beyond the nginx+redis pattern's.
	if extra && g.p(0.45) {
		if s.Affinity == nil {
			s.Affinity = &v1.Affinity{}
		}
		for range g.between(1, 2) {
			g.podAffinityTerm(gr, s.Affinity)
		}
	}
	if extra && g.p(0.35) {
		for range g.between(1, 2) {
			s.TopologySpreadConstraints = append(s.TopologySpreadConstraints, g.spread(gr))
		}
	}
	if g.p(0.15) {
		s.NodeSelector = pick(g,
			map[string]string{LabelDisk: "ssd"},
			map[string]string{LabelPool: "batch", v1.LabelOSStable: "linux"},
			map[string]string{v1.LabelTopologyZone: "zone-a"},
			map[string]string{LabelGPU: "true"})
	}
	if g.p(0.25) {
		if s.Affinity == nil {
			s.Affinity = &v1.Affinity{}
		}
		g.nodeAffinity(s.Affinity)
	}
	if g.p(0.35) {
		for _, t := range tolerationPool {
			if g.p(0.3) {
				s.Tolerations = append(s.Tolerations, t)
			}
		}
	}
	if g.p(0.2) {
		for range g.between(1, 2) {
			s.InitContainers = append(s.InitContainers, g.container(fmt.Sprintf("init%d", len(s.InitContainers)), false))
		}
	}
	if g.p(0.2) {
		sc := g.container(fmt.Sprintf("sidecar%d", len(s.InitContainers)), false)
		sc.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
		s.InitContainers = append(s.InitContainers, sc)
	}
	if g.p(0.12) {
		g.hostPorts(s)
	}
	if g.p(0.1) {
		// Pod-level requests: at least the containers' sum (validation), CPU and memory only.
		var cpu, mem int64
		for _, c := range s.Containers {
			cpu += c.Resources.Requests.Cpu().MilliValue()
			mem += c.Resources.Requests.Memory().Value() >> 20
		}
		s.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{
			v1.ResourceCPU:    milli(cpu + int64(pick(g, 0, 100, 500, 1000))),
			v1.ResourceMemory: mi(mem + int64(pick(g, 0, 128, 512))),
		}}
	}
	if g.p(0.1) {
		s.RuntimeClassName = ptr.To(pick(g, "kata", "gvisor"))
		s.Overhead = v1.ResourceList{v1.ResourceCPU: milli(int64(pick(g, 50, 250))), v1.ResourceMemory: mi(int64(pick(g, 32, 120)))}
	}
	if g.p(0.04) {
		// RestartAllContainers: NodeDeclaredFeatures requires RestartAllContainersOnContainerExits.
		c := &s.Containers[0]
		c.RestartPolicy = ptr.To(v1.ContainerRestartPolicyNever)
		c.RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers,
			ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
	}
	if g.p(0.2) {
		prio := int32(pick(g, 100, 1000, 10000))
		s.Priority = &prio
		s.PriorityClassName = fmt.Sprintf("prio-%d", prio)
		if g.p(0.4) {
			s.PreemptionPolicy = ptr.To(v1.PreemptNever)
		}
	}
}

func (g *g) hostPorts(s *v1.PodSpec) {
	if g.p(0.2) {
		// Host network: the API server sets each port's hostPort to its containerPort.
		s.HostNetwork = true
		if g.p(0.5) {
			s.HostUsers = ptr.To(false) // NodeDeclaredFeatures: UserNamespacesHostNetworkSupport
		}
		port := int32(pick(g, 80, 8080, 9100))
		s.Containers[0].Ports = append(s.Containers[0].Ports, v1.ContainerPort{ContainerPort: port, HostPort: port, Protocol: v1.ProtocolTCP})
		return
	}
	cp := v1.ContainerPort{
		ContainerPort: int32(pick(g, 80, 8080, 53)),
		HostPort:      int32(pick(g, 80, 443, 8080, 53)),
		Protocol:      pick(g, v1.ProtocolTCP, v1.ProtocolTCP, v1.ProtocolUDP, v1.ProtocolSCTP),
		HostIP:        pick(g, "", "", "0.0.0.0", "10.0.0.1", "127.0.0.1"),
	}
	for i := range s.InitContainers {
		if r := s.InitContainers[i].RestartPolicy; r != nil && *r == v1.ContainerRestartPolicyAlways && g.p(0.5) {
			s.InitContainers[i].Ports = append(s.InitContainers[i].Ports, cp) // a sidecar's ports are held too
			return
		}
	}
	s.Containers[0].Ports = append(s.Containers[0].Ports, cp)
}

// Tolerations drawn from: every operator and effect, an empty key with Exists, the unschedulable toleration.
var tolerationPool = []v1.Toleration{
	{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "gpu", Effect: v1.TaintEffectNoSchedule},
	{Key: "dedicated", Operator: v1.TolerationOpExists},
	{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "db"},
	{Key: "spot", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectPreferNoSchedule},
	{Key: "maintenance", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
	{Operator: v1.TolerationOpExists},
	{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
	{Key: "example.com/special", Operator: v1.TolerationOpEqual, Value: "y", Effect: v1.TaintEffectNoSchedule},
	{Key: "example.com/special", Value: "x"}, // operator left empty: Equal
	{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
	{Key: "example.com/drain", Operator: v1.TolerationOpEqual, Value: "soon", Effect: v1.TaintEffectNoExecute},
}

var topologyKeys = []string{v1.LabelHostname, v1.LabelHostname, v1.LabelTopologyZone, LabelRack}

// selector draws a label selector aimed at target's labels: several matchLabels and expressions of every
// operator, mostly true of target, sometimes not.
func (g *g) selector(target *group) *metav1.LabelSelector {
	keys := make([]string, 0, len(target.labels))
	for k := range target.labels {
		if k != "pod-template-hash" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	g.r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	sel := &metav1.LabelSelector{}
	nLabels := g.between(1, min(3, len(keys)))
	for _, k := range keys[:nLabels] {
		if sel.MatchLabels == nil {
			sel.MatchLabels = map[string]string{}
		}
		sel.MatchLabels[k] = target.labels[k]
	}
	rest := keys[nLabels:]
	for range g.between(0, 2) {
		switch g.r.Intn(5) {
		case 0: // In, with the target's value among others
			if len(rest) > 0 {
				k := rest[0]
				rest = rest[1:]
				sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn,
					Values: []string{target.labels[k], pick(g, "v9", "other")}})
			}
		case 1: // NotIn a value the target does not have (or, sometimes, has)
			k := pick(g, "role", "tier", "version")
			vals := []string{pick(g, "nginx", "worker", "front", "v1")}
			sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpNotIn, Values: vals})
		case 2: // Exists
			sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: pick(g, "app", "role", "tier"), Operator: metav1.LabelSelectorOpExists})
		case 3: // DoesNotExist
			sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: pick(g, "canary", "tier", "version"), Operator: metav1.LabelSelectorOpDoesNotExist})
		case 4: // In, several values
			sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: "app", Operator: metav1.LabelSelectorOpIn,
				Values: []string{pick(g, apps...), pick(g, apps...)}})
		}
	}
	return sel
}

func (g *g) podAffinityTerm(gr *group, a *v1.Affinity) {
	target := gr
	if g.p(0.5) {
		target = pick(g, g.groups...)
	}
	t := v1.PodAffinityTerm{LabelSelector: g.selector(target), TopologyKey: pick(g, topologyKeys...)}
	switch {
	case target.namespace != gr.namespace && g.p(0.8):
		t.Namespaces = []string{target.namespace}
		if g.p(0.5) {
			t.Namespaces = append(t.Namespaces, gr.namespace)
		}
	case g.p(0.15):
		t.NamespaceSelector = pick(g,
			&metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			&metav1.LabelSelector{}, // every namespace
			&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}})
	case g.p(0.1):
		t.Namespaces = []string{gr.namespace}
		t.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}
	}
	if target == gr && g.p(0.3) {
		t.MatchLabelKeys = []string{"pod-template-hash"}
	}
	if g.p(0.1) {
		t.MismatchLabelKeys = []string{pick(g, "version", "tier")}
	}
	anti := g.p(0.55)
	required := g.p(0.6)
	if anti {
		if a.PodAntiAffinity == nil {
			a.PodAntiAffinity = &v1.PodAntiAffinity{}
		}
		if required {
			a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, t)
		} else {
			a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
				v1.WeightedPodAffinityTerm{Weight: int32(g.between(1, 100)), PodAffinityTerm: t})
		}
		return
	}
	if a.PodAffinity == nil {
		a.PodAffinity = &v1.PodAffinity{}
	}
	if required {
		a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, t)
	} else {
		a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
			v1.WeightedPodAffinityTerm{Weight: int32(g.between(1, 100)), PodAffinityTerm: t})
	}
}

func (g *g) spread(gr *group) v1.TopologySpreadConstraint {
	c := v1.TopologySpreadConstraint{
		MaxSkew:           int32(pick(g, 1, 1, 2)),
		TopologyKey:       pick(g, v1.LabelTopologyZone, v1.LabelHostname, LabelRack),
		WhenUnsatisfiable: pick(g, v1.DoNotSchedule, v1.DoNotSchedule, v1.ScheduleAnyway),
		LabelSelector:     g.selector(gr),
	}
	if c.WhenUnsatisfiable == v1.DoNotSchedule && g.p(0.3) {
		c.MinDomains = ptr.To(int32(g.between(2, 4)))
	}
	if g.p(0.3) {
		c.NodeAffinityPolicy = ptr.To(pick(g, v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore))
	}
	if g.p(0.3) {
		c.NodeTaintsPolicy = ptr.To(pick(g, v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore))
	}
	if g.p(0.3) {
		c.MatchLabelKeys = []string{"pod-template-hash"}
	}
	return c
}

func (g *g) nodeRequirement() v1.NodeSelectorRequirement {
	switch g.r.Intn(7) {
	case 0:
		return v1.NodeSelectorRequirement{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{pick(g, "zone-a", "zone-b"), "zone-c"}}
	case 1:
		return v1.NodeSelectorRequirement{Key: LabelDisk, Operator: v1.NodeSelectorOpNotIn, Values: []string{"hdd"}}
	case 2:
		return v1.NodeSelectorRequirement{Key: pick(g, LabelRack, LabelPool, LabelGPU), Operator: v1.NodeSelectorOpExists}
	case 3:
		return v1.NodeSelectorRequirement{Key: pick(g, LabelGPU, LabelPool), Operator: v1.NodeSelectorOpDoesNotExist}
	case 4:
		return v1.NodeSelectorRequirement{Key: LabelGen, Operator: v1.NodeSelectorOpGt, Values: []string{fmt.Sprint(g.between(1, 7))}}
	case 5:
		return v1.NodeSelectorRequirement{Key: LabelGen, Operator: v1.NodeSelectorOpLt, Values: []string{fmt.Sprint(g.between(3, 9))}}
	default:
		return v1.NodeSelectorRequirement{Key: LabelRack, Operator: v1.NodeSelectorOpIn, Values: []string{"rack-1", "rack-2"}}
	}
}

func (g *g) nodeSelectorTerm() v1.NodeSelectorTerm {
	var t v1.NodeSelectorTerm
	for range g.between(1, 2) {
		t.MatchExpressions = append(t.MatchExpressions, g.nodeRequirement())
	}
	if g.p(0.15) {
		// matchFields: metadata.name, one value (validation).
		names := make([]string, 0, len(g.c.Nodes))
		for _, n := range g.c.Nodes {
			names = append(names, n.Name)
		}
		t.MatchFields = []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: pick(g, v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn),
			Values: []string{pick(g, names...)}}}
		if g.p(0.5) {
			t.MatchExpressions = nil
		}
	}
	return t
}

func (g *g) nodeAffinity(a *v1.Affinity) {
	a.NodeAffinity = &v1.NodeAffinity{}
	if g.p(0.75) {
		sel := &v1.NodeSelector{}
		for range g.between(1, 2) {
			sel.NodeSelectorTerms = append(sel.NodeSelectorTerms, g.nodeSelectorTerm())
		}
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = sel
	}
	if g.p(0.5) {
		a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = []v1.PreferredSchedulingTerm{
			{Weight: int32(g.between(1, 100)), Preference: g.nodeSelectorTerm()}}
	}
}

// pods instantiates the groups' replicas, bound and pending, and a few pods of other kinds.
func (g *g) pods() {
	pending := g.between(1, 25)
	bound := g.between(0, 30)
	// Replicas: each group gets a share of the pending and bound pods.
	for pending > 0 || bound > 0 {
		gr := pick(g, g.groups...)
		if bound > 0 && g.p(float64(bound)/float64(bound+pending)) {
			bound--
			g.bind(g.replica(gr, "bound"))
			continue
		}
		if pending > 0 {
			pending--
			g.c.Pending = append(g.c.Pending, g.pendingExtras(g.replica(gr, "pending")))
		}
	}
	if g.opts.Plain {
		return
	}
	// Pending pods of another scheduler, which take nothing.
	for range g.between(0, 2) {
		p := g.replica(pick(g, g.groups...), "other")
		p.Spec.SchedulerName = v1.DefaultSchedulerName
		g.c.Pending = append(g.c.Pending, p)
	}
}

func (g *g) replica(gr *group, kind string) *v1.Pod {
	g.uid++
	p := gr.tmpl.DeepCopy()
	p.Name = fmt.Sprintf("%s-%s-%d", gr.name, kind, g.uid)
	p.UID = types.UID(fmt.Sprintf("uid-%d-%d", g.c.Seed, g.uid))
	p.Labels = copyMap(gr.labels)
	p.Status.Phase = v1.PodPending
	if !g.opts.Plain && g.p(0.15) && p.Labels["pod-template-hash"] != "" {
		// A replica of another revision: matchLabelKeys tell it apart.
		p.Labels["pod-template-hash"] = fmt.Sprintf("%x", g.r.Intn(1<<16))
	}
	MergeLabelKeys(p)
	return p
}

// MergeLabelKeys does what the API server does to a pod at creation (pkg/registry/core/pod/strategy.go,
// MatchLabelKeysInPodAffinity and MatchLabelKeysInPodTopologySpreadSelectorMerge, both on in v1.37): each
// key of matchLabelKeys the pod has a label for becomes "key In (value)" in the term's or constraint's
// selector, each of mismatchLabelKeys "key NotIn (value)".
func MergeLabelKeys(p *v1.Pod) {
	apply := func(sel *metav1.LabelSelector, keys []string, op metav1.LabelSelectorOperator) {
		for _, k := range keys {
			if v, ok := p.Labels[k]; ok {
				sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: op, Values: []string{v}})
			}
		}
	}
	term := func(t *v1.PodAffinityTerm) {
		if t.LabelSelector == nil {
			return
		}
		apply(t.LabelSelector, t.MatchLabelKeys, metav1.LabelSelectorOpIn)
		apply(t.LabelSelector, t.MismatchLabelKeys, metav1.LabelSelectorOpNotIn)
	}
	if a := p.Spec.Affinity; a != nil {
		if pa := a.PodAffinity; pa != nil {
			for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				term(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
			}
			for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
				term(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
			}
		}
		if pa := a.PodAntiAffinity; pa != nil {
			for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				term(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
			}
			for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
				term(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
			}
		}
	}
	for i := range p.Spec.TopologySpreadConstraints {
		if c := &p.Spec.TopologySpreadConstraints[i]; c.LabelSelector != nil {
			apply(c.LabelSelector, c.MatchLabelKeys, metav1.LabelSelectorOpIn)
		}
	}
}

// pendingExtras adds what only pending pods carry: scheduling gates and resource claims.
func (g *g) pendingExtras(p *v1.Pod) *v1.Pod {
	if g.opts.Plain {
		return p
	}
	if g.p(0.05) {
		p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/quota"}}
	}
	if g.p(0.03) {
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("gpu-template")}}
		p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
	}
	return p
}

// portsTaken reports whether a host port of p conflicts with one of a pod holding node (as NodePorts and the
// kubelet's admission judge it: same protocol and port, and the same host IP or either a wildcard).
func (g *g) portsTaken(p *v1.Pod, node string) bool {
	ports := func(p *v1.Pod) []v1.ContainerPort {
		var out []v1.ContainerPort
		for _, c := range p.Spec.InitContainers {
			if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
				out = append(out, c.Ports...)
			}
		}
		for _, c := range p.Spec.Containers {
			out = append(out, c.Ports...)
		}
		return out
	}
	wild := func(ip string) bool { return ip == "" || ip == "0.0.0.0" }
	for _, q := range g.c.Bound {
		if q.Spec.NodeName != node || q.Status.Phase == v1.PodSucceeded || q.Status.Phase == v1.PodFailed {
			continue
		}
		for _, a := range ports(p) {
			for _, b := range ports(q) {
				if a.HostPort > 0 && a.HostPort == b.HostPort && a.Protocol == b.Protocol &&
					(wild(a.HostIP) || wild(b.HostIP) || a.HostIP == b.HostIP) {
					return true
				}
			}
		}
	}
	return false
}

// bind puts a replica on a node it roughly fits (CPU, memory, pod count), or on any node if none: a
// cluster's bound pods need not satisfy the constraints of today (labels change, constraints are
// IgnoredDuringExecution), but mostly do fit. A pod whose host port is taken on its node has failed, as the
// kubelet would have it.
func (g *g) bind(p *v1.Pod) {
	var cpu, mem int64
	for _, c := range p.Spec.Containers {
		cpu += c.Resources.Requests.Cpu().MilliValue()
		mem += c.Resources.Requests.Memory().Value() >> 20
	}
	var fits []*v1.Node
	for _, n := range g.c.Nodes {
		u := g.used[n.Name]
		a := n.Status.Allocatable
		// Bound pods take up to 70% of a node, leaving the pending ones room to compete for.
		if 10*(u[0]+cpu) <= 7*a.Cpu().MilliValue() && 10*(u[1]+mem) <= 7*(a.Memory().Value()>>20) && u[2]+1 < a.Pods().Value() {
			fits = append(fits, n)
		}
	}
	n := pick(g, g.c.Nodes...)
	if len(fits) > 0 && g.p(0.95) {
		n = pick(g, fits...)
	}
	p.Spec.NodeName = n.Name
	p.Status.Phase = v1.PodRunning
	switch {
	case g.opts.Plain:
	case g.portsTaken(p, n.Name):
		p.Status.Phase = v1.PodFailed // the kubelet's admission refuses a host port in use
	case g.p(0.05):
		p.Status.Phase = v1.PodPending // bound, not started
	case g.p(0.08):
		p.Status.Phase = pick(g, v1.PodSucceeded, v1.PodFailed) // holds nothing
	}
	if !g.opts.Plain && g.p(0.3) {
		p.Spec.SchedulerName = v1.DefaultSchedulerName
	}
	if p.Status.Phase == v1.PodRunning || p.Status.Phase == v1.PodPending {
		u := g.used[n.Name]
		u[0], u[1], u[2] = u[0]+cpu, u[1]+mem, u[2]+1
	}
	g.c.Bound = append(g.c.Bound, p)
}
