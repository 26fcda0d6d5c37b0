package scheduler

import "math/rand"

// Random label sets, selectors and terms for the property and differential
// tests: few keys and values, so that selectors match now and then.
var (
	randomLabelKeys   = []string{"app", "role", "tier"}
	randomLabelValues = []string{"a", "b", "c"}
	randomNamespaces  = []string{"w", "x", "y"}
)

func randomLabels(rng *rand.Rand) map[string]string {
	m := map[string]string{}
	for _, k := range randomLabelKeys {
		if rng.Intn(3) > 0 {
			m[k] = randomLabelValues[rng.Intn(len(randomLabelValues))]
		}
	}
	return m
}

// randomSelector returns nil now and then, empty now and then, otherwise
// up to two pairs and two requirements of every operator.
func randomSelector(rng *rand.Rand) *LabelSelector {
	switch rng.Intn(10) {
	case 0:
		return nil
	case 1:
		return &LabelSelector{}
	}
	s := &LabelSelector{}
	for i := rng.Intn(3); i > 0; i-- {
		if s.MatchLabels == nil {
			s.MatchLabels = map[string]string{}
		}
		s.MatchLabels[randomLabelKeys[rng.Intn(len(randomLabelKeys))]] = randomLabelValues[rng.Intn(len(randomLabelValues))]
	}
	for i := rng.Intn(3); i > 0; i-- {
		r := LabelRequirement{Key: randomLabelKeys[rng.Intn(len(randomLabelKeys))],
			Operator: []string{"In", "NotIn", "Exists", "DoesNotExist"}[rng.Intn(4)]}
		if r.Operator == "In" || r.Operator == "NotIn" {
			for j := 1 + rng.Intn(2); j > 0; j-- {
				r.Values = append(r.Values, randomLabelValues[rng.Intn(len(randomLabelValues))])
			}
		}
		s.MatchExpressions = append(s.MatchExpressions, r)
	}
	return s
}

// randomTerm: a term over the pod's namespace most of the time, now and
// then over listed namespaces or a namespace selector.
func randomTerm(rng *rand.Rand, topologyKeys []string) PodAffinityTerm {
	t := PodAffinityTerm{Anti: rng.Intn(2) == 0, Required: rng.Intn(4) > 0, Weight: int64(1 + rng.Intn(10)),
		Selector: randomSelector(rng), TopologyKey: topologyKeys[rng.Intn(len(topologyKeys))]}
	if t.Selector == nil && rng.Intn(2) == 0 {
		t.Selector = SelectLabels(map[string]string{"app": randomLabelValues[rng.Intn(len(randomLabelValues))]})
	}
	switch rng.Intn(6) {
	case 0:
		t.Namespaces = []string{randomNamespaces[rng.Intn(len(randomNamespaces))]}
	case 1:
		t.NamespaceSelector = &LabelSelector{}
	case 2:
		t.NamespaceSelector = SelectLabels(map[string]string{"team": randomLabelValues[rng.Intn(2)]})
	case 3:
		t.NamespaceSelector = &LabelSelector{MatchExpressions: []LabelRequirement{{Key: "team", Operator: "DoesNotExist"}}}
	}
	return t
}

// randomSpread: PodTopologySpread constraints (maxSkew 1-2) now and then
// with minDomains and inclusion policies, and weave's even spreading
// (maxSkew 0).
func randomSpread(rng *rand.Rand, topologyKeys []string) SpreadConstraint {
	c := SpreadConstraint{TopologyKey: topologyKeys[rng.Intn(len(topologyKeys))], MaxSkew: int64(rng.Intn(3)), Hard: rng.Intn(4) > 0,
		Selector: randomSelector(rng)}
	if rng.Intn(4) == 0 {
		c.MinDomains = int64(1 + rng.Intn(4))
	}
	if rng.Intn(4) == 0 {
		c.NodeAffinityPolicy = "Ignore"
	}
	if rng.Intn(4) == 0 {
		c.NodeTaintsPolicy = "Honor"
	}
	return c
}

// randomNamespaceLabels: the namespaces of randomNamespaces that exist (one
// now and then does not), labelled team=a, team=b or not at all.
func randomNamespaceLabels(rng *rand.Rand) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, ns := range randomNamespaces {
		switch rng.Intn(4) {
		case 0:
		case 1:
			out[ns] = map[string]string{}
		default:
			out[ns] = map[string]string{"team": randomLabelValues[rng.Intn(2)]}
		}
	}
	return out
}
