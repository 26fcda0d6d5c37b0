package app

import (
	"fmt"
	"reflect"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/weavesql/weave/scheduler"
)

// The volume plugins of kube-scheduler v1.37.2's default profile, for a pending pod (read from
// pkg/scheduler/framework/plugins/volumebinding, volumezone, volumerestrictions and nodevolumelimits):
//
//   - VolumeBinding: every claim of the pod (spec.volumes[].persistentVolumeClaim, and the claim of a generic
//     ephemeral volume, <pod>-<volume>, which must be the pod's own) must exist and not be being deleted; an
//     unbound claim waits for its volume (binding mode Immediate: "pod has unbound immediate
//     PersistentVolumeClaims"); a bound claim's PersistentVolume must exist, and the node must meet its
//     required node affinity (its label requirements: the plugin matches them against a node without a name,
//     so matchFields are not read).
//   - VolumeZone: a persistentVolumeClaim volume's PersistentVolume labelled with a zone or region
//     (topology.kubernetes.io/zone|region or their failure-domain.beta forms, several zones joined by "__")
//     needs a node with the same label (or, for a beta key, its GA form) in that set, unless the node carries
//     none of the four labels.
//
// Both become node selectors of the pod (scheduler.Pod.VolumeNodeSelectors, policy H17). What weave-scheduler
// does not model is refused: delayed binding (WaitForFirstConsumer: the scheduler would pick or provision the
// volume), ReadWriteOncePod claims (VolumeRestrictions: one pod in the cluster), volumes whose attachments
// NodeVolumeLimits counts or VolumeRestrictions keeps apart (CSI, the in-tree cloud disks, RBD, iSCSI), and
// volume types this list does not name.

// volumeVerdict is what a pending pod's volumes ask of the scheduler.
type volumeVerdict struct {
	selectors   [][][]scheduler.NodeRequirement // node constraints, one selector each
	unsupported []unsupportedField              // fields weave-scheduler refuses
	waiting     string                          // why the pod cannot be scheduled until a claim or volume changes
}

// inlineVolumeTypes are the volume sources no Filter plugin of the default profile reads.
var inlineVolumeTypes = map[string]bool{
	"emptyDir": true, "configMap": true, "secret": true, "downwardAPI": true, "projected": true,
	"hostPath": true, "image": true, "nfs": true, "gitRepo": true,
}

// volumeType is the JSON name of the volume source a volume sets.
func volumeType(vs v1.VolumeSource) string { return setSource(reflect.ValueOf(vs)) }

// setSource is the JSON name of the one pointer field a volume source struct sets ("" if none).
func setSource(rv reflect.Value) string {
	for i := 0; i < rv.NumField(); i++ {
		if f := rv.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			name, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("json"), ",")
			return name
		}
	}
	return ""
}

// persistentVolumeTypes are the PersistentVolume sources whose node constraints are their node affinity
// and labels alone.
var persistentVolumeTypes = map[string]bool{"local": true, "hostPath": true, "nfs": true}

// persistentVolumeType is the JSON name of the source a PersistentVolume sets.
func persistentVolumeType(pv *v1.PersistentVolume) string {
	return setSource(reflect.ValueOf(pv.Spec.PersistentVolumeSource))
}

// volumeLister is what volumeConstraints reads of the cluster.
type volumeLister interface {
	claim(ns, name string) (*v1.PersistentVolumeClaim, error)
	volume(name string) (*v1.PersistentVolume, error)
	storageClass(name string) (*storagev1.StorageClass, error)
}

