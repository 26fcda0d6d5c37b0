package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/weavesql/weave"
)

// Speculation (Config.Speculate): while the loop is idle, the batch of the
// pods expected next (noteArrival: like the last pod, or like the pod that
// followed one like it, and so on) is decided ahead, so that when such
// pods arrive — the next replicas of Deployments that grow — their nodes
// are known and only checked. A one-pod batch costs the whole model's
// read, grounding and solve (about 8 ms on 500 nodes); a pod that waits
// for nothing else waits that long, where kube-scheduler's plugins take a
// few milliseconds, and replicas arriving faster than one batch a pod
// queue behind each other.
//
// A speculation decides the batch of its width of expected pods, one to
// maxSpecWidth: the width doubles each time every pod it expected
// arrived, and falls to half (or to the pods that did arrive, if more)
// when it is dropped before; it is one for a pod nothing has followed yet
// (a new Deployment's first: its chain is itself again). A trickle is
// served one pod ahead; pods arriving at 100 a second find a speculation
// of 16 and are placed on arrival, from one solve per 16 pods, where they
// would have queued for a batch each.
//
// The answer is used only where it is the batch's on the state as it is:
// since the speculation, the state database has changed only by
//   - the expected pods' arrival: each equal to one expected in every
//     field but its name and arrival, in about the expected order (pods
//     created one after another reach the informer nearly in order);
//   - pending pods the speculation does not expect (stranger): a pending
//     pod outside a batch is no part of its model, but for N2's count of
//     an evenly spread group;
//   - the expected pods' placement from it;
//   - the binding of a pod reported where the state holds it bound: the
//     informer reporting a binding, which on v1.37 adds the node's
//     topology labels (topology.kubernetes.io/zone, region) to the pod.
// Any other write makes it stale. The placement model does not depend on
// a batch pod's name, so the nodes are those the batch of the expected
// pods finds on the state as it was, up to an exchange among identical
// replicas. Each placement is still checked as any batch's (checkAfter):
// a pod placed ahead of one decided with it (its affinity's peer, not
// arrived yet) may fail the check, and is then solved in a batch of its
// own; the caller re-checks every binding on its own view. Anything else —
// another write, no expected pod in the batch — and the batch is solved
// as usual.

// specPrefix starts the speculated pods' names: '~' is in no Kubernetes
// name.
const specPrefix = "~speculated~"

// specName is the name of the i-th speculated pod.
func specName(i int) string { return fmt.Sprintf("%s%d", specPrefix, i) }

// maxSpecWidth bounds the pods a speculation decides.
const maxSpecWidth = 16

// speculation is a decided batch of the expected pods.
type speculation struct {
	likes       []Pod       // the expected pods in arrival order, canonical (sameReplica)
	nodes       []string    // their nodes ("" for none)
	sampleAfter int64       // s.sampleAt after the batch's arc
	stats       weave.Stats // the solve's
	matched     []string    // per expected pod, the pod that arrived as it ("" none yet)
	arrived     int         // how many did
	used        int         // how many of them were placed from it
	foreign     bool        // a write since that the speculation did not expect
}

// SpeculationStats counts speculations (Scheduler.SpeculationStats).
type SpeculationStats struct {
	// Solved counts the speculations decided; Interrupted those a write
	// (a pod of another kind arriving, a node changing, ...) cut short.
	Solved, Interrupted int
	// Used counts the batches whose placement came from a speculation;
	// Stale the speculations dropped before each pod they expected was
	// placed from them (another write, a batch of other pods).
	Used, Stale int
	// Ahead counts the pods placed on arrival while an extension of a
	// speculation was solved (PlaceAhead); Folded the speculations
	// decided with a batch, while the loop was busy (fold.go).
	Ahead, Folded int
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
	s.template, s.templateSeen = &c, false
	if next := s.successor[s.lastArrival]; next != nil {
		s.template, s.templateSeen = next, true
	} else {
		// A pod no pod has followed yet (a new Deployment's first):
		// its chain is itself again and again, a guess the width
		// learned on other pods does not support. Live, at 100 pods/s
		// in a new namespace, a speculation of 15 replicas of the first
		// redis pod took 28 ms, and the nginx pod after it waited.
		s.specWidth = 1
	}
	if !speculable(s.template) {
		s.template = nil
	}
}

// speculationDue reports whether a speculation should start (s.mu held):
// a template, and a state not yet speculated on, unless the speculation
// at hand still expects pods and holds.
func (s *Scheduler) speculationDue() bool {
	if !s.cfg.Speculate || s.template == nil || s.specTried == s.version {
		return false
	}
	sp := s.spec
	return sp == nil || sp.foreign || sp.arrived == len(sp.likes) || s.extensionDue()
}

