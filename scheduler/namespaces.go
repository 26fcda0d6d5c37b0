package scheduler

import (
	"context"
	"maps"
)

// UpsertNamespace adds or replaces a namespace (a Namespace object) with
// its labels. Affinity terms with a namespace selector cover the
// namespaces whose labels it matches: the pods of this namespace are
// selected anew by every such term.
func (s *Scheduler) UpsertNamespace(ctx context.Context, name string, labels map[string]string) error {
	s.interrupt() // speculate.go
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.setNamespace(ctx, name, maps.Clone(labels), true)
}

// DeleteNamespace removes a namespace: a non-empty namespace selector of
// a term no longer covers it (its pods are deleted by their own events).
func (s *Scheduler) DeleteNamespace(ctx context.Context, name string) error {
	s.interrupt() // speculate.go
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.setNamespace(ctx, name, nil, false)
}

func (s *Scheduler) setNamespace(ctx context.Context, name string, labels map[string]string, exists bool) error {
	old, had := s.state.Namespaces[name]
	if exists {
		if labels == nil {
			labels = map[string]string{}
		}
		s.state.Namespaces[name] = labels
	} else {
		delete(s.state.Namespaces, name)
	}
	st, commit := s.matches.namespaceChanged(s.state, name)
	if err := s.exec(ctx, st); err != nil {
		if had {
			s.state.Namespaces[name] = old
		} else {
			delete(s.state.Namespaces, name)
		}
		return err
	}
	commit()
	return nil
}
