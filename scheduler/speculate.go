package scheduler

import (
	"context"
	"encoding/json"
	"reflect"
	"time"

	"github.com/weavesql/weave"
)

// Speculation (Config.Speculate): while the loop is idle, the batch of the
// pod expected next (noteArrival: like the last pod, or like the pod that
// followed one like it) is decided ahead, so that when such a pod
// arrives alone — the next replica of a Deployment that grows one pod at a
// time — its node is known and only checked. A one-pod batch costs the
// whole model's read, grounding and solve (about 10 ms on 500 nodes); a pod
// that waits for nothing else waits that long, where kube-scheduler's
// plugins take a few milliseconds.
//
// The answer is used only where the batch would have been the same model:
// the state database has not changed since the speculation but for the
// pod's own arrival (one write, counted by exec), and the pod equals the
// one speculated on in every field but its name and arrival (a pod without
// an owner is its own replica group, Group = Name, on both sides). The
// placement model does not depend on a batch pod's name, so the answer is
// the one the batch would have found. It is still checked as any batch's
// placement (checkAfter), and the caller re-checks it on its own view.
// Anything else — another write, another pod, a second pending pod — and
// the batch is solved as usual.

// specName is the speculated pod's name: '~' is in no Kubernetes name.
const specName = "~speculated~"

// SpecSettle is how long the state must stay unchanged before a
// speculation starts: the informer reports each binding of the last batch
// a few milliseconds after it (a write), which would make an earlier
// speculation stale at once.
const SpecSettle = 20 * time.Millisecond

// speculation is a decided batch of the template pod.
type speculation struct {
	version     uint64      // s.version once the speculation was cleaned up
	like        Pod         // the template, canonical (sameReplica)
	node        string      // its node ("" for none)
	sampleAfter int64       // s.sampleAt after the batch's arc
	stats       weave.Stats // the solve's
	forPod      string      // the pod like it whose arrival was the only write since
}

// SpeculationStats counts speculations (Scheduler.SpeculationStats).
type SpeculationStats struct {
	// Solved counts the speculations decided; Interrupted those a write
	// (a pod of another kind arriving, a node changing, ...) cut short.
	Solved, Interrupted int
	// Used counts the batches whose placement came from a speculation;
	// Stale the speculations dropped: another write than the expected
	// pod's arrival, or a batch of another pod.
	Used, Stale int
}

// SpeculationStats returns the counts of speculations so far.
func (s *Scheduler) SpeculationStats() SpeculationStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.specCount
}

// replicaOf is p as the pods of its replica group share it: without its
// name, arrival, node and phase; a pod that is its own group loses that too.
func replicaOf(p *Pod) Pod {
	c := *p
	if c.Group == c.Name {
		c.Group = ""
	}
	c.Name, c.created, c.NodeName, c.Phase = "", 0, "", ""
	return c
}

// sameReplica reports whether p, a pending pod, is the template's replica.
func sameReplica(like Pod, p *Pod) bool {
	return p.NodeName == "" && p.Phase == PhasePending && !p.Terminating && reflect.DeepEqual(like, replicaOf(p))
}

// speculable reports whether a placed pod may be a template: a pod decided
// alone when pending, outside a PodGroup (decided with its group), without
// spec.nodeName or volumes (a claim is the pod's own, not its replica's).
func speculable(p *Pod) bool {
	return p.PodGroup == "" && p.RequestedNode == "" && len(p.Volumes) == 0 && len(p.VolumeNodeSelectors) == 0 && !p.Terminating
}

// maxSuccessors bounds the replica groups whose successor is remembered.
const maxSuccessors = 256

// replicaKey identifies p's replica group's spec (replicaOf) as a map key.
func replicaKey(p *Pod) string {
	b, err := json.Marshal(replicaOf(p))
	if err != nil {
		return "" // not reached: a Pod is plain data
	}
	return string(b)
}

// noteArrival records p, a new pending pod of this scheduler, as the pod
// that followed the one before it (s.mu held). The template of the next
// speculation is the pod that followed a pod like p last time, else p:
// Deployments that grow side by side bring their replicas in turn, one
// growing alone brings the same pod again.
func (s *Scheduler) noteArrival(p *Pod) {
	if !s.cfg.Speculate {
		return
	}
	c := *p
	if s.lastArrival != "" {
		if len(s.successor) >= maxSuccessors {
			clear(s.successor)
		}
		if s.successor == nil {
			s.successor = map[string]*Pod{}
		}
		s.successor[s.lastArrival] = &c
	}
	s.lastArrival = replicaKey(&c)
	s.template = &c
	if next := s.successor[s.lastArrival]; next != nil {
		s.template = next
	}
	if !speculable(s.template) {
		s.template = nil
	}
}