// expected lists the pods a speculation of width n decides: the template,
// then each time the pod that followed one like the last (or the last
// again), as noteArrival learned them (s.mu held).
func (s *Scheduler) expected(n int) []Pod { return s.chain(s.template, n) }

// successorOf is the pod that followed one like p last time, or p (s.mu
// held).
func (s *Scheduler) successorOf(p *Pod) *Pod {
	if next := s.successor[replicaKey(p)]; next != nil {
		return next
	}
	return p
}

// chain lists n pods expected from p on: p, then the pod that followed
// one like the last (or the last again), and so on (s.mu held).
func (s *Scheduler) chain(p *Pod, n int) []Pod {
	out := make([]Pod, 0, n)
	for len(out) < n && p != nil && speculable(p) {
		out = append(out, *p)
		p = s.successorOf(p)
	}
	return out
}

// width is how many pods the next speculation decides (s.mu held).
func (s *Scheduler) width() int {
	return min(max(s.specWidth, 1), s.specMaxWidth())
}

func (s *Scheduler) specMaxWidth() int {
	if s.specLimit > 0 {
		return s.specLimit // tests
	}
	return maxSpecWidth
}

// speculate decides the batch of the pods expected next on the state as
// it is (s.mu not held). A write interrupts it (interrupt), but for the
// arrival of an expected pod or a bound pod's update
// (interruptSpeculation).
func (s *Scheduler) speculate(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.speculationDue() || len(s.queue()) > 0 {
		return nil // the loop has a batch to solve, or nothing to speculate on
	}
	defer func() { s.specTried = s.version }()
	if s.extensionDue() {
		return s.extend(ctx) // ahead.go
	}
	s.dropSpeculation()
	exp := s.expected(s.width())
	if len(exp) == 0 {
		return nil
	}
	pods, ok := s.expectedPods(exp, specName, s.seq+1)
	if !ok {
		return nil // no speculation
	}
	likes := make([]Pod, len(exp))
	for i, p := range pods {
		likes[i] = replicaOf(p)
	}
	// Pods expected after these do not interrupt it either: at 100 pods
	// a second the next ones arrive while it is solved.
	var ahead []Pod
	for _, p := range s.expected(min(2*len(exp)+2, 2*maxSpecWidth)) {
		ahead = append(ahead, replicaOf(&p))
	}
	sctx, cancel := context.WithCancel(ctx)
	s.specMu.Lock()
	s.specLikes, s.specCancel = ahead, cancel
	s.ahead = reportWindow()
	s.specMu.Unlock()
	defer func() {
		s.specMu.Lock()
		s.specLikes, s.specCancel = nil, nil
		s.specMu.Unlock()
		cancel()
	}()
	if err := s.writeExpected(ctx, pods); err != nil {
		return firstErr(err, s.closeReportWindow(ctx))
	}
	sampleAt, stats := s.sampleAt, s.lastStats
	s.rejected = map[string]string{}
	s.speculating = true
	placed, err := s.place(sctx, pods)
	s.rejected, s.speculating = nil, false
	sampleAfter, specStats := s.sampleAt, s.lastStats
	s.sampleAt, s.lastStats = sampleAt, stats
	if err == nil && sctx.Err() == nil {
		s.orderForArrival(pods, placed)
	}
	// The writes that undo the speculated pods run to the end: the state
	// and the database change together.
	for _, p := range pods {
		if derr := s.deletePodLocked(context.WithoutCancel(ctx), p.Name); derr != nil {
			return firstErr(derr, s.closeReportWindow(ctx))
		}
	}
	// The bindings reported meanwhile are applied after the speculation
	// stands, as writes it expects or not.
	switch {
	case sctx.Err() != nil:
		s.specCount.Interrupted++
		return firstErr(s.closeReportWindow(ctx), ctx.Err())
	case err != nil:
		return s.closeReportWindow(ctx) // the batch of such pods will meet the error itself
	}
	s.specCount.Solved++
	sp := &speculation{likes: likes, matched: make([]string, len(likes)), sampleAfter: sampleAfter, stats: specStats}
	for _, p := range pods {
		sp.nodes = append(sp.nodes, placed[p.Name])
	}
	s.spec = sp
	return s.closeReportWindow(ctx)
}

