package scheduler

import (
	"context"
	"fmt"
	"sort"
)

type stmt struct {
	q    string
	args []any
}

// exec runs statements in one transaction.
func (s *Scheduler) exec(ctx context.Context, st []stmt) error {
	if len(st) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, x := range st {
		if _, err := tx.ExecContext(ctx, x.q, x.args...); err != nil {
			return fmt.Errorf("scheduler: %s: %w", x.q, err)
		}
	}
	return tx.Commit()
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullInt(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}

func deleteNode(name string) []stmt {
	return []stmt{
		{"delete from node where name = ?", []any{name}},
		{"delete from node_label where node_name = ?", []any{name}},
		{"delete from node_taint where node_name = ?", []any{name}},
		{"delete from node_image where node_name = ?", []any{name}},
	}
}

func writeNode(n Node) []stmt {
	st := deleteNode(n.Name)
	st = append(st, stmt{"insert into node values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", []any{
		n.Name, n.Zone, n.CPU, n.Memory, n.Storage, n.Pods, n.Unschedulable, !n.NotReady,
		n.NetworkUnavailable, n.MemoryPressure, n.DiskPressure, n.PIDPressure}})
	for _, k := range sortedKeys(n.Labels) {
		st = append(st, stmt{"insert into node_label values (?, ?, ?)", []any{n.Name, k, n.Labels[k]}})
	}
	for _, t := range n.Taints {
		st = append(st, stmt{"insert into node_taint values (?, ?, ?, ?)", []any{n.Name, t.Key, t.Value, t.Effect}})
	}
	for _, k := range sortedKeys(n.Images) {
		st = append(st, stmt{"insert into node_image values (?, ?, ?)", []any{n.Name, k, n.Images[k]}})
	}
	return st
}

var podTables = []string{"pod_label", "pod_node_selector", "pod_node_affinity", "pod_toleration",
	"pod_affinity_term", "pod_spread_constraint", "pod_host_port", "pod_volume", "pod_image"}

func deletePod(name string) []stmt {
	st := []stmt{{"delete from pod where name = ?", []any{name}}}
	for _, t := range podTables {
		st = append(st, stmt{"delete from " + t + " where pod_name = ?", []any{name}})
	}
	return st
}

func writePod(p *Pod) []stmt {
	st := deletePod(p.Name)
	st = append(st, stmt{"insert into pod values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", []any{
		p.Name, p.Namespace, p.SchedulerName, p.Phase, nullStr(p.NodeName), nullStr(p.RequestedNode),
		p.CPU, p.Memory, p.Storage, p.CPULimit, p.MemoryLimit, p.Priority, p.Group, nullStr(p.Service),
		nullInt(p.MaxPerNode), p.created}})
	for _, k := range sortedKeys(p.Labels) {
		st = append(st, stmt{"insert into pod_label values (?, ?, ?)", []any{p.Name, k, p.Labels[k]}})
	}
	for _, k := range sortedKeys(p.NodeSelector) {
		st = append(st, stmt{"insert into pod_node_selector values (?, ?, ?)", []any{p.Name, k, p.NodeSelector[k]}})
	}
	addReq := func(required bool, term int, weight int64, r NodeRequirement) {
		vals := r.Values
		if r.Operator == "Exists" || r.Operator == "DoesNotExist" || len(vals) == 0 {
			vals = []string{""}
		}
		for _, v := range vals {
			st = append(st, stmt{"insert into pod_node_affinity values (?, ?, ?, ?, ?, ?, ?)", []any{p.Name, required, term, weight, r.Key, r.Operator, v}})
		}
	}
	for i, term := range p.RequiredNodeAffinity {
		for _, r := range term {
			addReq(true, i, 0, r)
		}
	}
	for i, term := range p.PreferredNodeAffinity {
		for _, r := range term.Requirements {
			addReq(false, i, term.Weight, r)
		}
	}
	for _, t := range p.Tolerations {
		st = append(st, stmt{"insert into pod_toleration values (?, ?, ?, ?, ?)", []any{p.Name, t.Key, t.Operator, t.Value, t.Effect}})
	}
	for _, t := range p.Affinity {
		st = append(st, stmt{"insert into pod_affinity_term values (?, ?, ?, ?, ?, ?, ?)", []any{p.Name, t.Anti, t.Required, t.Weight, t.Key, t.Value, t.TopologyKey}})
	}
	for _, c := range p.Spread {
		st = append(st, stmt{"insert into pod_spread_constraint values (?, ?, ?, ?)", []any{p.Name, c.TopologyKey, c.MaxSkew, c.Hard}})
	}
	for _, hp := range p.HostPorts {
		st = append(st, stmt{"insert into pod_host_port values (?, ?, ?)", []any{p.Name, hp.Protocol, hp.Port}})
	}
	for _, v := range p.Volumes {
		st = append(st, stmt{"insert into pod_volume values (?, ?)", []any{p.Name, v}})
	}
	for _, im := range p.Images {
		st = append(st, stmt{"insert into pod_image values (?, ?)", []any{p.Name, im}})
	}
	return st
}

// placeWeight is the reward of P1 for placing a pod of the given priority
// rank: more than every pod of lower ranks together and than every other
// soft constraint, so that priorities are lexicographic.
const baseWeight = 1_000_000

func placeWeights(pods []*Pod) map[int64]int64 {
	count := map[int64]int64{}
	for _, p := range pods {
		count[p.Priority]++
	}
	prios := make([]int64, 0, len(count))
	for pr := range count {
		prios = append(prios, pr)
	}
	sort.Slice(prios, func(i, j int) bool { return prios[i] < prios[j] })
	w := map[int64]int64{}
	var below int64
	for _, pr := range prios {
		w[pr] = baseWeight + below
		below += w[pr] * count[pr]
	}
	return w
}

// loadModelPods replaces the rows a model decides: pods (pending) and
// victims (bound pods the preemption model may evict).
func loadModelPods(pods []*Pod, victims []*Pod) []stmt {
	st := []stmt{{"delete from pending_pod", nil}, {"delete from batch_pod", nil}}
	w := placeWeights(pods)
	isVictim := map[string]bool{}
	for _, v := range victims {
		isVictim[v.Name] = true
	}
	for _, p := range pods {
		bound := ""
		if isVictim[p.Name] {
			bound = p.NodeName
		}
		st = append(st,
			stmt{"insert into batch_pod values (?, ?)", []any{p.Name, nullStr(bound)}},
			stmt{"insert into pending_pod values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", []any{
				p.Name, p.Namespace, nullStr(bound), nullStr(bound), nullStr(p.RequestedNode),
				p.CPU, p.Memory, p.Storage, p.CPULimit, p.MemoryLimit, p.Priority, p.Group,
				nullStr(p.Service), nullInt(p.MaxPerNode), w[p.Priority]}})
	}
	return st
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
