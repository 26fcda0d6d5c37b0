package main

// Greedy is the baseline: hill climbing that applies the single best
// migration at a time, k times (what DRS's balancer does). A move is
// scored by the utilisation range it leaves (basis points), ties broken
// by the sum of squared utilisations (a proxy for the standard deviation
// DRS minimises); it stops early when no move improves the score. Every
// move respects capacity and the affinity rules. A VM moved twice counts
// once if it ends away from its current host.
func Greedy(in *Instance, k int) Placement {
	p := in.Current()
	hostIdx := map[string]int{}
	for i, h := range in.Hosts {
		hostIdx[h.Name] = i
	}
	n := len(in.Hosts)
	cpu, mem := make([]int64, n), make([]int64, n)
	for _, v := range in.VMs {
		cpu[hostIdx[p[v.Name]]] += v.CPU
		mem[hostIdx[p[v.Name]]] += v.Mem
	}
	util := func(h int, m int64) int64 { return 10000 * m / in.Hosts[h].Mem }
	score := func(a, b int, ma, mb int64) (int64, int64) {
		lo, hi, sq := int64(1<<62), int64(-1), int64(0)
		for h := 0; h < n; h++ {
			m := mem[h]
			if h == a {
				m = ma
			} else if h == b {
				m = mb
			}
			u := util(h, m)
			lo, hi, sq = min(lo, u), max(hi, u), sq+u*u
		}
		return hi - lo, sq
	}
	rules := map[string][]VMRule{}
	for _, r := range in.VMRules {
		rules[r.VM1] = append(rules[r.VM1], r)
		rules[r.VM2] = append(rules[r.VM2], r)
	}
	allowed := func(v VM, to string) bool {
		if hs, ok := in.Must[v.Name]; ok && !contains(hs, to) {
			return false
		}
		if contains(in.MustNot[v.Name], to) {
			return false
		}
		for _, r := range rules[v.Name] {
			other := r.VM1
			if other == v.Name {
				other = r.VM2
			}
			if r.Together {
				return false // moving one VM of an affine pair breaks it
			}
			if p[other] == to {
				return false
			}
		}
		return true
	}
	moved := map[string]bool{}
	for step := 0; step < k; step++ {
		bestR, bestSq := score(-1, -1, 0, 0)
		bestV, bestH := -1, -1
		for i, v := range in.VMs {
			from := hostIdx[p[v.Name]]
			if !moved[v.Name] && len(moved) >= k {
				continue
			}
			for to := 0; to < n; to++ {
				if to == from || cpu[to]+v.CPU > in.Hosts[to].CPU || mem[to]+v.Mem > in.Hosts[to].Mem {
					continue
				}
				if !allowed(v, in.Hosts[to].Name) {
					continue
				}
				r, sq := score(from, to, mem[from]-v.Mem, mem[to]+v.Mem)
				if r < bestR || (r == bestR && sq < bestSq) {
					bestR, bestSq, bestV, bestH = r, sq, i, to
				}
			}
		}
		if bestV < 0 {
			break
		}
		v := in.VMs[bestV]
		from := hostIdx[p[v.Name]]
		cpu[from] -= v.CPU
		mem[from] -= v.Mem
		cpu[bestH] += v.CPU
		mem[bestH] += v.Mem
		p[v.Name] = in.Hosts[bestH].Name
		moved[v.Name] = p[v.Name] != v.Host
		if !moved[v.Name] {
			delete(moved, v.Name)
		}
	}
	return p
}