// speculationDue returns how long until a speculation should start, and
// whether one should at all (s.mu held): a template, nothing pending, and
// a state not yet speculated on.
func (s *Scheduler) speculationDue(now time.Time) (time.Duration, bool) {
	if !s.cfg.Speculate || s.template == nil || s.specTried == s.version {
		return 0, false
	}
	return SpecSettle - now.Sub(s.lastWrite), true
}

// speculate decides the batch of the template's replica on the state as it
// is (s.mu not held). A write interrupts it (interrupt), but for the
// arrival of the template's replica or a bound pod's update
// (interruptSpeculation).
func (s *Scheduler) speculate(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.speculationDue(time.Now()); !ok || len(s.queue()) > 0 {
		return nil // the loop has a batch to solve, or nothing to speculate on
	}
	defer func() { s.specTried = s.version }()
	if s.state.Pods[specName] != nil {
		return nil // a pod of that name (not from Kubernetes): no speculation
	}
	t := *s.template
	if t.Group == t.Name {
		t.Group = specName
	}
	t.Name, t.NodeName, t.Phase, t.created = specName, "", PhasePending, s.seq+1 // the arrival the replica will have
	like := replicaOf(&t)
	sctx, cancel := context.WithCancel(ctx)
	s.specMu.Lock()
	s.specLike, s.specCancel = &like, cancel
	s.specMu.Unlock()
	defer func() {
		s.specMu.Lock()
		s.specLike, s.specCancel = nil, nil
		s.specMu.Unlock()
		cancel()
	}()

	matches, commit := s.matches.upsert(s.state, &t)
	if err := s.exec(ctx, append(writePod(&t), matches...)); err != nil {
		return err
	}
	commit()
	s.state.Pods[t.Name] = &t
	sampleAt, stats := s.sampleAt, s.lastStats
	s.rejected = map[string]string{}
	placed, err := s.place(sctx, []*Pod{&t})
	s.rejected = nil
	sampleAfter, specStats := s.sampleAt, s.lastStats
	s.sampleAt, s.lastStats = sampleAt, stats
	// The writes that undo the speculated pod run to the end: the state
	// and the database change together.
	if derr := s.deletePodLocked(context.WithoutCancel(ctx), specName); derr != nil {
		return derr
	}
	s.spec = nil
	switch {
	case sctx.Err() != nil:
		s.specCount.Interrupted++
		return ctx.Err()
	case err != nil:
		return nil // the batch of such a pod will meet the error itself
	}
	s.specCount.Solved++
	s.spec = &speculation{version: s.version, like: like, node: placed[specName], sampleAfter: sampleAfter, stats: specStats}
	return nil
}

// interruptSpeculation stops a speculation under way when p, about to be
// upserted, is a pending pod other than the template's replica: that pod
// must not wait for it (s.mu not held).
func (s *Scheduler) interruptSpeculation(p *Pod) {
	s.specMu.Lock()
	defer s.specMu.Unlock()
	if s.specCancel == nil || p.NodeName != "" {
		return
	}
	if n := normalizePod(*p); n.Phase == PhasePending && !sameReplica(*s.specLike, &n) {
		s.specCancel()
	}
}

// interrupt stops a speculation under way: the caller writes, which
// makes it stale, and must not wait for it (s.mu not held).
func (s *Scheduler) interrupt() {
	s.specMu.Lock()
	defer s.specMu.Unlock()
	if s.specCancel != nil {
		s.specCancel()
	}
}

// arrived marks p, just written by UpsertPod as a new pod, as the pod the
// speculation stands for when it is the template's replica and its write
// the only one since (s.mu held).
func (s *Scheduler) arrived(p *Pod) {
	if sp := s.spec; sp != nil && sp.version+1 == s.version && s.ours(p) && sameReplica(sp.like, p) {
		sp.forPod = p.Name
	}
}

// useSpeculation places the batch q from the speculation when it stands
// for q's one pod on the state as it is (s.mu held); ok is false when the
// batch must be solved.
func (s *Scheduler) useSpeculation(ctx context.Context, q []*Pod) (bs []Binding, us []Unschedulable, ok bool, err error) {
	sp := s.spec
	s.spec = nil
	if sp == nil {
		return nil, nil, false, nil
	}
	if len(q) != 1 || sp.forPod != q[0].Name || sp.version+1 != s.version || sp.node == "" {
		s.specCount.Stale++
		return nil, nil, false, nil
	}
	placed := map[string]string{q[0].Name: sp.node}
	if s.checkAfter(q, nil, placed) != nil {
		// The model and the check disagree: the batch is solved, and
		// meets the disagreement as any batch does.
		s.specCount.Stale++
		return nil, nil, false, nil
	}
	s.sampleAt, s.lastStats = sp.sampleAfter, sp.stats
	s.specCount.Used++
	bs, us, err = s.apply(ctx, q, placed, nil)
	return bs, us, true, err
}
