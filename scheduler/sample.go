package scheduler

import (
	"hash/fnv"
	"sort"
)

// Node sampling: on a cluster of more than Config.NodeSample nodes a
// placement batch considers the nodes of one arc of a ring, as
// kube-scheduler scores a share of the nodes (percentageOfNodesToScore)
// and starts each search where the last one stopped. The placement model
// then has the sample's size, not the cluster's: per node it builds loads
// and scores, and per pod and node an entry of the decision index.

// sampleRing is the number of places on the ring (node.sample_key): 2^20,
// sampleKey's 20 bits.
const sampleRing = 1 << 20

// sampleKey places a node on the ring: a hash of its name, so that an arc
// holds a share of the nodes of every zone and pool. FNV-1a alone keeps
// names that differ in their last letters (node-1, node-2) next to each
// other in its low bits; the finaliser of MurmurHash3 mixes them, and the
// key is the top bits.
func sampleKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	x := h.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return int64(x >> (64 - 20))
}

// arc is the part [lo, hi) of the ring whose nodes a solve may place pods
// on, past the ring's end when lo > hi (table node_sample), and the nodes
// outside it that the batch's pods need (table node_sample_node, see
// needed).
type arc struct {
	lo, hi int64
	extra  []string
}

// wholeRing lets a solve use every node.
var wholeRing = arc{lo: 0, hi: sampleRing}

func (a arc) whole() bool { return a.lo == 0 && a.hi == sampleRing }

// holds reports whether a place on the ring is on the arc.
func (a arc) holds(key int64) bool {
	if a.lo <= a.hi {
		return a.lo <= key && key < a.hi
	}
	return key >= a.lo || key < a.hi
}

// write replaces node_sample's row and node_sample_node's rows.
func (a arc) write() []stmt {
	st := []stmt{{"delete from node_sample", nil}, {"insert into node_sample values " + params(2), []any{a.lo, a.hi}},
		{"delete from node_sample_node", nil}}
	for _, n := range a.extra {
		st = append(st, stmt{"insert into node_sample_node values " + params(1), []any{n}})
	}
	return st
}

