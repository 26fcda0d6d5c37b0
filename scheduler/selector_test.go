package scheduler

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

// TestSelectorMatchesLikeApimachinery: LabelSelector.Matches, which decides
// the rows of pod_match, answers as k8s.io/apimachinery's labels.Selector
// built by metav1.LabelSelectorAsSelector for random label sets and
// selectors (nil, empty, pairs and requirements of every operator).
func TestSelectorMatchesLikeApimachinery(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	yes, no := 0, 0
	for i := 0; i < 20000; i++ {
		sel, set := randomSelector(rng), randomLabels(rng)
		want := kubeSelector(sel).Matches(labels.Set(set))
		if got := sel.Matches(set); got != want {
			t.Fatalf("selector %s on %v: Matches %v, labels.Selector %v", sel.canonical(), set, got, want)
		}
		if want {
			yes++
		} else {
			no++
		}
	}
	if yes < 2000 || no < 2000 {
		t.Fatalf("the cases do not exercise both answers: %d match, %d do not", yes, no)
	}
	if (*LabelSelector)(nil).Matches(map[string]string{}) || !(&LabelSelector{}).Matches(nil) {
		t.Fatal("nil must select nothing and empty everything")
	}
}

// TestSelectorCanonicalNamesEqualSelectors: selectors that differ only in
// the order of their pairs, requirements and values, or in repeated
// values, share a canonical form (and so a match key); others do not.
func TestSelectorCanonicalNamesEqualSelectors(t *testing.T) {
	a := &LabelSelector{MatchLabels: map[string]string{"app": "a", "role": "b"},
		MatchExpressions: []LabelRequirement{{Key: "tier", Operator: "In", Values: []string{"x", "y"}}, {Key: "z", Operator: "Exists"}}}
	b := &LabelSelector{MatchLabels: map[string]string{"role": "b", "app": "a"},
		MatchExpressions: []LabelRequirement{{Key: "z", Operator: "Exists"}, {Key: "tier", Operator: "In", Values: []string{"y", "x", "y"}}}}
	if a.canonical() != b.canonical() {
		t.Fatalf("%s != %s", a.canonical(), b.canonical())
	}
	for _, c := range []*LabelSelector{nil, {}, {MatchLabels: map[string]string{"app": "a"}},
		{MatchLabels: map[string]string{"app": "a", "role": "b"}, MatchExpressions: []LabelRequirement{{Key: "tier", Operator: "NotIn", Values: []string{"x", "y"}}, {Key: "z", Operator: "Exists"}}}} {
		if c.canonical() == a.canonical() {
			t.Errorf("%s reads as %s", c.canonical(), a.canonical())
		}
	}
	if (*LabelSelector)(nil).canonical() == (&LabelSelector{}).canonical() {
		t.Error("nil and empty read the same")
	}
}

// TestTermCoverageLikeTheFramework: the namespaces a term covers, as the
// models read them (nsCover: strict for the terms of the pod being placed,
// loose for anti-affinity terms), are the framework's (kubeTerm:
// AffinityTerm after PreFilter's merge, and as an existing pod's term) on
// random terms and namespaces, some of them without a Namespace object.
func TestTermCoverageLikeTheFramework(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	st := NewState()
	covered, differ := 0, 0
	for i := 0; i < 5000; i++ {
		st.Namespaces = randomNamespaceLabels(rng)
		term := randomTerm(rng, []string{LabelHostname})
		term.Selector = &LabelSelector{} // the namespaces alone
		podNS := randomNamespaces[rng.Intn(len(randomNamespaces))]
		k := newKubeTerm(term, podNS)
		for _, ns := range randomNamespaces {
			q := &Pod{Namespace: ns}
			strict, loose := coverOf(term, podNS, false).covers(ns, st.Namespaces), coverOf(term, podNS, true).covers(ns, st.Namespaces)
			if want := k.selectsIncoming(q, st); strict != want {
				t.Fatalf("term %+v of a pod of %s, namespace %s (%v): strict %v, the framework %v", term, podNS, ns, st.Namespaces, strict, want)
			}
			if want := k.selectsAsExisting(q, st); loose != want {
				t.Fatalf("term %+v of a pod of %s, namespace %s (%v): loose %v, the framework %v", term, podNS, ns, st.Namespaces, loose, want)
			}
			if strict {
				covered++
			}
			if strict != loose {
				differ++
			}
		}
	}
	if covered < 1000 || differ == 0 {
		t.Fatalf("the cases cover %d namespaces, %d differently read", covered, differ)
	}
}

