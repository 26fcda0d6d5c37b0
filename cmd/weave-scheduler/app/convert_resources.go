package app

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/weavesql/weave/scheduler"
)

// Resources as kube-scheduler v1.37.2's NodeResourcesFit counts them
// (pkg/scheduler/framework/plugins/noderesources/fit.go, fitsRequest): a pod's requests are
// k8s.io/component-helpers/resource.PodRequests (containers summed, init containers as their peak, restartable
// init containers (sidecars) added to both, pod-level spec.resources replacing the container aggregate for the
// resources it names, spec.overhead added), and a node's use is the same sum over the pods bound to it, read
// with their in-place resize status. Checked are the pod count, cpu, memory, ephemeral-storage and every scalar
// resource (extended resources such as nvidia.com/gpu, hugepages-<size>, and the kubernetes.io/ and
// attachable-volumes- names), each resource only for a pod that requests some of it.
//
// Units. The state holds integers: cpu in millicores (exact, as the plugin's MilliValue), memory and
// ephemeral-storage in MiB, a hugepages-<size> resource in pages of its size, any other scalar resource in its
// own units (Value, as the plugin). Requests are rounded up and allocatable down, so a placement the models
// accept fits in bytes too; the price is that a node's last MiB (or part of a page) is not used when the byte
// counts would just fit. Every amount is at most maxUnits (the state's integer columns are 32-bit on
// PostgreSQL, and a batch's sums stay far inside the solver's range): a node's allocatable above it counts as
// maxUnits, a bound pod's request above it too (its node then has no room left for that resource, as before
// or less), and a pending pod requesting more is refused (unsupportedRequests).

// maxUnits is the most any amount of the state may be.
const maxUnits = math.MaxInt32

// The options of PodRequests that v1.37.2 uses, with its default feature gates
// (pkg/features/kube_features.go): PodLevelResources (beta, on) reads spec.resources; DRANodeAllocatableResources
// (alpha, off) adds nothing from status.nodeAllocatableResourceClaimStatuses.
var (
	// pendingRequests is NodeResourcesFit's PreFilter (computePodResourceRequest): the spec only.
	pendingRequests = resourcehelper.PodResourcesOptions{}
	// boundRequests is the framework's PodInfo.CalculateResource (NodeInfo.Requested, types.go):
	// InPlacePodVerticalScaling (GA) and InPlacePodLevelResourcesVerticalScaling (beta, on) read a resize in
	// progress: per container the largest of spec, status.allocatedResources and status.resources (only the
	// latter two once the resize is infeasible), and pod-level status.allocatedResources/resources.
	boundRequests = resourcehelper.PodResourcesOptions{UseStatusResources: true, InPlacePodLevelResourcesVerticalScalingEnabled: true}
)

// podRequests returns a pod's requests as NodeResourcesFit counts them: a pod bound to a node (spec.nodeName)
// as it weighs on its node, any other as the pod to place.
func podRequests(p *v1.Pod) v1.ResourceList {
	if p.Spec.NodeName != "" {
		return resourcehelper.PodRequests(p, boundRequests)
	}
	return resourcehelper.PodRequests(p, pendingRequests)
}

// setPodResources fills a converted pod's requests (and its limits, which S8 reads) in the state's units.
func setPodResources(out *scheduler.Pod, p *v1.Pod) {
	req := podRequests(p)
	out.CPU = min(milli(req, v1.ResourceCPU), maxUnits)
	out.Memory = min(mib(req, v1.ResourceMemory, true), maxUnits)
	out.Storage = min(mib(req, v1.ResourceEphemeralStorage, true), maxUnits)
	for name, q := range req {
		if !isScalarResource(name) {
			continue
		}
		if v := units(name, q, true); v > 0 {
			if out.Resources == nil {
				out.Resources = map[string]int64{}
			}
			out.Resources[string(name)] = min(v, maxUnits)
		}
	}
	opts := pendingRequests
	if p.Spec.NodeName != "" {
		opts = boundRequests
	}
	lim := resourcehelper.PodLimits(p, opts)
	out.CPULimit = min(milli(lim, v1.ResourceCPU), maxUnits)
	out.MemoryLimit = min(mib(lim, v1.ResourceMemory, true), maxUnits)
}

