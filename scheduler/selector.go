package scheduler

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Label selectors as Kubernetes defines them (metav1.LabelSelector and
// k8s.io/apimachinery/pkg/labels): the conjunction of every pair and
// requirement, nil matching nothing and empty matching everything. The
// placement model never evaluates a selector: the scheduler keeps, in the
// table pod_match, which pods each selector of the state selects
// (matchIndex, below), and the policies join it.

// SelectLabels returns the selector of the pods carrying every label of m
// (matchLabels only); an empty map selects every pod.
func SelectLabels(m map[string]string) *LabelSelector {
	return &LabelSelector{MatchLabels: m}
}

// Empty reports whether the selector has neither a pair nor a requirement:
// it matches every set of labels. A nil selector is not empty (it matches
// nothing).
func (s *LabelSelector) Empty() bool {
	return s != nil && len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0
}

// Matches reports whether a set of labels meets every pair and every
// requirement of the selector; nil matches nothing.
func (s *LabelSelector) Matches(labels map[string]string) bool {
	if s == nil {
		return false
	}
	for k, v := range s.MatchLabels {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	for _, r := range s.MatchExpressions {
		if !r.matches(labels) {
			return false
		}
	}
	return true
}

func (r LabelRequirement) matches(labels map[string]string) bool {
	v, ok := labels[r.Key]
	switch r.Operator {
	case "In":
		return ok && slices.Contains(r.Values, v)
	case "NotIn":
		return !ok || !slices.Contains(r.Values, v)
	case "Exists":
		return ok
	case "DoesNotExist":
		return !ok
	}
	return false
}

// canonical writes the selector so that equal selectors (pairs and
// requirements in any order, values repeated or not) read the same.
func (s *LabelSelector) canonical() string {
	if s == nil {
		return "nothing"
	}
	var parts []string
	for k, v := range s.MatchLabels {
		parts = append(parts, strconv.Quote(k)+"="+strconv.Quote(v))
	}
	for _, r := range s.MatchExpressions {
		vals := append([]string(nil), r.Values...)
		sort.Strings(vals)
		vals = slices.Compact(vals)
		q := make([]string, len(vals))
		for i, v := range vals {
			q[i] = strconv.Quote(v)
		}
		parts = append(parts, strconv.Quote(r.Key)+" "+r.Operator+" ("+strings.Join(q, ",")+")")
	}
	sort.Strings(parts)
	parts = slices.Compact(parts)
	return "{" + strings.Join(parts, ";") + "}"
}

// requiredLabel returns an index entry that every set of labels the
// selector matches has: "key\x00value" for a pair (or an In with one
// value), else "key" for In or Exists (an index key for the pods it may
// select).
func (s *LabelSelector) requiredLabel() (string, bool) {
	if s == nil {
		return "", false
	}
	best := ""
	for k := range s.MatchLabels {
		if best == "" || k < best {
			best = k
		}
	}
	if best != "" {
		return best + "\x00" + s.MatchLabels[best], true
	}
	for _, r := range s.MatchExpressions {
		if r.Operator == "In" && len(slices.Compact(slices.Sorted(slices.Values(r.Values)))) == 1 {
			return r.Key + "\x00" + r.Values[0], true
		}
	}
	for _, r := range s.MatchExpressions {
		if r.Operator == "In" || r.Operator == "Exists" {
			return r.Key, true
		}
	}
	return "", false
}

// Namespace coverage of an affinity term (framework.AffinityTerm). A term
// lists namespaces and may select namespaces by their labels; with
// neither it covers the pod's own namespace. InterPodAffinity reads a term
// in two ways:
//   - the terms of the pod being placed (PreFilter's
//     mergeAffinityTermNamespacesIfNotEmpty): a non-empty namespace
//     selector is resolved against the Namespace objects that exist, an
//     empty one covers every namespace;
//   - the anti-affinity terms of the pods already bound, matched against
//     the pod being placed: the selector is matched against the labels of
//     that pod's namespace (none when the Namespace object is missing).
//
// The two differ only for a pod whose namespace has no Namespace object.
// Affinity terms are only ever read the first way (strict); anti-affinity
// terms are read both ways, and the models read them the second way
// (loose), which covers at least what the first covers: a conflict more,
// never one less.
type nsCover struct {
	names []string       // sorted; the pod's own namespace when the term names none and has no selector
	sel   *LabelSelector // nil: no namespace selector
	loose bool
}

func coverOf(t PodAffinityTerm, podNS string, loose bool) nsCover {
	c := nsCover{sel: t.NamespaceSelector, loose: loose}
	if len(t.Namespaces) == 0 && t.NamespaceSelector == nil {
		c.names = []string{podNS}
	} else {
		c.names = append([]string(nil), t.Namespaces...)
		sort.Strings(c.names)
		c.names = slices.Compact(c.names)
	}
	return c
}

// covers reports whether the coverage includes namespace ns, given the
// namespaces the state knows (name → labels).
func (c nsCover) covers(ns string, namespaces map[string]map[string]string) bool {
	if slices.Contains(c.names, ns) {
		return true
	}
	if c.sel == nil {
		return false
	}
	if c.sel.Empty() {
		return true
	}
	labels, known := namespaces[ns]
	if !known && !c.loose {
		return false
	}
	return c.sel.Matches(labels)
}

// readsNamespaceLabels reports whether the coverage depends on the labels
// (or existence) of namespaces.
func (c nsCover) readsNamespaceLabels() bool { return c.sel != nil && !c.sel.Empty() }

func (c nsCover) canonical() string {
	q := make([]string, len(c.names))
	for i, n := range c.names {
		q[i] = strconv.Quote(n)
	}
	mode := "strict"
	if c.loose {
		mode = "loose"
	}
	sel := "none"
	if c.sel != nil {
		sel = c.sel.canonical()
	}
	return mode + " [" + strings.Join(q, ",") + "] " + sel
}

// A clause is one selector over the pods of the namespaces it covers.
type clause struct {
	cover nsCover
	sel   *LabelSelector
}

func (c clause) matches(q *Pod, namespaces map[string]map[string]string) bool {
	return c.sel.Matches(q.Labels) && c.cover.covers(q.Namespace, namespaces)
}

// predicate kinds: what a row of pod_match stands for.
const (
	predAffinity  = "affinity"  // a pod's required affinity terms, all of them: the pods that match every one
	predAnti      = "anti"      // one required anti-affinity term (loose namespaces)
	predPreferred = "preferred" // one preferred (anti-)affinity term
	predSpread    = "spread"    // a spread constraint's selector in the pod's namespace
)

// A predicate selects pods: the conjunction of its clauses (affinity), or
// a spread constraint's count: the pods of one namespace that the selector
// selects, not terminating, none at all for an empty selector
// (PodTopologySpread's countPodsMatchSelector).
type predicate struct {
	key     string
	kind    string
	clauses []clause
	// spread
	ns  string
	sel *LabelSelector
}

func (p *predicate) matches(q *Pod, namespaces map[string]map[string]string) bool {
	if p.kind == predSpread {
		return q.Namespace == p.ns && !q.Terminating && !p.sel.Empty() && p.sel.Matches(q.Labels)
	}
	for _, c := range p.clauses {
		if !c.matches(q, namespaces) {
			return false
		}
	}
	return len(p.clauses) > 0
}

// readsNamespaceLabels reports whether the predicate's answer for a pod
// depends on its namespace's labels.
func (p *predicate) readsNamespaceLabels() bool {
	for _, c := range p.clauses {
		if c.cover.readsNamespaceLabels() {
			return true
		}
	}
	return false
}

// indexKey returns a label (key and value, or key) every pod the
// predicate selects carries.
func (p *predicate) indexKey() (string, bool) {
	if p.kind == predSpread {
		return p.sel.requiredLabel()
	}
	for _, c := range p.clauses {
		if k, ok := c.sel.requiredLabel(); ok {
			return k, true
		}
	}
	return "", false
}

func hashKey(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:16])
}