// podMatchRows reads pod_match as "key pod" lines.
func podMatchRows(t testing.TB, s *Scheduler) []string {
	t.Helper()
	rows, err := s.db.Query("select match_key, pod_name from pod_match")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k, p string
		if err := rows.Scan(&k, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, k+" "+p)
	}
	sort.Strings(out)
	return out
}

// wantPodMatch computes pod_match from the state with the framework's
// reading of each predicate (apimachinery selectors, kubeTerm coverage):
// for every pod's terms and constraints, the pods they select.
func wantPodMatch(st *State) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range st.Pods {
		pp := predicatesOf(p)
		add := func(key string, sel func(q *Pod) bool) {
			if seen[key] {
				return
			}
			seen[key] = true
			for _, q := range st.Pods {
				if sel(q) {
					out = append(out, key+" "+q.Name)
				}
			}
		}
		var aff []*kubeTerm
		for i, term := range p.Affinity {
			k := newKubeTerm(term, p.Namespace)
			switch {
			case term.Required && !term.Anti:
				aff = append(aff, k)
			case term.Required:
				add(pp.term[i].key, func(q *Pod) bool { return k.selectsAsExisting(q, st) })
				if pp.incoming[i] != nil {
					add(pp.incoming[i].key, func(q *Pod) bool { return k.selectsIncoming(q, st) })
				}
			default:
				add(pp.term[i].key, func(q *Pod) bool { return k.selectsIncoming(q, st) })
			}
		}
		if len(aff) > 0 {
			add(pp.affinity.key, func(q *Pod) bool {
				for _, k := range aff {
					if !k.selectsIncoming(q, st) {
						return false
					}
				}
				return true
			})
		}
		for i, c := range p.Spread {
			if pp.spread[i] == nil {
				continue
			}
			sel, ns := kubeSelector(c.Selector), p.Namespace
			add(pp.spread[i].key, func(q *Pod) bool {
				return !sel.Empty() && q.Namespace == ns && !q.Terminating && sel.Matches(labels.Set(q.Labels))
			})
		}
	}
	sort.Strings(out)
	return out
}

// TestPodMatchFollowsThePods: on every state database, pod_match holds
// what the framework's selectors select after each of random pod upserts
// (labels, terms, namespaces, terminating), deletions and namespace label
// changes, and no row of a selector no pod uses any more.
func TestPodMatchFollowsThePods(t *testing.T) {
	t.Parallel()
	for _, d := range raceDBs(stateDBs()) {
		t.Run(d.name, func(t *testing.T) {
			s := newOn(t, d, Config{})
			addNodes(t, s, Node{Name: "n1", CPU: 1000, Memory: 1000, Storage: 1000, Pods: 10})
			ctx := context.Background()
			rng := rand.New(rand.NewSource(5))
			steps := 400
			if d.name == "postgres" {
				steps = 150
			}
			rows := 0
			for i := 0; i < steps; i++ {
				switch r := rng.Intn(10); {
				case r < 6:
					p := Pod{Name: fmt.Sprintf("p%d", rng.Intn(25)), Namespace: randomNamespaces[rng.Intn(len(randomNamespaces))],
						Labels: randomLabels(rng), Terminating: rng.Intn(6) == 0}
					if rng.Intn(2) == 0 {
						p.NodeName, p.Phase = "n1", PhaseRunning
					}
					for j := rng.Intn(3); j > 0; j-- {
						p.Affinity = append(p.Affinity, randomTerm(rng, []string{LabelHostname, LabelZone}))
					}
					for j := rng.Intn(2); j > 0; j-- {
						p.Spread = append(p.Spread, randomSpread(rng, []string{LabelHostname, LabelZone}))
					}
					if err := s.UpsertPod(ctx, p); err != nil {
						t.Fatal(err)
					}
				case r < 8:
					if err := s.DeletePod(ctx, fmt.Sprintf("p%d", rng.Intn(25))); err != nil {
						t.Fatal(err)
					}
				case r < 9:
					ns := randomNamespaces[rng.Intn(len(randomNamespaces))]
					if err := s.UpsertNamespace(ctx, ns, map[string]string{"team": randomLabelValues[rng.Intn(2)]}); err != nil {
						t.Fatal(err)
					}
				default:
					if err := s.DeleteNamespace(ctx, randomNamespaces[rng.Intn(len(randomNamespaces))]); err != nil {
						t.Fatal(err)
					}
				}
				got, want := podMatchRows(t, s), wantPodMatch(s.State())
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("step %d: pod_match\n%s\nwant\n%s", i, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				rows += len(got)
			}
			if rows < 10*steps {
				t.Fatalf("%d rows over %d steps: the steps select too little", rows, steps)
			}
		})
	}
}