// volumeConstraints reads a pending pod's volumes as the volume plugins do.
func volumeConstraints(p *v1.Pod, l volumeLister) volumeVerdict {
	var out volumeVerdict
	for _, vol := range p.Spec.Volumes {
		typ := volumeType(vol.VolumeSource)
		field := fmt.Sprintf("spec.volumes[%s].%s", vol.Name, typ)
		var claimName string
		switch {
		case vol.PersistentVolumeClaim != nil:
			claimName = vol.PersistentVolumeClaim.ClaimName
		case vol.Ephemeral != nil:
			claimName = p.Name + "-" + vol.Name
		case inlineVolumeTypes[typ]:
			continue
		default:
			out.unsupported = append(out.unsupported, unsupportedField{field, "the scheduler's volume plugins for this volume type are not modelled"})
			continue
		}
		pvc, err := l.claim(p.Namespace, claimName)
		switch {
		case apierrors.IsNotFound(err):
			out.waitFor(fmt.Sprintf("persistentvolumeclaim %q not found", claimName))
			continue
		case err != nil:
			out.waitFor(fmt.Sprintf("persistentvolumeclaim %q: %v", claimName, err))
			continue
		case pvc.DeletionTimestamp != nil:
			out.waitFor(fmt.Sprintf("persistentvolumeclaim %q is being deleted", claimName))
			continue
		case vol.Ephemeral != nil && !metav1.IsControlledBy(pvc, p):
			out.waitFor(fmt.Sprintf("PVC %s/%s was not created for pod %s/%s (pod is not owner)", pvc.Namespace, pvc.Name, p.Namespace, p.Name))
			continue
		}
		for _, m := range pvc.Spec.AccessModes {
			if m == v1.ReadWriteOncePod {
				out.unsupported = append(out.unsupported, unsupportedField{field, "ReadWriteOncePod claims (VolumeRestrictions) are not modelled"})
			}
		}
		if pvc.Spec.VolumeName == "" {
			class := storagehelpers.GetPersistentVolumeClaimClass(pvc)
			if class != "" {
				sc, err := l.storageClass(class)
				if err != nil {
					out.waitFor(fmt.Sprintf("storageclass %q: %v", class, err))
					continue
				}
				if sc.VolumeBindingMode != nil && *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
					out.unsupported = append(out.unsupported, unsupportedField{field, "delayed volume binding (WaitForFirstConsumer) is not supported"})
					continue
				}
			}
			out.waitFor("pod has unbound immediate PersistentVolumeClaims")
			continue
		}
		pv, err := l.volume(pvc.Spec.VolumeName)
		if err != nil {
			out.waitFor(fmt.Sprintf("persistentvolume %q: %v", pvc.Spec.VolumeName, err))
			continue
		}
		if t := persistentVolumeType(pv); !persistentVolumeTypes[t] {
			out.unsupported = append(out.unsupported, unsupportedField{field,
				fmt.Sprintf("persistent volume %s is of type %s, whose attachments the scheduler's volume plugins count", pv.Name, t)})
			continue
		}
		if na := pv.Spec.NodeAffinity; na != nil && na.Required != nil {
			if sel, ok := volumeNodeSelector(na.Required); ok {
				out.selectors = append(out.selectors, sel)
			}
		}
		if vol.PersistentVolumeClaim != nil {
			out.selectors = append(out.selectors, zoneSelectors(pv)...)
		}
	}
	return out
}

func (v *volumeVerdict) waitFor(why string) {
	if v.waiting == "" {
		v.waiting = why
	}
}

// volumeNodeSelector converts a PersistentVolume's required node affinity as VolumeBinding evaluates it
// (CheckNodeAffinity on a node with labels only): matchFields are not read, so a term with only matchFields
// matches every node, and then the selector constrains nothing (ok false).
func volumeNodeSelector(ns *v1.NodeSelector) ([][]scheduler.NodeRequirement, bool) {
	out := make([][]scheduler.NodeRequirement, 0, len(ns.NodeSelectorTerms))
	for _, t := range ns.NodeSelectorTerms {
		if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
			continue // an empty term matches no node
		}
		if len(t.MatchExpressions) == 0 {
			return nil, false
		}
		out = append(out, requirements(t.MatchExpressions, false))
	}
	return out, true
}

// topologyLabels are VolumeZone's: a node with none of them takes any volume.
var topologyLabels = []string{v1.LabelFailureDomainBetaZone, v1.LabelFailureDomainBetaRegion, v1.LabelTopologyZone, v1.LabelTopologyRegion}

// gaLabel is the GA form of a beta topology label (VolumeZone's translateToGALabel).
func gaLabel(key string) string {
	switch key {
	case v1.LabelFailureDomainBetaRegion:
		return v1.LabelTopologyRegion
	case v1.LabelFailureDomainBetaZone:
		return v1.LabelTopologyZone
	}
	return key
}

// zoneSelectors are VolumeZone's constraints of a PersistentVolume: for each topology label it carries, a
// node whose label (or, for a beta key the node lacks, its GA form) is one of the label's zones, or a node
// with none of the four labels. A label that does not parse (an empty zone in the list) is ignored, as the
// plugin does.
func zoneSelectors(pv *v1.PersistentVolume) [][][]scheduler.NodeRequirement {
	var noTopology []scheduler.NodeRequirement
	for _, k := range topologyLabels {
		noTopology = append(noTopology, scheduler.NodeRequirement{Key: k, Operator: string(v1.NodeSelectorOpDoesNotExist)})
	}
	var out [][][]scheduler.NodeRequirement
	for _, key := range topologyLabels {
		value, ok := pv.Labels[key]
		if !ok {
			continue
		}
		var zones []string
		valid := true
		for _, z := range strings.Split(value, "__") {
			z = strings.TrimSpace(z)
			valid = valid && z != ""
			zones = append(zones, z)
		}
		if !valid {
			continue
		}
		in := func(k string) scheduler.NodeRequirement {
			return scheduler.NodeRequirement{Key: k, Operator: string(v1.NodeSelectorOpIn), Values: zones}
		}
		sel := [][]scheduler.NodeRequirement{{in(key)}, noTopology}
		if ga := gaLabel(key); ga != key {
			sel = append(sel, []scheduler.NodeRequirement{{Key: key, Operator: string(v1.NodeSelectorOpDoesNotExist)}, in(ga)})
		}
		out = append(out, sel)
	}
	return out
}