func newPredicate(kind string, clauses []clause, extra string) *predicate {
	parts := []string{kind}
	for _, c := range clauses {
		parts = append(parts, c.cover.canonical()+" "+c.sel.canonical())
	}
	parts = append(parts, extra)
	return &predicate{key: hashKey(strings.Join(parts, "\n")), kind: kind, clauses: clauses}
}

func spreadPredicate(ns string, sel *LabelSelector) *predicate {
	return &predicate{key: hashKey(predSpread + "\n" + strconv.Quote(ns) + " " + sel.canonical()), kind: predSpread, ns: ns, sel: sel}
}

// podPredicates are the selectors of a pod's terms and constraints, each
// with its key (the match_key its rows in pod_affinity_term and
// pod_spread_constraint carry).
type podPredicates struct {
	// affinity: the pod's required affinity terms together (nil without);
	// its key also names the terms' topology keys, so that pods sharing
	// it share their terms.
	affinity *predicate
	// term[i] is Affinity[i]'s predicate (nil for a required affinity
	// term: those use affinity). incoming[i] is a required anti-affinity
	// term's as the pod being placed reads it (strict namespaces), when it
	// differs from term[i] (a term selecting namespaces by their labels).
	term, incoming []*predicate
	// spread[i] is Spread[i]'s (nil for MaxSkew 0, weave's group spreading).
	spread []*predicate
}

