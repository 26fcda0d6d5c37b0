package main

import (
	"fmt"
	"sort"
	"strings"
)

// NodeInfo is a node as the invariant checker sees it.
type NodeInfo struct {
	Rack   string
	Status string // up, unavailable or removed
}

// Snapshot reads the nodes and computes each one's status with plain Go
// (the same rule as the node_status view, written independently).
func (c *Cluster) Snapshot() (map[string]NodeInfo, map[string]int, error) {
	nodes := map[string]NodeInfo{}
	rows, err := c.DB.Query("select name, rack, healthy, heartbeat_age, failures from node")
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var n, r string
		var healthy bool
		var age, fails int
		if err := rows.Scan(&n, &r, &healthy, &age, &fails); err != nil {
			rows.Close()
			return nil, nil, err
		}
		st := "up"
		if !healthy {
			st = "unavailable"
			if fails >= c.Config.RemoveAfterFailures || age >= c.Config.RemoveAfterSeconds {
				st = "removed"
			}
		}
		nodes[n] = NodeInfo{Rack: r, Status: st}
	}
	rows.Close()
	shards := map[string]int{}
	rows, err = c.DB.Query("select name, replication_factor from shard")
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		var rf int
		if err := rows.Scan(&s, &rf); err != nil {
			return nil, nil, err
		}
		shards[s] = rf
	}
	return nodes, shards, rows.Err()
}

// CheckStep checks every invariant of a step's new layout against the
// nodes as they were when it was decided. It returns the violations.
func CheckStep(cfg Config, nodes map[string]NodeInfo, shards map[string]int, sr *StepResult) []string {
	if sr.New == nil {
		return nil
	}
	var bad []string
	l, old := sr.New, sr.Old
	up := func(n string) bool { return nodes[n].Status == "up" }
	// Sequencers.
	if l.Active == "" || l.Backup == "" {
		bad = append(bad, "missing sequencer")
	} else {
		if l.Active == l.Backup || nodes[l.Active].Rack == nodes[l.Backup].Rack {
			bad = append(bad, fmt.Sprintf("sequencers %s and %s share a node or rack", l.Active, l.Backup))
		}
		if !up(l.Active) || !up(l.Backup) {
			bad = append(bad, "sequencer on a node that is not up")
		}
	}
	// Management servers.
	if len(l.Management) != cfg.ManagementServers {
		bad = append(bad, fmt.Sprintf("%d management servers, want %d", len(l.Management), cfg.ManagementServers))
	}
	racks := map[string]bool{}
	for _, m := range l.Management {
		if !up(m) {
			bad = append(bad, fmt.Sprintf("management server %s is not up", m))
		}
		if racks[nodes[m].Rack] {
			bad = append(bad, fmt.Sprintf("two management servers in rack %s", nodes[m].Rack))
		}
		racks[nodes[m].Rack] = true
	}
	// Replicas: count, liveness, racks. (Balance is a soft constraint;
	// TestMinimalMovementOnJoin checks it.)
	perShard := map[string][]string{}
	for k, n := range l.Replicas {
		s := k[:strings.LastIndexByte(k, '/')]
		perShard[s] = append(perShard[s], n)
		switch nodes[n].Status {
		case "up":
		case "unavailable":
			if old.Replicas[k] != n {
				bad = append(bad, fmt.Sprintf("replica %s moved onto unavailable node %s", k, n))
			}
		default:
			bad = append(bad, fmt.Sprintf("replica %s on node %s (%s)", k, n, orNone(nodes[n].Status)))
		}
	}
	for s, rf := range shards {
		if len(perShard[s]) != rf {
			bad = append(bad, fmt.Sprintf("shard %s has %d replicas, want %d", s, len(perShard[s]), rf))
		}
		seen := map[string]bool{}
		for _, n := range perShard[s] {
			if seen[nodes[n].Rack] {
				bad = append(bad, fmt.Sprintf("shard %s has two replicas in rack %s", s, nodes[n].Rack))
			}
			seen[nodes[n].Rack] = true
		}
	}
	sort.Strings(bad)
	return bad
}
