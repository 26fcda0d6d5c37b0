package main

import (
	"fmt"
	"math/rand"
	"sort"
)

// Host is a physical server.
type Host struct {
	Name string
	CPU  int64 // MHz
	Mem  int64 // MB
}

// VM is a virtual machine with its reservations and current host.
type VM struct {
	Name string
	CPU  int64 // MHz reserved (0: no reservation)
	Mem  int64 // MB
	Host string
}

// VMRule keeps two VMs together (affinity) or apart (anti-affinity).
type VMRule struct {
	VM1, VM2 string
	Together bool
}

// Instance is one cluster state: hosts, VMs placed on them, and rules.
type Instance struct {
	Hosts   []Host
	VMs     []VM
	VMRules []VMRule
	// Must lists, for some VMs, the only hosts they may run on; MustNot
	// the hosts they may never run on.
	Must    map[string][]string
	MustNot map[string][]string
}

// Placement maps VM name to host name.
type Placement map[string]string

// Current returns the instance's placement.
func (in *Instance) Current() Placement {
	p := Placement{}
	for _, v := range in.VMs {
		p[v.Name] = v.Host
	}
	return p
}

// paperHosts is the shape of the paper's cluster: 16 hosts with different
// capacities (8 TB of memory in all).
var paperHosts = []struct{ cpu, memGB int64 }{
	{2 * 16 * 2400, 256}, {2 * 16 * 2400, 256}, {2 * 16 * 2400, 256}, {2 * 16 * 2400, 256},
	{2 * 20 * 2600, 384}, {2 * 20 * 2600, 384}, {2 * 20 * 2600, 384}, {2 * 20 * 2600, 384},
	{2 * 24 * 2600, 512}, {2 * 24 * 2600, 512}, {2 * 24 * 2600, 512}, {2 * 24 * 2600, 512},
	{2 * 28 * 2800, 768}, {2 * 28 * 2800, 768},
	{2 * 32 * 3000, 1024}, {2 * 32 * 3000, 1024},
}