func predicatesOf(p *Pod) podPredicates {
	var out podPredicates
	var aff []clause
	var keys []string
	out.term = make([]*predicate, len(p.Affinity))
	out.incoming = make([]*predicate, len(p.Affinity))
	for i, t := range p.Affinity {
		switch {
		case t.Required && !t.Anti:
			aff = append(aff, clause{coverOf(t, p.Namespace, false), t.Selector})
			keys = append(keys, strconv.Quote(t.TopologyKey))
		case t.Required:
			out.term[i] = newPredicate(predAnti, []clause{{coverOf(t, p.Namespace, true), t.Selector}}, "")
			if c := coverOf(t, p.Namespace, false); c.readsNamespaceLabels() {
				out.incoming[i] = newPredicate(predAnti, []clause{{c, t.Selector}}, "")
			}
		default:
			out.term[i] = newPredicate(predPreferred, []clause{{coverOf(t, p.Namespace, false), t.Selector}}, "")
		}
	}
	if len(aff) > 0 {
		sort.Strings(keys)
		out.affinity = newPredicate(predAffinity, aff, "topology "+strings.Join(slices.Compact(keys), ","))
	}
	out.spread = make([]*predicate, len(p.Spread))
	for i, c := range p.Spread {
		if c.MaxSkew > 0 {
			out.spread[i] = spreadPredicate(p.Namespace, c.Selector)
		}
	}
	return out
}

// all lists the pod's predicates, each once.
func (pp podPredicates) all() []*predicate {
	var out []*predicate
	seen := map[string]bool{}
	add := func(p *predicate) {
		if p != nil && !seen[p.key] {
			seen[p.key] = true
			out = append(out, p)
		}
	}
	add(pp.affinity)
	for _, p := range pp.term {
		add(p)
	}
	for _, p := range pp.incoming {
		add(p)
	}
	for _, p := range pp.spread {
		add(p)
	}
	return out
}

