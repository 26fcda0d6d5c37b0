package scheduler

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
)

// TestLabelValueIDsNumberEachValue: after random node writes (new nodes,
// relabelled nodes, deleted nodes, values that vanish and come back), on
// each state database, two label rows of one key have the same value_id
// exactly when they have the same value: G2 reads a node's topology domain
// as that number.
func TestLabelValueIDsNumberEachValue(t *testing.T) {
	t.Parallel()
	for _, d := range raceDBs(stateDBs()) {
		t.Run(d.name, func(t *testing.T) {
			s := newOn(t, d, Config{})
			ctx := context.Background()
			rng := rand.New(rand.NewSource(5))
			live := map[string]bool{}
			for step := 0; step < 60; step++ {
				name := fmt.Sprintf("n%d", rng.Intn(12))
				if live[name] && rng.Intn(4) == 0 {
					if err := s.DeleteNode(ctx, name); err != nil {
						t.Fatal(err)
					}
					delete(live, name)
				} else {
					labels := map[string]string{"rack": fmt.Sprintf("r%d", rng.Intn(4))}
					if rng.Intn(2) == 0 {
						labels["zone"] = fmt.Sprintf("z%d", rng.Intn(2))
					}
					addNodes(t, s, Node{Name: name, CPU: 1000, Memory: 1000, Labels: labels})
					live[name] = true
				}
				rows, err := s.DB().Query("select label_key, label_value, value_id from node_label")
				if err != nil {
					t.Fatal(err)
				}
				idOf := map[[2]string]int64{}            // (key, value) -> id
				valueOf := map[string]map[int64]string{} // key -> id -> value
				n := 0
				for rows.Next() {
					var k, v string
					var id int64
					if err := rows.Scan(&k, &v, &id); err != nil {
						t.Fatal(err)
					}
					n++
					if old, ok := idOf[[2]string{k, v}]; ok && old != id {
						t.Errorf("step %d: %s=%s has ids %d and %d", step, k, v, old, id)
					}
					idOf[[2]string{k, v}] = id
					if valueOf[k] == nil {
						valueOf[k] = map[int64]string{}
					}
					if other, ok := valueOf[k][id]; ok && other != v {
						t.Errorf("step %d: %s=%s and %s=%s share id %d", step, k, v, k, other, id)
					}
					valueOf[k][id] = v
				}
				rows.Close()
				if n == 0 && len(live) > 0 {
					t.Fatalf("step %d: no label rows for %d nodes", step, len(live))
				}
			}
		})
	}
}
