package ground

import (
	"sort"

	"github.com/weavesql/weave/cp"
)

// Pairwise inequalities between decision variables often form cliques
// that only appear after grounding: "pods of one app on distinct nodes"
// written as a join of an anti-affinity table with itself yields
// x1 != x2, x1 != x3, x2 != x3 ... The inequalities of a hard view are
// buffered while it is grounded and, when it is done, every clique of
// three or more variables becomes one all_different (the solver then
// reasons on the group: 4 pods cannot share 3 nodes); the edges left over
// stay inequalities.

type nePair struct{ a, b cp.IntVar }

// bufferNe records x != y (unconditional) for clique detection.
func (g *grounder) bufferNe(x, y cp.IntVar) {
	if x.Index() > y.Index() {
		x, y = y, x
	}
	g.nePairs = append(g.nePairs, nePair{x, y})
}

// asPairNe recognises "x - y != 0".
func asPairNe(e lin, k int64) (x, y cp.IntVar, ok bool) {
	if len(e.terms) != 2 || e.k != 0 || k != 0 {
		return x, y, false
	}
	a, b := e.terms[0], e.terms[1]
	if a.c == 1 && b.c == -1 {
		return a.v, b.v, true
	}
	if a.c == -1 && b.c == 1 {
		return b.v, a.v, true
	}
	return x, y, false
}

// flushCliques posts the buffered inequalities of the view just grounded.
func (g *grounder) flushCliques() {
	pairs := g.nePairs
	g.nePairs = nil
	if len(pairs) == 0 {
		return
	}
	adj := map[cp.IntVar]map[cp.IntVar]bool{}
	edge := func(a, b cp.IntVar) {
		if adj[a] == nil {
			adj[a] = map[cp.IntVar]bool{}
		}
		adj[a][b] = true
	}
	for _, p := range pairs {
		edge(p.a, p.b)
		edge(p.b, p.a)
	}
	vars := make([]cp.IntVar, 0, len(adj))
	for v := range adj {
		vars = append(vars, v)
	}
	// Highest degree first, then index: deterministic greedy cliques.
	sort.Slice(vars, func(i, j int) bool {
		if len(adj[vars[i]]) != len(adj[vars[j]]) {
			return len(adj[vars[i]]) > len(adj[vars[j]])
		}
		return vars[i].Index() < vars[j].Index()
	})
	for _, v := range vars {
		if len(adj[v]) < 2 {
			continue
		}
		clique := []cp.IntVar{v}
		cands := make([]cp.IntVar, 0, len(adj[v]))
		for u := range adj[v] {
			cands = append(cands, u)
		}
		sort.Slice(cands, func(i, j int) bool { return cands[i].Index() < cands[j].Index() })
		for _, u := range cands {
			in := true
			for _, w := range clique {
				if !adj[u][w] {
					in = false
					break
				}
			}
			if in {
				clique = append(clique, u)
			}
		}
		if len(clique) < 3 {
			continue
		}
		g.note(g.m.AddAllDifferent(clique...))
		for i, a := range clique {
			for _, b := range clique[i+1:] {
				delete(adj[a], b)
				delete(adj[b], a)
			}
		}
	}
	// What is left are single edges.
	for _, p := range pairs {
		if adj[p.a][p.b] {
			delete(adj[p.a], p.b)
			delete(adj[p.b], p.a)
			g.note(g.m.AddNotEqual(varLin(p.a).add(varLin(p.b), -1).expr(), 0))
		}
	}
}
