package app

import (
	"context"
	"maps"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Namespaces. An inter-pod affinity term covers the namespaces it lists and those whose labels its
// namespaceSelector matches; the scheduler's state holds every Namespace with its labels, and a change of labels
// changes which pods such terms select.

func (s *Server) namespaceInformer() (cache.SharedIndexInformer, error) {
	inf := s.factory.Core().V1().Namespaces().Informer()
	reg, err := inf.AddEventHandler(s.events.queued(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { s.namespaceChanged(nil, obj.(*v1.Namespace)) },
		UpdateFunc: func(old, obj any) {
			s.namespaceChanged(old.(*v1.Namespace), obj.(*v1.Namespace))
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if ns, ok := obj.(*v1.Namespace); ok {
				s.must("delete namespace", s.brain.DeleteNamespace(context.Background(), ns.Name))
			}
		},
	}))
	if err != nil {
		return nil, err
	}
	s.handlersSynced = append(s.handlersSynced, reg.HasSynced)
	return inf, nil
}

func (s *Server) namespaceChanged(old, ns *v1.Namespace) {
	if old != nil && maps.Equal(old.Labels, ns.Labels) {
		return // a status or annotation change: nothing the policies read
	}
	s.must("upsert namespace", s.brain.UpsertNamespace(context.Background(), ns.Name, ns.Labels))
	// New labels may let a pod that was unschedulable meet its terms, or the other way round: retry now.
	s.flushBackoff()
}
