package scheduler

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed sql/schema.sql sql/policies/*.sql
var sqlFiles embed.FS

// ModelKind names one of the scheduler's two models.
type ModelKind string

const (
	// Placement decides the pending pods of one batch; running pods enter
	// only as per-node aggregates.
	Placement ModelKind = "placement"
	// Preemption also decides the lower-priority bound pods it may evict:
	// each keeps its node or gets none.
	Preemption ModelKind = "preemption"
)

// Policy is one policy file.
type Policy struct {
	// File is the file name under sql/policies.
	File string
	// ID is the paper's name (H1..H15, S1..S9) or N1.. for new policies.
	ID string
	// Plugin is the kube-scheduler plugin the policy mirrors.
	Plugin string
	// Hard is true for hard constraints.
	Hard bool
	// Models lists the models that include it.
	Models []ModelKind
}

var both = []ModelKind{Placement, Preemption}

// Policies is the registry: every policy file and the models using it.
var Policies = []Policy{
	{"h01_node_ready.sql", "H1", "NodeReady (CheckNodeCondition)", true, both},
	{"h02_memory_pressure.sql", "H2", "CheckNodeMemoryPressure", true, both},
	{"h03_disk_pid_pressure.sql", "H3", "CheckNodeDiskPressure, CheckNodePIDPressure", true, both},
	{"h04_unschedulable.sql", "H4", "NodeUnschedulable", true, both},
	{"h05_capacity.sql", "H5", "NodeResourcesFit", true, both},
	{"h05b_scalar_resources.sql", "H5", "NodeResourcesFit (extended resources, hugepages)", true, both},
	{"h06_host_ports.sql", "H6", "NodePorts (bound pods)", true, both},
	{"h06b_host_ports_batch.sql", "H6", "NodePorts (within the batch)", true, both},
	{"h07_requested_node.sql", "H7", "NodeName", true, both},
	{"h08_bound_stay.sql", "H8", "(binding is final)", true, both},
	{"h09_volume_zone.sql", "H9", "VolumeZone", true, both},
	{"h10_taints_no_schedule.sql", "H10", "TaintToleration (NoSchedule)", true, both},
	{"h11_taints_no_execute.sql", "H11", "TaintToleration (NoExecute)", true, both},
	{"h12_node_selector.sql", "H12", "NodeAffinity (nodeSelector)", true, both},
	{"h13_node_affinity.sql", "H13", "NodeAffinity (required terms)", true, both},
	{"h14a_pod_anti_affinity_bound.sql", "H14", "InterPodAffinity (anti-affinity, bound pods)", true, both},
	{"h14b_existing_anti_affinity.sql", "H14", "InterPodAffinity (existing pods' anti-affinity)", true, both},
	{"h14c_anti_affinity_batch.sql", "H14", "InterPodAffinity (anti-affinity within the batch, zones)", true, both},
	{"h14d_pod_affinity.sql", "H14", "InterPodAffinity (required affinity)", true, both},
	{"h14e_anti_affinity_batch_node.sql", "H14", "InterPodAffinity (anti-affinity within the batch, hostname)", true, both},
	{"h14f_anti_affinity_batch_pairs.sql", "H14", "InterPodAffinity (anti-affinity within the batch, other pairs)", true, both},
	{"h14g_pod_affinity_first.sql", "H14", "InterPodAffinity (required affinity, the first pods of a group)", true, both},
	{"h15_service_affinity.sql", "H15", "ServiceAffinity", true, both},
	{"h16_node_declared_features.sql", "H16", "NodeDeclaredFeatures", true, both},
	{"h17_volume_node_affinity.sql", "H17", "VolumeBinding, VolumeZone (node constraints of bound volumes)", true, both},
	{"g01_gang.sql", "G1", "GangScheduling (PodGroup minCount, all or nothing)", true, both},
	{"g02_topology.sql", "G2", "TopologyPlacement (PodGroup topology: one domain per group)", true, both},
	{"g03_disrupt_all.sql", "G3", "DefaultPreemption (PodGroup disruptionMode all: evicted whole or not at all)", true, []ModelKind{Preemption}},
	{"n1_max_per_node.sql", "N1", "new: at most N pods of a group per node (k8s #40358)", true, both},
	{"n2_even_spread.sql", "N2", "new: even spreading, ceil(pods/domains)", true, both},
	{"n3_topology_spread.sql", "N3", "PodTopologySpread (DoNotSchedule, maxSkew)", true, both},
	{"n4_headroom.sql", "N4", "new: keep room for large pods (the most CPU and memory left on a node)", false, []ModelKind{Placement}},
	{"p01_place_pods.sql", "P1", "scheduling queue (unplaced pods get no node)", false, both},
	{"p02_evictions.sql", "P2", "new: cross-node preemption (DefaultPreemption)", false, []ModelKind{Preemption}},
	{"p03_disruption_budgets.sql", "P3", "PodDisruptionBudget (the Eviction API: at most disruptionsAllowed of a budget's pods)", true, []ModelKind{Preemption}},
	{"s01_spread_group.sql", "S1", "SelectorSpread", false, both},
	{"s02_least_requested_cpu.sql", "S2", "NodeResourcesFit LeastAllocated (CPU)", false, both},
	{"s03_least_requested_memory.sql", "S3", "NodeResourcesFit LeastAllocated (memory)", false, both},
	{"s04_balanced_allocation.sql", "S4", "NodeResourcesBalancedAllocation", false, both},
	{"s05_least_requested_pods.sql", "S5", "NodeResourcesFit (pods)", false, both},
	{"s06_preferred_node_affinity.sql", "S6", "NodeAffinity (preferred)", false, both},
	{"s07_preferred_pod_affinity.sql", "S7", "InterPodAffinity (preferred)", false, both},
	{"s08_resource_limits.sql", "S8", "NodeResourceLimits", false, both},
	{"s09_image_locality.sql", "S9", "ImageLocality", false, both},
	// N5 comes last: the grounder reads the relations in the order of the
	// views, and N5's (whole_domain_cost) is the slowest read of a batch
	// of PodGroups, so the views before it are grounded while it is read
	// (the balancing scores were 6 ms of a 100-pod batch at 500 nodes
	// grounded after it).
	{"n5_whole_domains.sql", "N5", "new: keep whole domains free for waiting PodGroups (anti-fragmentation)", false, []ModelKind{Placement}},
}

// Source returns the text of a policy file.
func (p Policy) Source() string { return mustRead("sql/policies/" + p.File) }

// Lines counts the SQL lines of a policy file: neither blank nor comment.
func (p Policy) Lines() int { return sqlLines(p.Source()) }

func sqlLines(src string) int {
	n := 0
	for _, l := range strings.Split(src, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "--") {
			n++
		}
	}
	return n
}

func mustRead(name string) string {
	b, err := fs.ReadFile(sqlFiles, name)
	if err != nil {
		panic(fmt.Sprintf("scheduler: embedded %s: %v", name, err))
	}
	return string(b)
}

// SchemaSQL returns the schema text of a model: the shared tables and views
// followed by the model's policy files.
func SchemaSQL(kind ModelKind) string {
	s, _ := ModelSQL(kind, nil)
	return s
}

// ModelSQL returns the schema text of a model without the policies whose
// IDs are in disabled (every file of an ID: H14 is four), the way a
// kube-scheduler profile disables plugins. It fails as CheckDisabled does.
// Compile it with CompileOptions.
func ModelSQL(kind ModelKind, disabled []string) (string, error) {
	off, err := disabledSet(disabled)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(mustRead("sql/schema.sql"))
	for _, p := range PoliciesOf(kind) {
		if off[p.ID] {
			continue
		}
		b.WriteString("\n-- policy file " + p.File + "\n")
		b.WriteString(p.Source())
	}
	return b.String(), nil
}

// RequiredPolicies are the policies the models are built on; they cannot be
// disabled:
//   - H8 (a bound pod keeps its node or is evicted): without it the
//     preemption model would move running pods to other nodes, which
//     Kubernetes cannot do, and the scheduler would believe them moved;
//   - P1 (place pods, by priority): the objective that places anything at
//     all; without it leaving every pod unplaced is optimal;
//   - P2 (fewest evictions): without it the preemption model may evict
//     any pod of lower priority, needed or not.
var RequiredPolicies = []string{"H8", "P1", "P2"}

// PolicyIDs lists the policy IDs of the registry, in registry order, each
// once.
func PolicyIDs() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range Policies {
		if !seen[p.ID] {
			seen[p.ID] = true
			out = append(out, p.ID)
		}
	}
	return out
}

// CheckDisabled validates a list of policy IDs to disable: each must be a
// policy of the registry (IDs are case-insensitive) and not one of
// RequiredPolicies.
func CheckDisabled(ids []string) error {
	_, err := disabledSet(ids)
	return err
}

func disabledSet(ids []string) (map[string]bool, error) {
	known := map[string]bool{}
	for _, id := range PolicyIDs() {
		known[id] = true
	}
	off := map[string]bool{}
	for _, id := range ids {
		id = strings.ToUpper(strings.TrimSpace(id))
		if id == "" {
			continue
		}
		if !known[id] {
			return nil, fmt.Errorf("scheduler: unknown policy %q; the policies are %s", id, strings.Join(PolicyIDs(), ", "))
		}
		for _, r := range RequiredPolicies {
			if id == r {
				return nil, fmt.Errorf("scheduler: policy %s cannot be disabled: the models are built on %s", id, strings.Join(RequiredPolicies, ", "))
			}
		}
		off[id] = true
	}
	return off, nil
}

// relax removes from a state (a clone: it is changed) the inputs of the
// disabled hard policies, so that State.Check and FeasibleNodes on it check
// only the enabled ones. Caveat: H1 and H4 also decide which domains count
// for N2/N3 spreading; with H1 or H4 disabled the check counts not-ready or
// unschedulable nodes as domains too.
func relax(st *State, off map[string]bool) *State {
	if len(off) == 0 {
		return st
	}
	for _, n := range st.Nodes {
		if off["H1"] {
			n.NotReady, n.NetworkUnavailable = false, false
		}
		if off["H2"] {
			n.MemoryPressure = false
		}
		if off["H3"] {
			n.DiskPressure, n.PIDPressure = false, false
		}
		if off["H4"] {
			n.Unschedulable = false
		}
		if off["H5"] {
			const huge = 1 << 50
			n.CPU, n.Memory, n.Storage, n.Pods = huge, huge, huge, huge
		}
		if off["H10"] || off["H11"] {
			var ts []Taint
			for _, t := range n.Taints {
				if !(off["H10"] && t.Effect == "NoSchedule" || off["H11"] && t.Effect == "NoExecute") {
					ts = append(ts, t)
				}
			}
			n.Taints = ts
		}
	}
	if off["H9"] {
		st.Volumes = map[string]string{}
	}
	for _, g := range st.PodGroups {
		if off["G1"] {
			g.MinCount = 1
		}
		if off["G2"] {
			g.TopologyKey = ""
		}
		if off["G3"] {
			g.DisruptAll = false
		}
	}
	for _, p := range st.Pods {
		if off["H6"] {
			p.HostPorts = nil
		}
		if off["H5"] {
			p.Resources = nil
		}
		if off["H7"] {
			p.RequestedNode = ""
		}
		if off["H12"] {
			p.NodeSelector = nil
		}
		if off["H13"] {
			p.RequiredNodeAffinity = nil
		}
		if off["H14"] {
			var as []PodAffinityTerm
			for _, a := range p.Affinity {
				if !a.Required {
					as = append(as, a)
				}
			}
			p.Affinity = as
		}
		if off["H15"] {
			p.Service = ""
		}
		if off["H16"] {
			p.Features = nil
		}
		if off["H17"] {
			p.VolumeNodeSelectors = nil
		}
		if off["N1"] {
			p.MaxPerNode = 0
		}
		if off["N2"] || off["N3"] {
			var sc []SpreadConstraint
			for _, c := range p.Spread {
				if !(c.Hard && (off["N2"] && c.MaxSkew == 0 || off["N3"] && c.MaxSkew > 0)) {
					sc = append(sc, c)
				}
			}
			p.Spread = sc
		}
	}
	return st
}

// PoliciesOf lists the policies of a model, in registry order.
func PoliciesOf(kind ModelKind) []Policy {
	var out []Policy
	for _, p := range Policies {
		for _, k := range p.Models {
			if k == kind {
				out = append(out, p)
			}
		}
	}
	return out
}

// policyFiles lists the files under sql/policies, sorted.
func policyFiles() []string {
	ents, err := fs.ReadDir(sqlFiles, "sql/policies")
	if err != nil {
		panic(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}
