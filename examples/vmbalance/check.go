package main

import (
	"fmt"
	"sort"
)

// Utilisation returns each host's memory utilisation in hundredths of a
// percent (basis points) of its own capacity, by host name.
func (in *Instance) Utilisation(p Placement) map[string]int64 {
	load := map[string]int64{}
	for _, v := range in.VMs {
		load[p[v.Name]] += v.Mem
	}
	out := map[string]int64{}
	for _, h := range in.Hosts {
		out[h.Name] = 10000 * load[h.Name] / h.Mem
	}
	return out
}

// Range returns the least and most utilised hosts' utilisation (basis
// points).
func (in *Instance) Range(p Placement) (lo, hi int64) {
	u := in.Utilisation(p)
	first := true
	for _, h := range in.Hosts {
		if first || u[h.Name] < lo {
			lo = u[h.Name]
		}
		if first || u[h.Name] > hi {
			hi = u[h.Name]
		}
		first = false
	}
	return lo, hi
}

// Migrations lists the VMs whose host in p differs from their current
// host, sorted by name.
func (in *Instance) Migrations(p Placement) []VM {
	var out []VM
	for _, v := range in.VMs {
		if p[v.Name] != v.Host {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Check validates a placement with plain Go, independently of Weave: every
// VM on a known host, capacities, VM–VM and VM–host rules, and at most k
// migrations. It returns every violation found.
func (in *Instance) Check(p Placement, k int) []string {
	var bad []string
	hosts := map[string]Host{}
	for _, h := range in.Hosts {
		hosts[h.Name] = h
	}
	cpu, mem := map[string]int64{}, map[string]int64{}
	for _, v := range in.VMs {
		h, ok := p[v.Name]
		if _, known := hosts[h]; !ok || !known {
			bad = append(bad, fmt.Sprintf("%s on unknown host %q", v.Name, h))
			continue
		}
		cpu[h] += v.CPU
		mem[h] += v.Mem
	}
	for _, h := range in.Hosts {
		if cpu[h.Name] > h.CPU {
			bad = append(bad, fmt.Sprintf("%s: CPU %d > capacity %d", h.Name, cpu[h.Name], h.CPU))
		}
		if mem[h.Name] > h.Mem {
			bad = append(bad, fmt.Sprintf("%s: memory %d > capacity %d", h.Name, mem[h.Name], h.Mem))
		}
	}
	for _, r := range in.VMRules {
		same := p[r.VM1] == p[r.VM2]
		if r.Together && !same {
			bad = append(bad, fmt.Sprintf("affinity %s–%s broken", r.VM1, r.VM2))
		}
		if !r.Together && same {
			bad = append(bad, fmt.Sprintf("anti-affinity %s–%s broken", r.VM1, r.VM2))
		}
	}
	for v, hs := range in.Must {
		if !contains(hs, p[v]) {
			bad = append(bad, fmt.Sprintf("%s on %s, outside its hosts %v", v, p[v], hs))
		}
	}
	for v, hs := range in.MustNot {
		if contains(hs, p[v]) {
			bad = append(bad, fmt.Sprintf("%s on forbidden host %s", v, p[v]))
		}
	}
	if n := len(in.Migrations(p)); n > k {
		bad = append(bad, fmt.Sprintf("%d migrations > %d", n, k))
	}
	return bad
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
