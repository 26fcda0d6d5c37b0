package app

import (
	"context"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/client-go/tools/cache"
)

// Volumes (H17; convert_volumes.go says what the volume plugins ask). A pending pod's volume constraints are
// read when it is queued, from the claims, volumes and storage classes the informers hold; when one of those
// changes, the pending pods that use it are read again (a claim binds, a volume is created, a class appears).

// claim, volume and storageClass make the server the volumeLister of volumeConstraints.
func (s *Server) claim(ns, name string) (*v1.PersistentVolumeClaim, error) {
	return s.pvcLister.PersistentVolumeClaims(ns).Get(name)
}

func (s *Server) volume(name string) (*v1.PersistentVolume, error) { return s.pvLister.Get(name) }

func (s *Server) storageClass(name string) (*storagev1.StorageClass, error) {
	return s.scLister.Get(name)
}

// podClaims lists the names of the claims a pod uses (a generic ephemeral volume's is <pod>-<volume>).
func podClaims(p *v1.Pod) []string {
	var out []string
	for _, v := range p.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			out = append(out, p.Name+"-"+v.Name)
		}
	}
	return out
}

func (s *Server) volumeInformers() ([]cache.SharedIndexInformer, error) {
	pvs := s.factory.Core().V1().PersistentVolumes().Informer()
	pvcs := s.factory.Core().V1().PersistentVolumeClaims().Informer()
	scs := s.factory.Storage().V1().StorageClasses().Informer()
	unwrap := func(obj any) any {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			return t.Obj
		}
		return obj
	}
	on := func(f func(obj any)) cache.ResourceEventHandlerFuncs {
		return s.events.queued(cache.ResourceEventHandlerFuncs{
			AddFunc:    f,
			UpdateFunc: func(_, obj any) { f(obj) },
			DeleteFunc: func(obj any) { f(unwrap(obj)) },
		})
	}
	var regs []cache.ResourceEventHandlerRegistration
	for _, h := range []struct {
		inf cache.SharedIndexInformer
		f   func(obj any)
	}{
		{pvcs, func(obj any) {
			if pvc, ok := obj.(*v1.PersistentVolumeClaim); ok {
				s.claimChanged(pvc.Namespace, pvc.Name)
			}
		}},
		{pvs, func(obj any) {
			if pv, ok := obj.(*v1.PersistentVolume); ok && pv.Spec.ClaimRef != nil {
				s.claimChanged(pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name)
			}
		}},
		{scs, func(any) { s.claimChanged("", "") }},
	} {
		reg, err := h.inf.AddEventHandler(on(h.f))
		if err != nil {
			return nil, err
		}
		regs = append(regs, reg)
	}
	for _, r := range regs {
		s.handlersSynced = append(s.handlersSynced, r.HasSynced)
	}
	return []cache.SharedIndexInformer{pvs, pvcs, scs}, nil
}

// claimChanged reads again the pending pods of this scheduler that use the claim ns/name (every pending pod
// with a claim when name is "", after a storage class changed), unless they wait in a backoff or are being
// bound. The pods are found through s.claimUsers, filled by pendingPodLocked.
func (s *Server) claimChanged(ns, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []string
	claimsOf := map[string][]string{} // pod key → the claims it was found under
	for c, users := range s.claimUsers {
		if name == "" || c == claimKey(ns, name) {
			for k := range users {
				if claimsOf[k] == nil {
					keys = append(keys, k)
				}
				_, claim, _ := strings.Cut(c, "/")
				claimsOf[k] = append(claimsOf[k], claim)
			}
		}
	}
	for _, key := range keys {
		ns, n, _ := strings.Cut(key, "/")
		p, err := s.podLister.Pods(ns).Get(n)
		if err != nil || p.Spec.NodeName != "" || p.DeletionTimestamp != nil || terminal(p) {
			s.forgetClaimsLocked(key, ns, claimsOf[key])
			continue
		}
		if _, held := s.backoff[key]; held || s.inflight[key] != "" || s.nominated[key] != nil {
			continue
		}
		if sp, ok := s.pendingPodLocked(p); ok {
			s.must("upsert pod", s.brain.UpsertPod(context.Background(), sp))
		}
	}
}

// claimKey names a claim in s.claimUsers.
func claimKey(ns, name string) string { return ns + "/" + name }

// rememberClaimsLocked notes the claims of a pending pod (claimChanged reads it again when one changes).
func (s *Server) rememberClaimsLocked(p *v1.Pod) {
	key := podKey(p)
	for _, c := range podClaims(p) {
		ck := claimKey(p.Namespace, c)
		if s.claimUsers[ck] == nil {
			s.claimUsers[ck] = map[string]struct{}{}
		}
		s.claimUsers[ck][key] = struct{}{}
	}
}

// forgetClaimsLocked drops a pod of namespace ns from s.claimUsers under the given claims.
func (s *Server) forgetClaimsLocked(key, ns string, claims []string) {
	for _, c := range claims {
		ck := claimKey(ns, c)
		delete(s.claimUsers[ck], key)
		if len(s.claimUsers[ck]) == 0 {
			delete(s.claimUsers, ck)
		}
	}
}
