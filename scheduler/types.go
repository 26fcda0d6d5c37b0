package scheduler

// Node is the scheduler's view of a Kubernetes node. Resources are
// integers: CPU in millicores, memory and ephemeral storage in MiB.
type Node struct {
	Name string
	// Zone is the topology.kubernetes.io/zone label ("" when none).
	Zone                                      string
	CPU, Memory, Storage, Pods                int64
	Unschedulable                             bool
	NotReady, NetworkUnavailable              bool
	MemoryPressure, DiskPressure, PIDPressure bool
	// Labels; kubernetes.io/hostname and the zone label are added.
	Labels map[string]string
	Taints []Taint
	// Images maps image names present on the node to their size in MiB.
	Images map[string]int64
	// Features are the features the node declares (status.declaredFeatures).
	Features []string

	// Resources maps the scalar resources of status.allocatable
	// (extended resources, hugepages-<size>) to their allocatable amount,
	// in the unit the caller chose for each resource (the same as the
	// pods' requests); a resource not listed has allocatable 0. Amounts
	// fit 32 bits (PostgreSQL's integer), as CPU, Memory and Storage do.
	Resources map[string]int64
}

// Taint is a node taint; Effect is NoSchedule, PreferNoSchedule or NoExecute.
type Taint struct{ Key, Value, Effect string }

// Toleration tolerates taints (TaintToleration, k8s.io/api/core/v1
// Toleration.ToleratesTaint): an empty Effect matches every effect, an
// empty Key every key; Operator Exists matches every value, Equal (or "")
// the value Value. Lt and Gt (feature gate TaintTolerationComparisonOperators,
// off by default) tolerate nothing.
type Toleration struct{ Key, Operator, Value, Effect string }

// NodeRequirement is one requirement of a node-selector term, as
// k8s.io/component-helpers' nodeaffinity evaluates it. Operator is In,
// NotIn, Exists, DoesNotExist, Gt or Lt (a label's value read as a base-10
// int64, against the one value), or Never: a term Kubernetes cannot parse
// (an invalid key, value or operator), which matches no node. Field marks
// a matchFields requirement: Key metadata.name, Operator In or NotIn with
// one value.
type NodeRequirement struct {
	Key, Operator string
	Values        []string
	Field         bool
}

// Node-selector operators beyond the label selector's four.
const (
	OpGt    = "Gt"
	OpLt    = "Lt"
	OpNever = "Never"
)

// PreferredNodeTerm is a preferred node-affinity term with its weight.
type PreferredNodeTerm struct {
	Weight       int64
	Requirements []NodeRequirement
}

// LabelSelector is a Kubernetes label selector (metav1.LabelSelector): the
// conjunction of every MatchLabels pair and every MatchExpressions
// requirement, met by one and the same set of labels. A nil *LabelSelector
// matches nothing; an empty one (no pair, no requirement) matches
// everything.
type LabelSelector struct {
	MatchLabels      map[string]string
	MatchExpressions []LabelRequirement
}

// LabelRequirement is one requirement of a label selector: Operator is In,
// NotIn, Exists or DoesNotExist (another operator is never met). In needs
// the label with one of Values; NotIn its absence or another value.
type LabelRequirement struct {
	Key, Operator string
	Values        []string
}

// PodAffinityTerm is an inter-pod affinity or anti-affinity term
// (v1.PodAffinityTerm): the pods that Selector selects, in the namespaces
// the term covers, within the topology domain of TopologyKey. The term
// covers the namespaces listed in Namespaces and those whose labels
// NamespaceSelector matches (an empty selector: every namespace); with
// neither, the pod's own namespace. Required terms are hard; the others
// are preferred with a weight.
type PodAffinityTerm struct {
	Anti, Required    bool
	Weight            int64
	Selector          *LabelSelector
	Namespaces        []string
	NamespaceSelector *LabelSelector
	TopologyKey       string
}

// SpreadConstraint is a topology spread constraint over the domains of
// TopologyKey. With MaxSkew > 0 it is PodTopologySpread's
// (v1.TopologySpreadConstraint; policy N3 when Hard, i.e. DoNotSchedule):
// it counts the pods of the pod's namespace that Selector selects (nil
// selects none; matchLabelKeys already merged), on the nodes that carry
// every topology key of the pod's hard constraints and pass
// NodeAffinityPolicy ("Honor", the default, or "Ignore": the pod's node
// selector and required node affinity) and NodeTaintsPolicy ("Ignore", the
// default, or "Honor": the pod tolerates the node's NoSchedule and
// NoExecute taints); with fewer such domains than MinDomains (0 counts as
// 1) the least loaded domain counts as empty. MaxSkew 0 is weave's own
// even spreading of the pod's Group: at most ceil(pods/domains) per domain
// (policy N2; Selector and the policies are not read).
type SpreadConstraint struct {
	TopologyKey        string
	MaxSkew            int64
	Hard               bool
	Selector           *LabelSelector
	MinDomains         int64
	NodeAffinityPolicy string
	NodeTaintsPolicy   string
}

