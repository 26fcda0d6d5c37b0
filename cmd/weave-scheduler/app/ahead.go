package app

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/weavesql/weave/scheduler"
)

// placeAheadLocked binds p, a new pending pod, at once when the brain places it ahead: an extension of a
// speculation is being solved and p is the next pod it expects (scheduler.PlaceAhead). Its node was checked
// on the brain's state as the extension found it, which nothing has written since (the extension holds the
// brain's lock): the re-check a batch's placements get after their solve would read that same state. The
// node must still be in the informer's view; if not, the pod goes back to the queue, as a batch's placement
// on a node gone would. It reports whether p was placed ahead (s.mu held).
func (s *Server) placeAheadLocked(p *v1.Pod, sp scheduler.Pod) bool {
	ctxp := s.loopCtx.Load()
	if ctxp == nil || (*ctxp).Err() != nil || !s.leader.Load() {
		return false
	}
	node, ok := s.brain.PlaceAhead(sp)
	if !ok {
		return false
	}
	key := podKey(p)
	if _, err := s.nodeLister.Get(node); err != nil {
		s.metrics.skipped.WithLabelValues("node_gone").Inc()
		s.log.Info("node gone before binding; pod requeued", "pod", key, "node", node)
		s.must("upsert pod", s.brain.UpsertPod(context.Background(), sp)) // pending again
		return true
	}
	s.inflight[key] = node
	j := bindJob{pod: p, node: node}
	select {
	case s.binds <- j:
	default: // the binders are behind: do not hold s.mu, which they take, while waiting for them
		ctx := *ctxp
		go func() {
			select {
			case s.binds <- j:
			case <-ctx.Done():
			}
		}()
	}
	return true
}
