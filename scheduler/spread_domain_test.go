package scheduler

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"testing"
)

// TestTopologySpreadDomainAgreesWithGo: topology_spread_domain, the bound
// pods each hard spread constraint of a batch counts per domain with the
// number of domains and the least count, equals what the Go reference
// filter counts (filterSet.eligibleNodes and the selected pods, as
// podTopologySpread reads them), on random clusters: nodes with and
// without each topology key, tainted or not, pods bound in two namespaces
// and phases, and batch pods whose constraints take every inclusion
// policy, one or two topology keys, and a nodeSelector or not. Both of the
// view's ways are reached: a key counted on every labelled node (counted
// from its pods) and one whose nodes the policies narrow (counted node by
// node); the test fails if either kind is missing.
func TestTopologySpreadDomainAgreesWithGo(t *testing.T) {
	t.Parallel()
	for _, d := range raceDBs(stateDBs()) {
		t.Run(d.name, func(t *testing.T) { topologySpreadDomainAgreesWithGo(t, newOn(t, d, Config{})) })
	}
}

func topologySpreadDomainAgreesWithGo(t *testing.T, s *Scheduler) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(17))
	keys := []string{LabelZone, "rack", LabelHostname}
	policies := []string{"", "Honor", "Ignore"}
	plain, narrowed := 0, 0
	for trial := 0; trial < 40; trial++ {
		emptyState(t, s)
		var nodes []Node
		for i := 0; i < 2+rng.Intn(10); i++ {
			n := Node{Name: fmt.Sprintf("t%d-n%d", trial, i), CPU: 64000, Memory: 64000, Labels: map[string]string{}}
			if rng.Intn(4) > 0 {
				n.Zone = fmt.Sprintf("z%d", rng.Intn(3))
			}
			if rng.Intn(2) == 0 {
				n.Labels["rack"] = fmt.Sprintf("r%d", rng.Intn(2))
			}
			if rng.Intn(2) == 0 {
				n.Labels["pool"] = "new"
			}
			if rng.Intn(4) == 0 {
				n.Taints = []Taint{{Key: "dedicated", Value: "db", Effect: []string{"NoSchedule", "NoExecute", "PreferNoSchedule"}[rng.Intn(3)]}}
			}
			nodes = append(nodes, n)
		}
		addNodes(t, s, nodes...)
		var pods []Pod
		for i := 0; i < rng.Intn(16); i++ {
			pods = append(pods, Pod{Name: fmt.Sprintf("t%d-b%d", trial, i), CPU: 10, Memory: 10,
				Namespace: []string{"", "other"}[rng.Intn(4)/3], Labels: map[string]string{"app": []string{"x", "y"}[rng.Intn(2)]},
				NodeName: nodes[rng.Intn(len(nodes))].Name, Phase: []string{PhaseRunning, PhaseRunning, PhasePending, PhaseSucceeded}[rng.Intn(4)]})
		}
		var batch []string
		for i := 0; i < 1+rng.Intn(4); i++ {
			p := Pod{Name: fmt.Sprintf("t%d-p%d", trial, i), CPU: 10, Memory: 10, Phase: PhasePending,
				Labels: map[string]string{"app": []string{"x", "y"}[rng.Intn(2)]}}
			if rng.Intn(4) == 0 {
				p.NodeSelector = map[string]string{"pool": "new"}
			}
			if rng.Intn(5) == 0 {
				p.Tolerations = []Toleration{{Key: "dedicated", Operator: "Exists"}}
			}
			for _, k := range rng.Perm(len(keys))[:1+rng.Intn(3)/2] { // one or two topology keys
				p.Spread = append(p.Spread, SpreadConstraint{TopologyKey: keys[k], MaxSkew: 1 + rng.Int63n(2), Hard: true,
					Selector: SelectLabels(map[string]string{"app": []string{"x", "y"}[rng.Intn(2)]}), MinDomains: rng.Int63n(3),
					NodeAffinityPolicy: policies[rng.Intn(3)], NodeTaintsPolicy: policies[rng.Intn(3)]})
			}
			pods = append(pods, p)
			batch = append(batch, p.Name)
		}
		addPods(t, s, pods...)
		st := s.State()
		var batchPods []*Pod
		inBatch := map[string]bool{}
		for _, name := range batch {
			batchPods = append(batchPods, st.Pods[name])
			inBatch[name] = true
		}
		if err := s.exec(ctx, wholeRing.write()); err != nil {
			t.Fatal(err)
		}
		if err := s.exec(ctx, loadModelPods(batchPods, nil, nil)); err != nil {
			t.Fatal(err)
		}

		type domains struct {
			Bound           map[string]int64
			Domains, Lowest int64
		}
		// The view, per spread key.
		got := map[string]*domains{}
		// In a transaction with JIT off on PostgreSQL, as a solve reads
		// it (compiling the view takes seconds).
		tx, err := s.DB().Begin()
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if postgres(s.DB()) {
			if _, err := tx.Exec("set local jit = off"); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := tx.Query("select spread_key, domain, bound, domains, bound_min from topology_spread_domain")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var key, domain string
			var bound, n, low int64
			if err := rows.Scan(&key, &domain, &bound, &n, &low); err != nil {
				t.Fatal(err)
			}
			if got[key] == nil {
				got[key] = &domains{Bound: map[string]int64{}, Domains: n, Lowest: low}
			}
			got[key].Bound[domain] = bound
		}
		rows.Close()
		plainKeys := map[string]bool{}
		rows, err = tx.Query("select spread_key from topology_spread_plain_key")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				t.Fatal(err)
			}
			plainKeys[k] = true
		}
		rows.Close()
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		// The spread key of each constraint of a batch pod (one per
		// topology key of the pod).
		keyOf := map[[2]string]string{}
		rows, err = s.DB().Query("select pod_name, topology_key, spread_key from pod_spread_constraint where hard = true and max_skew > 0")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var pod, key, sk string
			if err := rows.Scan(&pod, &key, &sk); err != nil {
				t.Fatal(err)
			}
			keyOf[[2]string{pod, key}] = sk
		}
		rows.Close()

		// The Go reference: the pods bound outside the batch, counted as
		// podTopologySpread counts them.
		fs := newFilterSet(st, batchPods)
		for _, q := range st.Pods {
			if live(q) && q.NodeName != "" && !inBatch[q.Name] {
				fs.add(q)
			}
		}
		for _, p := range batchPods {
			fp := fs.parse(p)
			for _, c := range fp.spread {
				sk := keyOf[[2]string{p.Name, c.c.TopologyKey}]
				eligible := fs.eligibleNodes(fp, c)
				want := &domains{Bound: map[string]int64{}}
				for _, d := range eligible {
					want.Bound[d] += 0
				}
				for _, q := range fs.sel[c.counts].pods {
					if d, ok := eligible[q.NodeName]; ok {
						want.Bound[d]++
					}
				}
				want.Domains, want.Lowest = int64(len(want.Bound)), math.MaxInt64
				for _, n := range want.Bound {
					want.Lowest = min(want.Lowest, n)
				}
				if len(want.Bound) == 0 {
					want = nil // no domain: the view has no row for the key
				}
				var have *domains = got[sk]
				if !reflect.DeepEqual(have, want) {
					t.Errorf("trial %d, pod %s, %s (plain %v): topology_spread_domain %+v, want %+v", trial, p.Name, c.c.TopologyKey, plainKeys[sk], have, want)
				}
				if want != nil && plainKeys[sk] {
					plain++
				} else if want != nil {
					narrowed++
				}
			}
		}
	}
	t.Logf("%d constraints counted from their pods, %d node by node", plain, narrowed)
	if plain == 0 || narrowed == 0 {
		t.Errorf("the trials reach %d plain keys and %d narrowed ones: both are needed", plain, narrowed)
	}
}