// Generate builds a cluster shaped like the paper's trace: 16
// heterogeneous hosts, nVMs VMs of varied sizes (1 GB to 64 GB, heavy
// tailed), placed so that the least loaded host is at exactly lo percent
// memory utilisation and the most loaded at exactly hi percent, with a few
// affinity and anti-affinity rules that the initial placement satisfies.
func Generate(seed int64, nVMs int, lo, hi int64) *Instance {
	rng := rand.New(rand.NewSource(seed))
	in := &Instance{Must: map[string][]string{}, MustNot: map[string][]string{}}
	var capTotal int64
	for i, h := range paperHosts {
		in.Hosts = append(in.Hosts, Host{Name: fmt.Sprintf("host-%02d", i+1), CPU: h.cpu, Mem: h.memGB * 1024})
		capTotal += h.memGB * 1024
	}
	rng.Shuffle(len(in.Hosts), func(i, j int) { in.Hosts[i], in.Hosts[j] = in.Hosts[j], in.Hosts[i] })
	for i := range in.Hosts {
		in.Hosts[i].Name = fmt.Sprintf("host-%02d", i+1)
	}

	// VM sizes: powers of two from 1 GB to 64 GB (mean about 9 GB), plus
	// a few odd sizes, so that the cluster is about 58% full.
	sizes := []struct {
		gb     int64
		weight int
	}{{1, 10}, {2, 20}, {4, 25}, {6, 5}, {8, 15}, {12, 5}, {16, 11}, {32, 7}, {64, 2}}
	totalW := 0
	for _, s := range sizes {
		totalW += s.weight
	}
	mems := make([]int64, nVMs)
	var memTotal int64
	for i := range mems {
		r := rng.Intn(totalW)
		for _, s := range sizes {
			if r < s.weight {
				mems[i] = s.gb * 1024
				break
			}
			r -= s.weight
		}
		memTotal += mems[i]
	}

	// Target utilisation per host: one at hi, one at lo, the others spread
	// between them so that the targets add up to the VMs' total memory.
	n := len(in.Hosts)
	target := make([]int64, n)
	order := rng.Perm(n)
	hiHost, loHost := order[0], order[1]
	target[hiHost] = in.Hosts[hiHost].Mem * hi / 100
	target[loHost] = in.Hosts[loHost].Mem * lo / 100
	rest := memTotal - target[hiHost] - target[loHost]
	weights := make([]float64, n)
	var wsum float64
	for _, i := range order[2:] {
		// Mostly near the mean, with a tail towards both ends.
		weights[i] = float64(in.Hosts[i].Mem) * (0.8 + 0.4*rng.Float64())
		wsum += weights[i]
	}
	var assigned int64
	for k, i := range order[2:] {
		if k == n-3 {
			target[i] = rest - assigned
		} else {
			target[i] = int64(float64(rest) * weights[i] / wsum)
		}
		assigned += target[i]
	}
	for i := range target {
		u := 100 * target[i] / in.Hosts[i].Mem
		if i != hiHost && i != loHost && (u <= lo || u >= hi) {
			// Keep the extremes unique: retry with another seed stream.
			return Generate(seed+1_000_003, nVMs, lo, hi)
		}
	}

	// Place the VMs, largest first, on the host furthest below its target
	// (relative to its capacity), then adjust one VM per host so that every
	// host meets its target exactly.
	sort.Slice(mems, func(i, j int) bool { return mems[i] > mems[j] })
	load := make([]int64, n)
	hostOf := make([]int, nVMs)
	for v, m := range mems {
		best := -1
		var bestGap int64
		for h := range in.Hosts {
			gap := target[h] - load[h]
			if best < 0 || gap > bestGap {
				best, bestGap = h, gap
			}
		}
		hostOf[v] = best
		load[best] += m
	}
	for h := range in.Hosts {
		diff := target[h] - load[h]
		if diff == 0 {
			continue
		}
		// The smallest VM on h that stays at least 512 MB absorbs diff.
		adj := -1
		for v := range mems {
			if hostOf[v] == h && mems[v]+diff >= 512 && (adj < 0 || mems[v] < mems[adj]) {
				adj = v
			}
		}
		if adj < 0 {
			return Generate(seed+1_000_003, nVMs, lo, hi)
		}
		mems[adj] += diff
		load[h] += diff
	}

	// CPU: about a third of the VMs reserve CPU (500 MHz to 8 GHz).
	perm := rng.Perm(nVMs)
	cpuLoad := make([]int64, n)
	for k, v := range perm {
		h := hostOf[v]
		var cpu int64
		if rng.Intn(3) == 0 {
			cpu = int64(500 * (1 + rng.Intn(16)))
			if cpuLoad[h]+cpu > in.Hosts[h].CPU*7/10 {
				cpu = 0
			}
		}
		cpuLoad[h] += cpu
		in.VMs = append(in.VMs, VM{Name: fmt.Sprintf("vm-%03d", k+1), CPU: cpu, Mem: mems[v], Host: in.Hosts[h].Name})
	}
	sort.Slice(in.VMs, func(i, j int) bool { return in.VMs[i].Name < in.VMs[j].Name })

	// Rules consistent with the initial placement.
	byHost := map[string][]string{}
	for _, v := range in.VMs {
		byHost[v.Host] = append(byHost[v.Host], v.Name)
	}
	pick := func() VM { return in.VMs[rng.Intn(len(in.VMs))] }
	for len(in.VMRules) < 12 { // affinity: pairs already together
		a := pick()
		others := byHost[a.Host]
		b := others[rng.Intn(len(others))]
		if b != a.Name {
			in.VMRules = append(in.VMRules, VMRule{a.Name, b, true})
		}
	}
	for len(in.VMRules) < 32 { // anti-affinity: pairs already apart
		a, b := pick(), pick()
		if a.Host != b.Host {
			in.VMRules = append(in.VMRules, VMRule{a.Name, b.Name, false})
		}
	}
	for len(in.Must) < 10 { // pinned to a host group containing the current host
		v := pick()
		group := []string{v.Host}
		for len(group) < 3 {
			h := in.Hosts[rng.Intn(n)].Name
			if h != group[0] && (len(group) < 2 || h != group[1]) {
				group = append(group, h)
			}
		}
		in.Must[v.Name] = group
	}
	for len(in.MustNot) < 10 { // kept off a few other hosts
		v := pick()
		for len(in.MustNot[v.Name]) < 2 {
			h := in.Hosts[rng.Intn(n)].Name
			if h != v.Host && (len(in.MustNot[v.Name]) == 0 || in.MustNot[v.Name][0] != h) {
				in.MustNot[v.Name] = append(in.MustNot[v.Name], h)
			}
		}
	}
	return in
}

// rulesOf returns the VM–VM rules that name v.
func (in *Instance) rulesOf(v string) []VMRule {
	var out []VMRule
	for _, r := range in.VMRules {
		if r.VM1 == v || r.VM2 == v {
			out = append(out, r)
		}
	}
	return out
}
