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
	{"h06_host_ports.sql", "H6", "NodePorts", true, both},
	{"h07_requested_node.sql", "H7", "NodeName", true, both},
	{"h08_bound_stay.sql", "H8", "(binding is final)", true, both},
	{"h09_volume_zone.sql", "H9", "VolumeZone", true, both},
	{"h10_taints_no_schedule.sql", "H10", "TaintToleration (NoSchedule)", true, both},
	{"h11_taints_no_execute.sql", "H11", "TaintToleration (NoExecute)", true, both},
	{"h12_node_selector.sql", "H12", "NodeAffinity (nodeSelector)", true, both},
	{"h13_node_affinity.sql", "H13", "NodeAffinity (required terms)", true, both},
	{"h14a_pod_anti_affinity_bound.sql", "H14", "InterPodAffinity (anti-affinity, bound pods)", true, both},
	{"h14b_existing_anti_affinity.sql", "H14", "InterPodAffinity (existing pods' anti-affinity)", true, both},
	{"h14c_anti_affinity_batch.sql", "H14", "InterPodAffinity (anti-affinity within the batch)", true, both},
	{"h14d_pod_affinity.sql", "H14", "InterPodAffinity (required affinity)", true, both},
	{"h15_service_affinity.sql", "H15", "ServiceAffinity", true, both},
	{"n1_max_per_node.sql", "N1", "new: at most N pods of a group per node (k8s #40358)", true, both},
	{"n2_even_spread.sql", "N2", "new: even spreading, ceil(pods/domains)", true, both},
	{"n3_topology_spread.sql", "N3", "PodTopologySpread (DoNotSchedule, maxSkew)", true, both},
	{"p01_place_pods.sql", "P1", "scheduling queue (unplaced pods get no node)", false, both},
	{"p02_evictions.sql", "P2", "new: cross-node preemption (DefaultPreemption)", false, []ModelKind{Preemption}},
	{"s01_spread_group.sql", "S1", "SelectorSpread", false, both},
	{"s02_least_requested_cpu.sql", "S2", "NodeResourcesFit LeastAllocated (CPU)", false, both},
	{"s03_least_requested_memory.sql", "S3", "NodeResourcesFit LeastAllocated (memory)", false, both},
	{"s04_balanced_allocation.sql", "S4", "NodeResourcesBalancedAllocation", false, both},
	{"s05_least_requested_pods.sql", "S5", "NodeResourcesFit (pods)", false, both},
	{"s06_preferred_node_affinity.sql", "S6", "NodeAffinity (preferred)", false, both},
	{"s07_preferred_pod_affinity.sql", "S7", "InterPodAffinity (preferred)", false, both},
	{"s08_resource_limits.sql", "S8", "NodeResourceLimits", false, both},
	{"s09_image_locality.sql", "S9", "ImageLocality", false, both},
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
	var b strings.Builder
	b.WriteString(mustRead("sql/schema.sql"))
	for _, p := range PoliciesOf(kind) {
		b.WriteString("\n-- policy file " + p.File + "\n")
		b.WriteString(p.Source())
	}
	return b.String()
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