// writeExpected writes pods, copies of expected pods, to the state and
// its database (s.mu held). Each pod's selector rows are worked out with
// the ones before it in the index and the state, as their arrivals one by
// one would be: a selector new to the index is added once, with the pods
// before it among its members. The database takes them all in one write;
// if it fails, the index and the state let go of them again.
func (s *Scheduler) writeExpected(ctx context.Context, pods []*Pod) error {
	var st []stmt
	for _, p := range pods {
		matches, commit := s.matches.upsert(s.state, p)
		st = append(append(st, writePod(p)...), matches...)
		commit()
		s.state.Pods[p.Name] = p
	}
	if err := s.exec(ctx, st); err != nil {
		for i := len(pods) - 1; i >= 0; i-- {
			_, release := s.matches.delete(pods[i].Name)
			release()
			delete(s.state.Pods, pods[i].Name)
		}
		return err
	}
	return nil
}

// orderForArrival exchanges the nodes of identical expected pods so that
// each pod, placed after the ones expected before it, passes the check
// (s.mu held, the speculated pods in the state). The batch's answer holds
// for all of its pods together; pods arriving one at a time are placed a
// few at a time, and a spread constraint or a required affinity can fail
// on the first of them where it holds for all (three replicas spread over
// zones: the first two may share one). Identical pods may take each
// other's nodes: the batch's answer is the same. Only pods with such
// constraints are put in order; a pod that no exchange lets pass keeps
// its node, and is checked out when it arrives.
func (s *Scheduler) orderForArrival(pods []*Pod, placed map[string]string) {
	ordered := false
	for _, p := range pods {
		ordered = ordered || len(p.Spread) > 0
		for _, t := range p.Affinity {
			ordered = ordered || t.Required && !t.Anti
		}
	}
	if !ordered {
		return
	}
	like := make([]Pod, len(pods))
	for i, p := range pods {
		like[i] = replicaOf(p)
	}
	prefix := map[string]string{}
	for k, p := range pods {
		if placed[p.Name] == "" {
			continue
		}
		prefix[p.Name] = placed[p.Name]
		if s.checkAfter(pods[:k+1], nil, prefix) == nil {
			continue
		}
		for j := k + 1; j < len(pods); j++ {
			q := pods[j]
			if placed[q.Name] == "" || placed[q.Name] == placed[p.Name] || !reflect.DeepEqual(like[j], like[k]) {
				continue
			}
			prefix[p.Name] = placed[q.Name]
			if s.checkAfter(pods[:k+1], nil, prefix) == nil {
				placed[p.Name], placed[q.Name] = placed[q.Name], placed[p.Name]
				break
			}
			prefix[p.Name] = placed[p.Name]
		}
	}
}

// dropSpeculation ends the speculation at hand (s.mu held): the next
// decides twice its width if every pod it expected arrived, else as many
// pods as did, or half its width if more (pods placed by a batch of
// their own, ahead of a peer that had not arrived, end a speculation
// without a wrong guess).
func (s *Scheduler) dropSpeculation() {
	sp := s.spec
	if sp == nil {
		return
	}
	s.spec = nil
	if sp.used < len(sp.likes) {
		s.specCount.Stale++
	}
	if !s.templateSeen {
		s.specWidth = 1 // the next is of a pod nothing has followed yet (noteArrival)
		return
	}
	if sp.arrived == len(sp.likes) {
		s.specWidth = min(2*max(s.specWidth, 1), s.specMaxWidth())
		return
	}
	s.specWidth = max(sp.arrived, len(sp.likes)/2, 1)
}

// interruptSpeculation stops a speculation under way when p, about to be
// upserted, is a pending pod that it does not expect: that pod must not
// wait for it (s.mu not held).
func (s *Scheduler) interruptSpeculation(p *Pod) {
	s.specMu.Lock()
	defer s.specMu.Unlock()
	if s.specCancel == nil {
		return
	}
	if p.NodeName != "" {
		s.closeAhead() // not a binding deferAhead took (ahead.go)
		return
	}
	n := normalizePod(*p)
	if n.Phase != PhasePending {
		return
	}
	s.closeAhead() // a pending pod not placed ahead: none is after it
	for _, like := range s.specLikes {
		if sameReplica(like, &n) {
			return
		}
	}
	s.specCancel()
}

// interrupt stops a speculation under way: the caller writes, which
// makes it stale, and must not wait for it (s.mu not held).
func (s *Scheduler) interrupt() {
	s.specMu.Lock()
	defer s.specMu.Unlock()
	if s.specCancel != nil {
		s.specCancel()
	}
	s.closeAhead() // ahead.go
}

// arrival returns which pod the speculation expects p is, a new pod
// about to be written by UpsertPod: the first expected pod it equals that
// no other pod arrived as; -1 for none (s.mu held). Pods created one
// after another reach the informer in about that order, not exactly.
func (s *Scheduler) arrival(p *Pod) int {
	sp := s.spec
	if sp == nil || sp.foreign || sp.arrived == len(sp.likes) || !s.ours(p) {
		return -1
	}
	for i, like := range sp.likes {
		if sp.matched[i] == "" && sameReplica(like, p) {
			return i
		}
	}
	return -1
}