// needed returns the nodes a batch's pods need besides the arc a: the
// node a pod names (H7), and for each required pod-affinity term the nodes
// of the topology domains that hold a bound pod it selects (H14): the node
// itself for a hostname term; for a wider domain (a zone) as many of its
// nodes as the batch has pods, counting those on the arc, taken on from
// the arc's end round the ring. A zone's every node made the model grow
// with the cluster: 27,656 variables a SchedulingPodAffinity batch at
// 15,000 nodes, 1,756 at 500 (BenchmarkScaleWorkloads). Pods of the batch
// that the term selects are placed in the sample and meet it there; a pod
// the sample cannot take is solved again over every node. Sorted, each
// once.
func (s *Scheduler) needed(batch []*Pod, a arc) []string {
	seen := map[string]bool{}
	// The topology domains (a label's key and value) holding a bound pod
	// that matches a pod's required affinity terms; a hostname domain is
	// the node itself.
	domains := map[[2]string]bool{}
	for _, p := range batch {
		if p.RequestedNode != "" {
			seen[p.RequestedNode] = true
		}
		pp := predicatesOf(p)
		if pp.affinity == nil {
			continue
		}
		members := s.matches.members(pp.affinity.key)
		if members == nil { // a pod not in the state: its terms are not indexed
			members = map[string]bool{}
			for name, q := range s.state.Pods {
				if pp.affinity.matches(q, s.state.Namespaces) {
					members[name] = true
				}
			}
		}
		for name := range members {
			q := s.state.Pods[name]
			if q == nil || q.NodeName == "" || !live(q) {
				continue
			}
			for _, t := range p.Affinity {
				if !t.Required || t.Anti {
					continue
				}
				if key := t.TopologyKey; key == LabelHostname {
					seen[q.NodeName] = true
				} else if d, ok := s.state.label(q.NodeName, key); ok {
					domains[[2]string{key, d}] = true
				}
			}
		}
	}
	if len(domains) > 0 {
		// Per domain, its nodes off the arc in ring order from the arc's
		// end, and how many it has on the arc.
		type domainNodes struct {
			held int
			off  []string
		}
		per := map[[2]string]*domainNodes{}
		for k := range domains {
			per[k] = &domainNodes{}
		}
		for name, n := range s.state.Nodes {
			for k, d := range per {
				if v, ok := n.Labels[k[0]]; ok && v == k[1] {
					if a.holds(sampleKey(name)) {
						d.held++
					} else {
						d.off = append(d.off, name)
					}
				}
			}
		}
		after := func(name string) int64 { return (sampleKey(name) - a.hi + sampleRing) % sampleRing }
		for _, d := range per {
			sort.Slice(d.off, func(i, j int) bool {
				if ai, aj := after(d.off[i]), after(d.off[j]); ai != aj {
					return ai < aj
				}
				return d.off[i] < d.off[j]
			})
			for _, name := range d.off[:min(len(d.off), max(len(batch)-d.held, 0))] {
				seen[name] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		if s.state.Nodes[n] != nil { // a named node may not exist
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// DefaultNodeSample is how many of n nodes a placement batch considers
// when Config.NodeSample is 0: kube-scheduler's numFeasibleNodesToFind
// with its adaptive percentageOfNodesToScore, 50% less 1% per 125 nodes,
// at least 5%, and never fewer than 100 nodes.
func DefaultNodeSample(n int) int {
	if n < leastNodeSample {
		return n
	}
	pct := max(50-n/125, 5)
	return max(n*pct/100, leastNodeSample)
}

// leastNodeSample is kube-scheduler's minFeasibleNodesToFind: the fewest
// nodes DefaultNodeSample takes, and the nodes per pod of a batch of one or
// two pods.
const leastNodeSample = 100

// defaultSample is the sample of a batch of pods pods on n nodes when
// Config.NodeSample is 0: DefaultNodeSample, but at most 100 nodes per pod.
// A batch's model grows with its nodes (loads, scores and capacity bounds
// per node, ~27 µs a node for one nginx pod), and a pod alone scores the
// nodes kube-scheduler never scores fewer of: a one-pod batch at 500 nodes
// took 7.3 ms over 230 nodes, 4.6 ms over 100 (BenchmarkBatchLatency
// nodes=500/b=1), the cost a pod of a kind no speculation foresaw waits.
func defaultSample(n, pods int) int {
	return min(DefaultNodeSample(n), leastNodeSample*max(pods, 1))
}

// nextArc returns the sample of a placement batch: the whole ring when
// sampling is off or the cluster has at most the sample's nodes, otherwise
// the arc after the last one that holds about that many, with the nodes
// the batch needs outside it (needed). kube-scheduler filters every node
// until it has found enough feasible ones; an arc alone holds the nodes a
// pod needs by chance only (nginx+redis at 5,000 nodes, each web pod next
// to a cache pod of its app, fell back to every node on most batches).
func (s *Scheduler) nextArc(batch []*Pod) arc {
	k, n := s.cfg.NodeSample, len(s.state.Nodes)
	if k == 0 {
		k = defaultSample(n, len(batch))
	}
	if k < 0 || n <= k {
		return wholeRing
	}
	if key, keys := s.topologyKeys(batch); keys > 1 {
		return wholeRing // domains of two keys: no one set of whole domains
	} else if key != "" {
		return s.domainArc(batch, key, k)
	}
	width := sampleRing * int64(k) / int64(n)
	a := arc{lo: s.sampleAt, hi: (s.sampleAt + width) % sampleRing}
	for _, name := range s.needed(batch, a) {
		if !a.holds(sampleKey(name)) {
			a.extra = append(a.extra, name)
		}
	}
	if len(a.extra) >= n-k {
		return wholeRing // the arc and the nodes needed are about every node
	}
	s.sampleAt = a.hi
	return a
}

// topologyKeys returns the topology key of the batch's PodGroups that
// have one, and how many different keys they have.
func (s *Scheduler) topologyKeys(batch []*Pod) (string, int) {
	key, keys := "", map[string]bool{}
	for _, p := range batch {
		if g := s.state.PodGroups[p.PodGroup]; p.PodGroup != "" && g != nil && g.TopologyKey != "" {
			key, keys[g.TopologyKey] = g.TopologyKey, true
		}
	}
	return key, len(keys)
}

// domainArc is the sample of a placement batch holding PodGroups whose
// topology key is key: whole domains of it, as such a group must find all
// its members' room inside one domain (an arc of the node ring cuts every
// rack; such batches considered every node before, twice an ordinary
// batch's model at 500 nodes). The units are the key's domains, each
// placed on the ring by its value, and the nodes without the label, by
// their name; they are taken in ring order from sampleAt until they hold
// k nodes, and the next sample starts after the last one taken, so that
// batches take turns over the domains as arcs do over nodes. The domains
// holding bound members of the batch's groups, and the nodes the pods
// need (needed), are added. It is written as a list of nodes (an empty
// arc with every node extra): a domain's nodes are not one arc of the
// node ring. As for an arc, the pods the sample cannot take are solved
// again over every node (SchedulePending); groups without a key in the
// batch are placed in the same sample.
func (s *Scheduler) domainArc(batch []*Pod, key string, k int) arc {
	held := map[string]bool{} // the domains of the batch's groups' bound members
	groups := map[string]bool{}
	for _, p := range batch {
		if p.PodGroup != "" {
			groups[p.PodGroup] = true
		}
	}
	for _, q := range s.state.Pods {
		if q.PodGroup != "" && groups[q.PodGroup] && q.NodeName != "" && live(q) {
			if v, ok := s.state.label(q.NodeName, key); ok {
				held[v] = true
			}
		}
	}
	type unit struct {
		at    int64  // its place on the ring, counted from sampleAt
		id    string // the domain's value, or the unlabelled node's name
		nodes []string
	}
	at := func(place int64) int64 { return (place - s.sampleAt + sampleRing) % sampleRing }
	domains := map[string]*unit{}
	var order []*unit
	for name, n := range s.state.Nodes {
		v, ok := n.Labels[key]
		if !ok {
			order = append(order, &unit{at: at(sampleKey(name)), id: name, nodes: []string{name}})
			continue
		}
		u := domains[v]
		if u == nil {
			u = &unit{at: at(sampleKey(v)), id: v}
			domains[v] = u
			order = append(order, u)
		}
		u.nodes = append(u.nodes, name)
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].at != order[j].at {
			return order[i].at < order[j].at
		}
		return order[i].id < order[j].id
	})
	a := arc{lo: 0, hi: 0} // empty: the sample is its extra nodes
	seen := map[string]bool{}
	took, last := 0, int64(0)
	for _, u := range order {
		if took >= k {
			break
		}
		took += len(u.nodes)
		last = u.at
		for _, name := range u.nodes {
			seen[name] = true
		}
	}
	for v := range held {
		for _, name := range domains[v].nodes {
			seen[name] = true
		}
	}
	for _, name := range s.needed(batch, a) {
		seen[name] = true
	}
	if len(seen) >= len(s.state.Nodes) {
		return wholeRing
	}
	for name := range seen {
		a.extra = append(a.extra, name)
	}
	sort.Strings(a.extra)
	s.sampleAt = (s.sampleAt + last + 1) % sampleRing
	return a
}