// setNodeResources fills a converted node's allocatable in the state's units. A resource the node does not
// report has allocatable 0, as in the plugin: a node without ephemeral-storage takes no pod that requests some.
func setNodeResources(out *scheduler.Node, n *v1.Node) {
	a := n.Status.Allocatable
	out.CPU = min(milli(a, v1.ResourceCPU), maxUnits)
	out.Memory = min(mib(a, v1.ResourceMemory, false), maxUnits)
	out.Storage = min(mib(a, v1.ResourceEphemeralStorage, false), maxUnits)
	out.Pods = min(count(a, v1.ResourcePods), maxUnits)
	for name, q := range a {
		if !isScalarResource(name) {
			continue
		}
		if v := units(name, q, false); v > 0 {
			if out.Resources == nil {
				out.Resources = map[string]int64{}
			}
			out.Resources[string(name)] = min(v, maxUnits)
		}
	}
}

// unsupportedRequests lists the requests of a pending pod beyond what the state counts (maxUnits).
func unsupportedRequests(p *v1.Pod) []unsupportedField {
	req := resourcehelper.PodRequests(p, pendingRequests)
	var out []unsupportedField
	for _, name := range slices.Sorted(maps.Keys(req)) {
		q := req[name]
		var v int64
		unit := "units"
		switch {
		case name == v1.ResourceCPU:
			v, unit = q.MilliValue(), "millicores"
		case name == v1.ResourceMemory || name == v1.ResourceEphemeralStorage:
			v, unit = mib(req, name, true), "MiB"
		case isScalarResource(name):
			v = units(name, q, true)
			if scalarUnit(name) > 1 {
				unit = "pages"
			}
		default:
			continue
		}
		if v > maxUnits {
			out = append(out, unsupportedField{"resources.requests[" + string(name) + "]",
				fmt.Sprintf("the pod requests %s, more than the %d %s weave-scheduler counts per resource", q.String(), maxUnits, unit)})
		}
	}
	return out
}

// units converts a quantity of a scalar resource to the state's unit for it, rounding up (a request) or down
// (allocatable).
func units(name v1.ResourceName, q resource.Quantity, up bool) int64 {
	v, u := q.Value(), scalarUnit(name)
	if u == 1 {
		return v
	}
	if up {
		return v/u + min(v%u, 1)
	}
	return v / u
}

// scalarUnit is the size of the state's unit of a scalar resource: a hugepages-<size> resource counts pages of
// its size (API validation keeps requests multiples of it), any other resource its units (extended resources
// are integers).
func scalarUnit(name v1.ResourceName) int64 {
	if size, ok := strings.CutPrefix(string(name), v1.ResourceHugePagesPrefix); ok {
		if q, err := resource.ParseQuantity(size); err == nil && q.Value() > 0 {
			return q.Value()
		}
	}
	return 1
}

// isScalarResource is kube-scheduler's schedutil.IsScalarResourceName (pkg/scheduler/util/utils.go): the
// resources NodeResourcesFit counts besides cpu, memory, ephemeral-storage and pods.
func isScalarResource(name v1.ResourceName) bool {
	s := string(name)
	return isExtendedResource(name) || strings.HasPrefix(s, v1.ResourceHugePagesPrefix) ||
		strings.Contains(s, v1.ResourceDefaultNamespacePrefix) || strings.HasPrefix(s, v1.ResourceAttachableVolumesPrefix)
}

// isExtendedResource is v1helper.IsExtendedResourceName (pkg/apis/core/v1/helper/helpers.go): a name outside
// the kubernetes.io/ namespace (so with a domain), not under requests., that is a qualified name once
// prefixed with requests. (as quota would name it).
func isExtendedResource(name v1.ResourceName) bool {
	s := string(name)
	native := !strings.Contains(s, "/") || strings.Contains(s, v1.ResourceDefaultNamespacePrefix)
	if native || strings.HasPrefix(s, v1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(v1.DefaultResourceRequestsPrefix+s)) == 0
}
