package ground

import (
	"context"
	"slices"
	"sort"

	"github.com/weavesql/weave/internal/ir"
)

// Reuse of tables across snapshots.
//
// A scheduling loop solves the same program batch after batch, and most
// of what it reads does not change between two batches: the nodes and
// their labels, while the pods change. The caller, which writes the
// database itself, knows which tables it wrote: it gives each table a
// version (Versions), and a table whose version is the one it had when a
// snapshot of the plan read it is taken from that snapshot instead of
// read again.
//
// A table read reduced to a decision domain (semijoin.go: node, by the
// sample of a placement batch) is reduced again in memory: the rows of
// the whole table whose key is in the domain's set, which this snapshot
// reads. Reading the whole table costs more than reading it reduced, so
// a reduced table is read whole only at its second snapshot in a row at
// the same version (a table written every batch never is), and reused
// from the third. A table read whole anyway is kept at its first read.

// Versions are a caller's versions of the tables of a program, by table
// name: equal versions promise equal rows. A table without one is read.
type Versions map[string]uint64

// keptTable is a table as a snapshot of the plan last met it.
type keptTable struct {
	version uint64
	whole   *Relation // nil while only read reduced at version
}

// readKept reads the relation n for a snapshot whose versions are vs and
// whose relations read so far are rels, taking the table from an earlier
// snapshot where its version allows (reused is then true).
func (p *Plan) readKept(ctx context.Context, q Querier, n need, vs Versions, rels map[string]*Relation) (r *Relation, reused bool, err error) {
	t := n.table
	if t == nil || vs == nil {
		r, err = read(ctx, q, n)
		return r, false, err
	}
	v, ok := vs[t.Name]
	if !ok {
		r, err = read(ctx, q, n)
		return r, false, err
	}
	var set map[any]bool
	if rs := n.restrict; rs != nil {
		if set, ok = restrictionSet(t, rs, rels[rs.source]); !ok {
			r, err = read(ctx, q, n) // the set is not read yet, or not comparable in memory
			return r, false, err
		}
	}
	p.mu.Lock()
	k := p.kept[t.Name]
	p.mu.Unlock()
	switch {
	case k != nil && k.version == v && k.whole != nil:
		reused = true
	case set == nil || (k != nil && k.version == v):
		whole, err := read(ctx, q, need{table: t})
		if err != nil {
			return nil, false, err
		}
		k = &keptTable{version: v, whole: whole}
		p.keep(t.Name, k)
	default:
		p.keep(t.Name, &keptTable{version: v})
		r, err = read(ctx, q, n)
		return r, false, err
	}
	if set == nil {
		return k.whole, reused, nil
	}
	return k.whole.reduced(n.restrict.key, set), reused, nil
}

// keep records k as the table named name's latest read.
func (p *Plan) keep(name string, k *keptTable) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.kept == nil {
		p.kept = map[string]*keptTable{}
	}
	p.kept[name] = k
}

// restrictionSet returns the values of rs's set column in src, the
// relation of its source as this snapshot read it, when the reduction can
// be done in memory: src is read, and the key and the set's column have
// the same type, integer or string, whose equality in SQL is Go's (the
// values are normalized as read: int64, or strings without char(n)'s
// padding). A NULL is in no set.
func restrictionSet(t *ir.Table, rs *restriction, src *Relation) (map[any]bool, bool) {
	if src == nil {
		return nil, false
	}
	ci := slices.Index(src.Columns, rs.col)
	ki := slices.IndexFunc(t.Columns, func(c *ir.Column) bool { return c.Name == rs.key })
	if ci < 0 || ki < 0 {
		return nil, false
	}
	kt := t.Columns[ki].Type
	if kt != src.Types[ci] || (kt != ir.Int && kt != ir.String) {
		return nil, false
	}
	set := make(map[any]bool, len(src.Rows))
	for _, row := range src.Rows {
		if v := row[ci]; v != nil {
			set[v] = true
		}
	}
	return set, true
}

// reduced returns the rows of r, a whole table, whose column key is in
// set, in r's order: what "where key in (select ...)" reads.
func (r *Relation) reduced(key string, set map[any]bool) *Relation {
	ki := slices.Index(r.Columns, key)
	out := &Relation{Name: r.Name, Columns: r.Columns, Types: r.Types}
	for _, row := range r.Rows {
		if v := row[ki]; v != nil && set[v] {
			out.Rows = append(out.Rows, row)
		}
	}
	return out
}

// WholeQueries lists the statements that read whole the tables a snapshot
// of p reads reduced (Queries lists the reduced reads): a snapshot that
// reuses such a table reads it whole once.
func WholeQueries(p *ir.Program) []string {
	var out []string
	for _, n := range needs(p) {
		if n.table != nil && n.restrict != nil {
			out = append(out, need{table: n.table}.query())
		}
	}
	sort.Strings(out)
	return out
}
