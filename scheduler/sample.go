package scheduler

import "hash/fnv"

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
// on, past the ring's end when lo > hi (table node_sample).
type arc struct{ lo, hi int64 }

// wholeRing lets a solve use every node.
var wholeRing = arc{0, sampleRing}

func (a arc) whole() bool { return a == wholeRing }

// write replaces node_sample's row.
func (a arc) write() []stmt {
	return []stmt{{"delete from node_sample", nil}, {"insert into node_sample values " + params(2), []any{a.lo, a.hi}}}
}

// sampleable reports whether a batch may be placed on a sample of the
// nodes: not when a pod names its node or needs to sit next to given pods
// (required pod affinity). Those need particular nodes, which an arc holds
// by chance only: nginx+redis at 5,000 nodes (each web pod next to a cache
// pod of its app) fell back to every node on most batches, and a batch
// took longer than without sampling.
func sampleable(batch []*Pod) bool {
	for _, p := range batch {
		if p.RequestedNode != "" {
			return false
		}
		for _, t := range p.Affinity {
			if t.Required && !t.Anti {
				return false
			}
		}
	}
	return true
}

// DefaultNodeSample is how many of n nodes a placement batch considers
// when Config.NodeSample is 0: kube-scheduler's numFeasibleNodesToFind
// with its adaptive percentageOfNodesToScore, 50% less 1% per 125 nodes,
// at least 5%, and never fewer than 100 nodes.
func DefaultNodeSample(n int) int {
	const least = 100 // kube-scheduler's minFeasibleNodesToFind
	if n < least {
		return n
	}
	pct := max(50-n/125, 5)
	return max(n*pct/100, least)
}

// nextArc returns the arc of the next placement batch: the whole ring
// when sampling is off or the cluster has at most the sample's nodes,
// otherwise the arc after the last one that holds about that many.
func (s *Scheduler) nextArc() arc {
	k, n := s.cfg.NodeSample, len(s.state.Nodes)
	if k == 0 {
		k = DefaultNodeSample(n)
	}
	if k < 0 || n <= k {
		return wholeRing
	}
	width := sampleRing * int64(k) / int64(n)
	a := arc{s.sampleAt, (s.sampleAt + width) % sampleRing}
	s.sampleAt = a.hi
	return a
}