// HostPort is a port a container opens on the host. HostIP "" or 0.0.0.0
// binds every address: it conflicts with any use of the protocol and port
// on the node, a specific address only with the same address and 0.0.0.0
// (NodePorts, HostPortInfo.CheckConflict).
type HostPort struct {
	Protocol string
	Port     int64
	HostIP   string
}

// Pod phases.
const (
	PhasePending   = "Pending"
	PhaseRunning   = "Running"
	PhaseSucceeded = "Succeeded"
	PhaseFailed    = "Failed"
)

// Well-known label keys.
const (
	LabelHostname = "kubernetes.io/hostname"
	LabelZone     = "topology.kubernetes.io/zone"
)

// Pod is the scheduler's view of a pod.
type Pod struct {
	// Name is unique (namespace/name in Kubernetes).
	Name, Namespace string
	SchedulerName   string
	// Phase defaults to Pending; NodeName is the node it is bound to.
	Phase, NodeName string
	// RequestedNode is spec.nodeName.
	RequestedNode string
	// Terminating is set once the pod is being deleted
	// (metadata.deletionTimestamp): it still holds its node, and
	// InterPodAffinity still sees it, but PodTopologySpread no longer
	// counts it.
	Terminating           bool
	CPU, Memory, Storage  int64
	CPULimit, MemoryLimit int64
	Priority              int64
	// Group is the owning controller (replica group); Service the service
	// whose pods must share a zone (H15), if any.
	Group, Service string
	// MaxPerNode limits the pods of Group on one node (0: no limit).
	MaxPerNode            int64
	Labels                map[string]string
	NodeSelector          map[string]string
	RequiredNodeAffinity  [][]NodeRequirement
	PreferredNodeAffinity []PreferredNodeTerm
	Tolerations           []Toleration
	Affinity              []PodAffinityTerm
	Spread                []SpreadConstraint
	HostPorts             []HostPort
	Volumes               []string
	Images                []string
	// VolumeNodeSelectors are the node constraints of the pod's volumes
	// (VolumeBinding: a bound PersistentVolume's node affinity; VolumeZone:
	// its zone and region labels). Each is a node selector, its terms ORed
	// as in RequiredNodeAffinity; every one must hold.
	VolumeNodeSelectors [][][]NodeRequirement
	// Features are the node features the pod needs (NodeDeclaredFeatures:
	// inferred from its spec by k8s.io/component-helpers/nodedeclaredfeatures).
	Features []string
	// NeverPreempts is preemptionPolicy Never: the pod waits for room and
	// never has other pods evicted for it.
	NeverPreempts bool

	// Resources maps the scalar resources the pod requests (extended
	// resources, hugepages-<size>) to the request, in the nodes' unit for
	// it; a pod fits a node only where each positive request fits.
	Resources map[string]int64

	// PodGroup names the pod's PodGroup (spec.schedulingGroup.podGroupName,
	// as the key the caller gives State.PodGroups, e.g. namespace/name):
	// its pods are decided together (gang.go). "" for none.
	PodGroup string

	created int64 // arrival order, set by the scheduler
}

// Binding places a pod on a node.
type Binding struct{ Pod, Node string }

// Unschedulable is a pod the batch left without a node.
type Unschedulable struct {
	Pod    string
	Reason string
}

// Eviction is a bound pod the preemption model evicts.
type Eviction struct{ Pod, Node string }

// PodGroup is the scheduler's view of a PodGroup (scheduling.k8s.io/v1beta1,
// kube-scheduler v1.37's GangScheduling and TopologyPlacement plugins): the
// pods naming it (Pod.PodGroup) are placed all or nothing, at least
// MinCount of them counting those already bound (G1), and, with a
// TopologyKey, every pod of the group, bound ones included, on nodes that
// carry that label with one and the same value (G2). A group is not
// considered before MinCount of its pods exist (GangScheduling's
// PreEnqueue); the pods of a group whose PodGroup is unknown wait.
type PodGroup struct {
	// Name is the key pods name it by.
	Name string
	// MinCount is schedulingPolicy.gang.minCount; 0 or 1 for a basic
	// group (schedulingPolicy.basic), whose pods are placed as they fit.
	MinCount int64
	// TopologyKey is schedulingConstraints.topology[0].key ("" for none).
	TopologyKey string
	// DisruptAll is disruptionMode all: a preemption plan evicts every
	// live bound pod of the group or none of them (G3). Otherwise (single,
	// the default) each is a victim of its own.
	DisruptAll bool
	// NeverPreempts is the PodGroup's preemptionPolicy Never: no pod is
	// evicted for its pods (as for a group with a pod whose own
	// preemptionPolicy is Never).
	NeverPreempts bool
}
