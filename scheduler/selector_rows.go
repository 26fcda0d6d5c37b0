package scheduler

import (
	"slices"
	"sort"
	"strconv"
	"strings"
)

// writeSelectorRows writes a pod's inter-pod affinity terms and spread
// constraints: each row names the pods it selects by a match key
// (pod_match, kept by matchIndex) instead of holding the selector.
func writeSelectorRows(p *Pod) []stmt {
	var st []stmt
	pp := predicatesOf(p)
	for i, t := range p.Affinity {
		key := ""
		if pr := pp.term[i]; pr != nil {
			key = pr.key
		} else {
			key = pp.affinity.key
		}
		incoming := key
		if pr := pp.incoming[i]; pr != nil {
			incoming = pr.key
		}
		st = append(st, stmt{"insert into pod_affinity_term values " + params(7), []any{p.Name, t.Anti, t.Required, t.Weight, key, incoming, t.TopologyKey}})
	}
	for i, c := range p.Spread {
		match, spread, counted, self := "", "", false, false
		if pr := pp.spread[i]; pr != nil {
			match, counted, self = pr.key, pr.matches(p, nil), c.Selector.Matches(p.Labels)
			spread = spreadKey(p, c, match, counted, self)
		}
		st = append(st, stmt{"insert into pod_spread_constraint values " + params(11), []any{p.Name, c.TopologyKey, c.MaxSkew, c.Hard,
			max(c.MinDomains, 1), match, spread, counted, self, policyOr(c.NodeAffinityPolicy, "Honor"), policyOr(c.NodeTaintsPolicy, "Ignore")}})
	}
	return st
}

func policyOr(p, def string) string {
	if p == "" {
		return def
	}
	return p
}

// spreadKey names what a hard PodTopologySpread constraint counts and how
// it judges a domain: the pods it counts (match), its topology key, the
// nodes it counts them on (those carrying every topology key of the pod's
// hard constraints and passing its node-inclusion policies: the pod's node
// selector and required node affinity, its tolerations), its maxSkew and
// minDomains, and whether the pod counts and selects itself. The replicas
// of a deployment share it, and the database computes the domains and
// their counts once per key.
func spreadKey(p *Pod, c SpreadConstraint, match string, counted, self bool) string {
	var keys []string
	for _, o := range p.Spread {
		if o.Hard && o.MaxSkew > 0 {
			keys = append(keys, strconv.Quote(o.TopologyKey))
		}
	}
	sort.Strings(keys)
	parts := []string{match, strconv.Quote(c.TopologyKey), strings.Join(slices.Compact(keys), ","),
		strconv.FormatInt(c.MaxSkew, 10), strconv.FormatInt(max(c.MinDomains, 1), 10),
		strconv.FormatBool(counted), strconv.FormatBool(self)}
	if policyOr(c.NodeAffinityPolicy, "Honor") == "Honor" {
		parts = append(parts, "affinity "+nodeAffinityCanonical(p))
	}
	if policyOr(c.NodeTaintsPolicy, "Ignore") == "Honor" {
		parts = append(parts, "tolerations "+tolerationsCanonical(p))
	}
	return hashKey(strings.Join(parts, "\n"))
}

func nodeAffinityCanonical(p *Pod) string {
	var sel []string
	for _, k := range sortedKeys(p.NodeSelector) {
		sel = append(sel, strconv.Quote(k)+"="+strconv.Quote(p.NodeSelector[k]))
	}
	terms := make([]string, len(p.RequiredNodeAffinity))
	for i, t := range p.RequiredNodeAffinity {
		terms[i] = termKey(t)
	}
	sort.Strings(terms)
	return strings.Join(sel, ",") + " | " + strings.Join(slices.Compact(terms), ",")
}

func tolerationsCanonical(p *Pod) string {
	ts := make([]string, len(p.Tolerations))
	for i, t := range p.Tolerations {
		ts[i] = strconv.Quote(t.Key) + " " + t.Operator + " " + strconv.Quote(t.Value) + " " + t.Effect
	}
	sort.Strings(ts)
	return strings.Join(slices.Compact(ts), ",")
}