// matchIndex keeps the table pod_match: for every predicate of the pods of
// the state (their terms' and constraints' selectors, shared by the
// replicas of a deployment), the pods it selects. A predicate's rows are
// written when the first pod using it arrives (one pass over the pods) and
// dropped with its last one; a pod's own rows are rewritten with it (one
// test per predicate that may select it: those indexed under one of its
// label keys, and those without an index key); a namespace's new labels
// rewrite the rows of its pods for the predicates that read namespace
// labels.
type matchIndex struct {
	preds    map[string]*indexed
	byLabel  map[string]map[string]*indexed // a label key every selected pod carries → predicates
	anyPod   map[string]*indexed            // predicates without such a key
	uses     map[string][]string            // pod → the keys of its predicates
	memberOf map[string][]string            // pod → the keys of the predicates that select it
}

type indexed struct {
	*predicate
	refs    int
	members map[string]bool
}

func newMatchIndex() *matchIndex {
	return &matchIndex{preds: map[string]*indexed{}, byLabel: map[string]map[string]*indexed{},
		anyPod: map[string]*indexed{}, uses: map[string][]string{}, memberOf: map[string][]string{}}
}

func insertMatch(key, pod string) stmt {
	return stmt{"insert into pod_match values " + params(2), []any{key, pod}}
}