// stranger reports whether p, a new pod about to be written by UpsertPod
// that the speculation does not expect, leaves it standing (s.mu held): a
// pod without a node. A pending pod is no part of another batch's model,
// but for N2's count of the pods of a group spread evenly (maxSkew 0):
// one of such a group speculated on makes it stale. It is not placed from
// the speculation.
func (s *Scheduler) stranger(p *Pod) bool {
	sp := s.spec
	if sp == nil || p.NodeName != "" {
		return false
	}
	for _, like := range sp.likes {
		if like.Group != "" && like.Group == p.Group && evenSpread(&like) {
			return false
		}
	}
	return true
}

// evenSpread reports whether p has a hard spread constraint of maxSkew 0
// (N2).
func evenSpread(p *Pod) bool {
	for _, c := range p.Spread {
		if c.Hard && c.MaxSkew == 0 {
			return true
		}
	}
	return false
}

// bindingTopologyLabels are the labels kube-apiserver v1.37 copies from
// the node to a pod it binds (PodTopologyLabelsAdmission).
var bindingTopologyLabels = []string{LabelZone, "topology.kubernetes.io/region"}

// bindingReported reports whether p, about to replace was, is only was's
// binding reported: was bound where p is, and p equal to it but for the
// topology labels the API server adds when it binds.
func bindingReported(was, p *Pod) bool {
	if was == nil || was.NodeName == "" || was.NodeName != p.NodeName {
		return false
	}
	a, b := *was, *p
	a.Labels, b.Labels = maps.Clone(a.Labels), maps.Clone(b.Labels)
	for _, k := range bindingTopologyLabels {
		delete(a.Labels, k)
		delete(b.Labels, k)
	}
	if len(a.Labels) == 0 {
		a.Labels = nil
	}
	if len(b.Labels) == 0 {
		b.Labels = nil
	}
	return reflect.DeepEqual(a, b)
}

// decidedPending reports whether a pending pod arrived as the standing
// speculation expected, so that the next batch places it from it (s.mu
// held).
func (s *Scheduler) decidedPending() bool {
	sp := s.spec
	if sp == nil || sp.foreign {
		return false
	}
	for i, name := range sp.matched {
		if p := s.state.Pods[name]; name != "" && sp.nodes[i] != "" && p != nil && p.NodeName == "" && p.Phase == PhasePending {
			return true
		}
	}
	return false
}

// useSpeculation places the pods of the batch q that arrived as the
// speculation expected from it, when the state changed only as it
// expected since (s.mu held); the other pods of q stay pending for the
// next batch. ok is false when q must be solved. Pods placed ahead of
// others the speculation decided with them (arrived first) are checked
// on the state without those, as any batch is.
func (s *Scheduler) useSpeculation(ctx context.Context, q []*Pod) (bs []Binding, us []Unschedulable, ok bool, err error) {
	sp := s.spec
	if sp == nil {
		return nil, nil, false, nil
	}
	var mine []*Pod
	placed := map[string]string{}
	for _, p := range q {
		i := slices.Index(sp.matched, p.Name)
		if i < 0 {
			continue // a pod it did not expect: the next batch's
		}
		if sp.nodes[i] == "" {
			s.dropSpeculation()
			return nil, nil, false, nil
		}
		mine = append(mine, p)
		placed[p.Name] = sp.nodes[i]
	}
	if sp.foreign || len(mine) == 0 {
		s.dropSpeculation()
		return nil, nil, false, nil
	}
	if err := s.checkAfter(mine, nil, placed); err != nil {
		// A pod the check turns down (its affinity's peer, decided with
		// it, has not arrived yet; or the model and the check disagree)
		// stays pending for the next batch, solved; the others are
		// placed when the check passes without it.
		saved := s.rejected
		s.rejected = map[string]string{}
		err = s.dropRejected(mine, placed, err)
		s.rejected = saved
		kept := mine[:0]
		for _, p := range mine {
			if placed[p.Name] != "" {
				kept = append(kept, p)
			}
		}
		if mine = kept; err != nil || len(mine) == 0 {
			s.dropSpeculation()
			return nil, nil, false, nil
		}
	}
	if sp.used == 0 {
		s.sampleAt = sp.sampleAfter
	}
	s.lastStats = sp.stats
	s.specCount.Used++
	s.expectWrite = true
	bs, us, err = s.apply(ctx, mine, placed, nil)
	s.expectWrite = false
	sp.used += len(mine)
	if err != nil || sp.used == len(sp.likes) {
		s.dropSpeculation()
	}
	return bs, us, true, err
}
