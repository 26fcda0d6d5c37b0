package app

import (
	"context"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Volume zones (H9, VolumeZone). A pod's volumes in the scheduler's state are its PersistentVolumeClaims, named
// namespace/claim (a generic ephemeral volume's claim is pod-volume); the volume table gives each claim the
// zone of the PersistentVolume it is bound to — "" (no constraint) while it is unbound, for a volume that is
// not zonal, and for one that spans several zones (the state has one zone per volume). The PV and PVC
// informers keep it current: a claim changes when it binds, a volume when its labels or affinity change.

// claimKey is the scheduler's volume name of a claim.
func claimKey(ns, name string) string { return ns + "/" + name }

// podClaims lists the claims a pod uses.
func podClaims(p *v1.Pod) []string {
	var out []string
	for _, v := range p.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, claimKey(p.Namespace, v.PersistentVolumeClaim.ClaimName))
		case v.Ephemeral != nil:
			out = append(out, claimKey(p.Namespace, p.Name+"-"+v.Name))
		}
	}
	return out
}

// volumeZone is the single zone a PersistentVolume is confined to, or "": from the topology.kubernetes.io/zone
// label (or its deprecated beta form), else from a required node affinity with one term pinning the zone
// label to one value.
func volumeZone(pv *v1.PersistentVolume) string {
	for _, k := range []string{v1.LabelTopologyZone, v1.LabelFailureDomainBetaZone} {
		if z := pv.Labels[k]; z != "" {
			if strings.Contains(z, "__") { // several zones (kube's multi-zone label form)
				return ""
			}
			return z
		}
	}
	if na := pv.Spec.NodeAffinity; na != nil && na.Required != nil && len(na.Required.NodeSelectorTerms) == 1 {
		for _, e := range na.Required.NodeSelectorTerms[0].MatchExpressions {
			if (e.Key == v1.LabelTopologyZone || e.Key == v1.LabelFailureDomainBetaZone) && e.Operator == v1.NodeSelectorOpIn && len(e.Values) == 1 {
				return e.Values[0]
			}
		}
	}
	return ""
}

func (s *Server) volumeInformers() (pvs, pvcs cache.SharedIndexInformer, err error) {
	pvs = s.factory.Core().V1().PersistentVolumes().Informer()
	pvcs = s.factory.Core().V1().PersistentVolumeClaims().Informer()
	claim := func(obj any) {
		if pvc, ok := obj.(*v1.PersistentVolumeClaim); ok {
			s.claimChanged(pvc)
		}
	}
	regPVCs, err := pvcs.AddEventHandler(s.events.queued(cache.ResourceEventHandlerFuncs{
		AddFunc:    claim,
		UpdateFunc: func(_, obj any) { claim(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if pvc, ok := obj.(*v1.PersistentVolumeClaim); ok {
				s.setVolumeZone(claimKey(pvc.Namespace, pvc.Name), "")
			}
		},
	}))
	if err != nil {
		return nil, nil, err
	}
	volume := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		pv, ok := obj.(*v1.PersistentVolume)
		if !ok || pv.Spec.ClaimRef == nil {
			return
		}
		if pvc, err := s.pvcLister.PersistentVolumeClaims(pv.Spec.ClaimRef.Namespace).Get(pv.Spec.ClaimRef.Name); err == nil {
			s.claimChanged(pvc)
		}
	}
	regPVs, err := pvs.AddEventHandler(s.events.queued(cache.ResourceEventHandlerFuncs{
		AddFunc:    volume,
		UpdateFunc: func(_, obj any) { volume(obj) },
		DeleteFunc: volume,
	}))
	if err != nil {
		return nil, nil, err
	}
	s.handlersSynced = append(s.handlersSynced, regPVCs.HasSynced, regPVs.HasSynced)
	return pvs, pvcs, nil
}

// claimChanged writes the zone of the volume a claim is bound to.
func (s *Server) claimChanged(pvc *v1.PersistentVolumeClaim) {
	zone := ""
	if pvc.Spec.VolumeName != "" {
		if pv, err := s.pvLister.Get(pvc.Spec.VolumeName); err == nil && (pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Name == pvc.Name && pv.Spec.ClaimRef.Namespace == pvc.Namespace) {
			zone = volumeZone(pv)
		}
	}
	s.setVolumeZone(claimKey(pvc.Namespace, pvc.Name), zone)
}

func (s *Server) setVolumeZone(key, zone string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if z, ok := s.volumes[key]; ok && z == zone {
		return // a resync or a status change: nothing the policies read
	}
	s.volumes[key] = zone
	s.must("upsert volume", s.brain.UpsertVolume(context.Background(), key, zone))
}