// upsert returns the writes that bring pod_match up to date with p (the
// state's pods are the others; p's own rows were deleted by writePod), and
// a function that records them in the index once written.
func (ix *matchIndex) upsert(st *State, p *Pod) ([]stmt, func()) {
	var out []stmt
	mine := predicatesOf(p).all()
	var added []*indexed
	newMembers := map[string][]string{}
	for _, pr := range mine {
		if _, ok := ix.preds[pr.key]; ok {
			continue
		}
		e := &indexed{predicate: pr, members: map[string]bool{}}
		added = append(added, e)
		var names []string
		for name, q := range st.Pods {
			if name != p.Name && pr.matches(q, st.Namespaces) {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			out = append(out, insertMatch(pr.key, n))
		}
		newMembers[pr.key] = names
	}
	// p's own rows: every predicate that may select it.
	var selects []string
	test := func(e *indexed) {
		if e.matches(p, st.Namespaces) {
			selects = append(selects, e.key)
		}
	}
	seen := map[string]bool{}
	for _, e := range added {
		seen[e.key] = true
		test(e)
	}
	for _, e := range ix.candidates(p) {
		if !seen[e.key] {
			seen[e.key] = true
			test(e)
		}
	}
	sort.Strings(selects)
	for _, k := range selects {
		out = append(out, insertMatch(k, p.Name))
	}
	// Predicates p no longer uses and no other pod does.
	dropped := ix.release(p.Name, mine)
	for _, k := range dropped {
		out = append(out, stmt{"delete from pod_match where match_key = $1", []any{k}})
	}
	return out, func() {
		for _, e := range added {
			ix.add(e)
			for _, n := range newMembers[e.key] {
				e.members[n] = true
				ix.memberOf[n] = append(ix.memberOf[n], e.key)
			}
		}
		ix.leave(p.Name)
		for _, k := range selects {
			ix.preds[k].members[p.Name] = true
		}
		ix.memberOf[p.Name] = selects
		ix.setUses(p.Name, mine)
		for _, k := range dropped {
			ix.remove(k)
		}
	}
}

// release returns the keys that lose their last user when pod's
// predicates become mine (nil when it is deleted).
func (ix *matchIndex) release(pod string, mine []*predicate) []string {
	keep := map[string]bool{}
	for _, pr := range mine {
		keep[pr.key] = true
	}
	var out []string
	for _, k := range ix.uses[pod] {
		if e := ix.preds[k]; e != nil && e.refs == 1 && !keep[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// delete returns the writes for a deleted pod (its own rows are deleted
// with the pod) and the function that records them.
func (ix *matchIndex) delete(pod string) ([]stmt, func()) {
	dropped := ix.release(pod, nil)
	var out []stmt
	for _, k := range dropped {
		out = append(out, stmt{"delete from pod_match where match_key = $1", []any{k}})
	}
	return out, func() {
		ix.leave(pod)
		ix.setUses(pod, nil)
		for _, k := range dropped {
			ix.remove(k)
		}
	}
}

// namespaceChanged returns the writes that follow a namespace's labels (or
// existence) for the pods of the namespace, as st already says, and the
// function that records them.
func (ix *matchIndex) namespaceChanged(st *State, ns string) ([]stmt, func()) {
	var out []stmt
	type change struct {
		e   *indexed
		pod string
		in  bool
	}
	var changes []change
	keys := make([]string, 0, len(ix.preds))
	for k := range ix.preds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var pods []string
	for name, q := range st.Pods {
		if q.Namespace == ns {
			pods = append(pods, name)
		}
	}
	sort.Strings(pods)
	for _, k := range keys {
		e := ix.preds[k]
		if !e.readsNamespaceLabels() {
			continue
		}
		for _, name := range pods {
			in := e.matches(st.Pods[name], st.Namespaces)
			if in == e.members[name] {
				continue
			}
			changes = append(changes, change{e, name, in})
			if in {
				out = append(out, insertMatch(k, name))
			} else {
				out = append(out, stmt{"delete from pod_match where match_key = $1 and pod_name = $2", []any{k, name}})
			}
		}
	}
	return out, func() {
		for _, c := range changes {
			if c.in {
				c.e.members[c.pod] = true
				ix.memberOf[c.pod] = append(ix.memberOf[c.pod], c.e.key)
			} else {
				delete(c.e.members, c.pod)
				ix.memberOf[c.pod] = slices.DeleteFunc(ix.memberOf[c.pod], func(k string) bool { return k == c.e.key })
			}
		}
	}
}

// leave takes a pod out of the members of every predicate.
func (ix *matchIndex) leave(pod string) {
	for _, k := range ix.memberOf[pod] {
		if e := ix.preds[k]; e != nil {
			delete(e.members, pod)
		}
	}
	delete(ix.memberOf, pod)
}

func (ix *matchIndex) candidates(p *Pod) []*indexed {
	var out []*indexed
	for _, e := range ix.anyPod {
		out = append(out, e)
	}
	for k, v := range p.Labels {
		for _, e := range ix.byLabel[k] {
			out = append(out, e)
		}
		for _, e := range ix.byLabel[k+"\x00"+v] {
			out = append(out, e)
		}
	}
	return out
}

func (ix *matchIndex) add(e *indexed) {
	ix.preds[e.key] = e
	if k, ok := e.indexKey(); ok {
		if ix.byLabel[k] == nil {
			ix.byLabel[k] = map[string]*indexed{}
		}
		ix.byLabel[k][e.key] = e
	} else {
		ix.anyPod[e.key] = e
	}
}

func (ix *matchIndex) remove(key string) {
	e := ix.preds[key]
	if e == nil {
		return
	}
	for n := range e.members {
		ix.memberOf[n] = slices.DeleteFunc(ix.memberOf[n], func(k string) bool { return k == key })
	}
	delete(ix.preds, key)
	if k, ok := e.indexKey(); ok {
		delete(ix.byLabel[k], key)
		if len(ix.byLabel[k]) == 0 {
			delete(ix.byLabel, k)
		}
	} else {
		delete(ix.anyPod, key)
	}
}

// setUses replaces the predicates a pod uses, counting their users.
func (ix *matchIndex) setUses(pod string, mine []*predicate) {
	for _, k := range ix.uses[pod] {
		if e := ix.preds[k]; e != nil {
			e.refs--
		}
	}
	delete(ix.uses, pod)
	if len(mine) == 0 {
		return
	}
	keys := make([]string, len(mine))
	for i, pr := range mine {
		keys[i] = pr.key
		ix.preds[pr.key].refs++
	}
	ix.uses[pod] = keys
}

// members returns the pods a predicate selects (nil for an unknown key).
func (ix *matchIndex) members(key string) map[string]bool {
	if e := ix.preds[key]; e != nil {
		return e.members
	}
	return nil
}
