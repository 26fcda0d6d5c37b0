package app

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"

	"github.com/weavesql/weave/scheduler"
)

// hostPorts lists the host ports of a pod as NodePorts reads them (pkg/scheduler/util GetHostPorts): those of
// its containers and of its restartable init containers (sidecars), which run as long as the pod; TCP and
// every address (0.0.0.0) when unset.
func hostPorts(p *v1.Pod) []scheduler.HostPort {
	var out []scheduler.HostPort
	add := func(c v1.Container) {
		for _, port := range c.Ports {
			if port.HostPort > 0 {
				hp := scheduler.HostPort{Protocol: string(port.Protocol), Port: int64(port.HostPort), HostIP: port.HostIP}
				if hp.Protocol == "" { // HostPortInfo's sanitize
					hp.Protocol = string(v1.ProtocolTCP)
				}
				if hp.HostIP == "" {
					hp.HostIP = "0.0.0.0"
				}
				out = append(out, hp)
			}
		}
	}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			add(c)
		}
	}
	for _, c := range p.Spec.Containers {
		add(c)
	}
	return out
}

// targetVersion is the Kubernetes version whose scheduling contract weave-scheduler implements: the node
// features a pod needs depend on it (a feature beyond its max version is taken for granted).
var targetVersion = version.MustParse("1.37.2")

// unknownFeature is a feature no node declares: the requirement of a pod whose features could not be
// inferred, which then fits no node (never one it may not use).
const unknownFeature = "weave-scheduler/unknown-feature-requirement"

// declaredFeatures lists the node features the pod's spec needs, as the NodeDeclaredFeatures plugin infers
// them for kube-scheduler v1.37.2.
func declaredFeatures(p *v1.Pod) []string {
	reqs, err := ndf.DefaultFramework.InferForPodScheduling(&ndf.PodInfo{Spec: &p.Spec}, targetVersion)
	if err != nil {
		return []string{unknownFeature}
	}
	if reqs.IsEmpty() {
		return nil
	}
	names, err := ndf.DefaultFramework.Unmap(reqs)
	if err != nil {
		return []string{unknownFeature}
	}
	return names
}
