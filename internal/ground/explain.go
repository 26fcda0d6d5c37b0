package ground

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/weavesql/weave/cp"
	"github.com/weavesql/weave/internal/ir"
)

// In explain mode every hard constraint is grounded under an assumption
// literal, one per view and per row of a decision table (a pod × the node
// selector) or per group (the capacity of node n3), or per row of a grouped
// view it reads (node n3's row of spare_capacity_per_node). When the model
// is infeasible, the solver's core is a set of these literals; Blame says
// what each stands for, in SQL terms: the view, the groups and the table
// rows involved.
//
// Rows of a derived relation (a view compiled into the one reading it, a
// derived table, a subquery's result) have a lineage: the table rows and
// the groups they were made from. A hard view's row is blamed on the table
// rows its own sources bind, through those lineages. What only names (the
// candidate members of the groups involved, the rows its subqueries read)
// is found when the explanation is described, for the blames in the core
// only (Resolve): grounding makes just what tells the assumptions apart.

// RowRef names one fetched row of a table, or of a pushed-down view.
type RowRef struct {
	// Table is the table the row is of: the row's own table, or for a row
	// of a pushed-down view that filters one table and selects its
	// primary key, that table (the database filtered its rows). Nil for
	// any other pushed-down view's row.
	Table *ir.Table
	// View is the pushed-down view the row was read through, or nil: Row
	// then indexes the view's fetched rows, not the table's.
	View *ir.View
	Row  int
}

// Decision reports whether the row is one whose decision columns the
// constraint restricts: a row of a table with decision columns, read as
// such (a pushed-down view reads input columns only).
func (r RowRef) Decision() bool { return r.View == nil && r.Table.HasVariables() }

// Name is the name the row goes by: its table's, or the pushed-down view's
// when it is no table's row.
func (r RowRef) Name() string {
	if r.Table != nil {
		return r.Table.Name
	}
	return r.View.Name
}

// Blame is what one assumption literal stands for.
type Blame struct {
	View *ir.View
	// Decision rows are the rows whose decision columns the constraint
	// restricts (the pod); Data rows are input facts every row under the
	// assumption shares (the node whose capacity it is).
	Decision []RowRef
	Data     []RowRef
	// Members are the decision rows of the groups involved, other than
	// Decision (the pods that may go to the node); Read the rows its
	// subqueries read. Resolve adds them.
	Members []RowRef
	Read    []RowRef
	// Groups are the groups involved: the view's own first (the app
	// whose pods must be apart), then those of the grouped views it reads
	// (node n3's group of spare_capacity_per_node).
	Groups []ViewGroup
	Lit    cp.Lit
	// sites are rows or groups under the assumption (at most maxSites),
	// where Resolve finds the members and evaluates the subqueries.
	sites    []site
	resolved bool
}

// ViewGroup is one group of a grouped view: the view (nil for a derived
// table) and the group's key.
type ViewGroup struct {
	View *ir.View
	Key  []KeyValue
}

// KeyValue is one group by expression of a view and its value in a group.
type KeyValue struct {
	Name  string // the column name, or the expression's text
	Value any
	// Table is the table of the column the expression reads, when it is
	// a plain column of a table (node.name): the group is then that
	// table's row when the column is its primary key.
	Table *ir.Table
}

// site is one row (tuple) or group of a hard view under an assumption,
// with the view's check when it has subqueries to evaluate there.
type site struct {
	check ir.Expr
	sc    scope
}

// maxSites bounds the rows or groups per assumption that Resolve reads.
const maxSites = 8

// lineage is where a row of a derived relation comes from.
type lineage struct {
	// id identifies a row that comes from a group (its own query's, or
	// one of a view it reads): rows of a hard view that read it are
	// blamed per such row (per node of spare_capacity_per_node). 0 for
	// a row that comes from no group.
	id int
	// decision and data are the table rows that make the row (a group's:
	// the rows every member shares, the node).
	decision, data []RowRef
	// members are the decision rows of the groups' other members (the
	// pods that may go to the node).
	members []RowRef
	groups  []ViewGroup
}

// Label is a short human name: "capacity: node n3" or
// "constraint_node_affinity: pending_pod p7".
func (b *Blame) Label(gr *Grounded) string {
	var parts []string
	for _, r := range append(append([]RowRef(nil), b.Decision...), b.Data...) {
		parts = append(parts, r.Name()+" "+gr.RowKey(r))
	}
	return b.View.Name + ": " + strings.Join(parts, ", ")
}

// fetched returns the stored values of a referenced row.
func (gr *Grounded) fetched(r RowRef) []any {
	if r.View != nil {
		return gr.snap.rows(r.View.Name)[r.Row]
	}
	return gr.snap.rows(r.Table.Name)[r.Row]
}

// ColumnNames names the stored values of a referenced row: the table's
// columns, or the pushed-down view's (those that select a column of the
// table it filters named after it).
func ColumnNames(r RowRef) []string {
	if r.View == nil {
		out := make([]string, len(r.Table.Columns))
		for i, c := range r.Table.Columns {
			out[i] = c.Name
		}
		return out
	}
	q := r.View.Query
	out := make([]string, len(q.Select))
	for i, o := range q.Select {
		out[i] = o.Name
		if c, ok := o.Expr.(*ir.ColRef); ok && r.Table != nil && c.Up == 0 && c.Source == 0 {
			out[i] = r.Table.Columns[c.Col].Name
		}
	}
	return out
}

// KeyColumns names the primary key columns of a referenced row's table
// (nil for a table without one, or a pushed-down view's row that is no
// table's).
func KeyColumns(r RowRef) []string {
	if r.Table == nil {
		return nil
	}
	var out []string
	for _, c := range r.Table.PrimaryKey {
		out = append(out, r.Table.Columns[c].Name)
	}
	return out
}

// RowKey is the primary key of a row, or all its columns without one.
func (gr *Grounded) RowKey(r RowRef) string {
	row := gr.Row(r)
	cols := KeyColumns(r)
	if len(cols) == 0 {
		cols = ColumnNames(r)
	}
	var vals []string
	for _, c := range cols {
		vals = append(vals, fmt.Sprint(row[c]))
	}
	return strings.Join(vals, "/")
}

// Row returns the stored values of a referenced row, keyed by column.
func (gr *Grounded) Row(r RowRef) map[string]any {
	data := gr.fetched(r)
	out := map[string]any{}
	for i, name := range ColumnNames(r) {
		if r.View == nil && r.Table.Columns[i].Variable {
			continue // not a fact: the solver decides it
		}
		out[name] = data[i]
	}
	return out
}

// PushdownTable returns the table a pushed-down view filters, when it
// reads that one table and selects its primary key: the view's rows are
// then rows of the table. Not for a union (whose other selects the IR does
// not hold: they may read other tables).
func PushdownTable(v *ir.View) *ir.Table {
	q := v.Query
	if q == nil || len(q.From) != 1 || q.From[0].Kind != ir.FromTable || q.Aggregate || q.Distinct || unionWord.MatchString(v.Text) {
		return nil
	}
	t := q.From[0].Table
	if len(t.PrimaryKey) == 0 {
		return nil
	}
	for _, k := range t.PrimaryKey {
		found := false
		for _, o := range q.Select {
			if c, ok := o.Expr.(*ir.ColRef); ok && c.Up == 0 && c.Source == 0 && c.Col == k {
				found = true
				break
			}
		}
		if !found {
			return nil
		}
	}
	return t
}

// Blames lists the assumption literals of an explain-mode model.
func (gr *Grounded) Blames() []*Blame { return gr.blames }

// BlameOf returns what an assumption literal stands for, or nil.
func (gr *Grounded) BlameOf(l cp.Lit) *Blame { return gr.blameByLit[l.Index()] }

// Resolve completes a blame with what only names: the candidate members
// of the groups involved (the pods that may go to the node), and the rows
// its view's subqueries read for the rows or groups under it (the other
// pods of an anti-affinity's not exists, the nodes of a node selector's
// in). Made only for the blames an explanation names, not for every hard
// row. It may add variables to the model: call it once the model is no
// longer solved.
func (gr *Grounded) Resolve(b *Blame) {
	if b.resolved || gr.explainer == nil {
		return
	}
	b.resolved = true
	g := gr.explainer
	g.naming = true
	defer func() {
		g.naming = false
		if r := recover(); r != nil {
			if _, ok := r.(groundError); !ok {
				panic(r)
			}
			// A subquery that cannot be evaluated here names nothing.
		}
	}()
	known := map[RowRef]bool{}
	for _, rs := range [][]RowRef{b.Decision, b.Data} {
		for _, r := range rs {
			known[r] = true
		}
	}
	var members []RowRef
	for _, s := range b.sites {
		var l lineage
		if s.sc.grp != nil {
			l = g.groupLineage(s.sc.grp, b.View)
		} else {
			l, _ = g.tupleLineage(s.sc.t)
		}
		members = append(members, l.members...)
	}
	for _, r := range dedupeRefs(members) {
		if !known[r] {
			known[r] = true
			b.Members = append(b.Members, r)
		}
	}
	acc := newRefAcc()
	acc.seen = known
	for _, s := range b.sites {
		if s.check != nil {
			g.subqueryRows(s.check, s.sc, acc)
		}
	}
	b.Read = append(append(b.Read, acc.decision...), acc.data...)
}

// subqueryRows adds to acc the rows of e's subqueries (not nested in
// another) that bear on e in scope sc: for "x in (subquery)" with x a
// stored value, the rows equal to x; otherwise every row that may exist.
func (g *grounder) subqueryRows(e ir.Expr, sc scope, acc *refAcc) {
	ir.Inspect(e, func(x ir.Expr) bool {
		var sub *ir.Query
		var want any
		wantSet := false
		switch x := x.(type) {
		case *ir.In:
			if x.Sub == nil {
				return true
			}
			g.subqueryRows(x.X, sc, acc)
			sub = x.Sub
			if v := g.storedOf(x.X, sc); v != nil {
				want, wantSet = v, true
			}
		case *ir.Exists:
			sub = x.Sub
		case *ir.Scalar:
			sub = x.Sub
		default:
			return true
		}
		r := g.eval(sub, sc.tupleForSub())
		for i := range r.rows {
			rw := &r.rows[i]
			if isFalse(rw.guard) {
				continue
			}
			if wantSet && len(rw.vals) > 0 && rw.vals[0].k == kConst && rw.vals[0].c != want {
				continue
			}
			acc.addRow(g, rw)
		}
		return false
	})
}

// storedOf is the stored value e has in scope sc when it is a constant or
// a column holding a stored value; nil otherwise.
func (g *grounder) storedOf(e ir.Expr, sc scope) any {
	switch e := e.(type) {
	case *ir.Const:
		return e.Value
	case *ir.ColRef:
		if sc.t == nil {
			return nil
		}
		if v, ok := storedValue(sc.t, e); ok {
			return v
		}
	}
	return nil
}

// refAcc gathers rows without duplicates, by role.
type refAcc struct {
	decision, data []RowRef
	seen           map[RowRef]bool
}

func newRefAcc() *refAcc { return &refAcc{seen: map[RowRef]bool{}} }

func (a *refAcc) add(r RowRef) {
	if a.seen[r] {
		return
	}
	a.seen[r] = true
	if r.Decision() {
		a.decision = append(a.decision, r)
	} else {
		a.data = append(a.data, r)
	}
}

// addRow adds the table rows a row of a relation is, or comes from.
func (a *refAcc) addRow(g *grounder, rw *row) {
	if ref, ok := g.origin[rw]; ok {
		a.add(ref)
		return
	}
	if l := g.lineageOf(rw); l != nil {
		for _, r := range l.decision {
			a.add(r)
		}
		for _, r := range l.data {
			a.add(r)
		}
		for _, r := range l.members {
			a.add(r)
		}
	}
}

// rowSource is where a row of a derived relation comes from: one tuple
// of its query's from clause, one group, or several of them (a distinct
// row). Its lineage is made when a blame first asks for it: most derived
// rows (those of soft views) never are.
type rowSource struct {
	t      *tuple
	grp    *group
	merged []*rowSource
	// l is the lineage that tells rows apart, full the one that names
	// (with members, for Resolve).
	l, full        *lineage
	done, fullDone bool
}

func mergeSources(a, b *rowSource) *rowSource {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return &rowSource{merged: append(append([]*rowSource(nil), a.parts()...), b.parts()...)}
}

func (s *rowSource) parts() []*rowSource {
	if s.merged != nil {
		return s.merged
	}
	return []*rowSource{s}
}

// lineageOf returns what a derived row comes from, nil for a row of a base
// relation or one that comes from nothing to name.
func (g *grounder) lineageOf(rw *row) *lineage {
	s := g.sources[rw]
	if s == nil {
		return nil
	}
	if g.naming {
		if !s.fullDone {
			s.fullDone = true
			s.full = g.sourceLineage(s)
		}
		return s.full
	}
	if !s.done {
		s.done = true
		s.l = g.sourceLineage(s)
	}
	return s.l
}

func (g *grounder) sourceLineage(s *rowSource) *lineage {
	var l lineage
	switch {
	case s.t != nil:
		l, _ = g.tupleLineage(s.t)
	case s.grp != nil:
		l = g.groupLineage(s.grp, g.viewOf[s.grp.q])
	default:
		var acc lineage
		for _, p := range s.merged {
			x := g.sourceLineage(p)
			if x == nil {
				continue
			}
			for _, r := range x.decision {
				acc.decision = appendRef(acc.decision, r)
			}
			for _, r := range x.data {
				acc.data = appendRef(acc.data, r)
			}
			acc.members = append(acc.members, x.members...)
			for _, vg := range x.groups {
				acc.groups = appendGroup(acc.groups, vg)
			}
		}
		acc.members = dedupeRefs(acc.members)
		l = acc
	}
	if len(l.decision)+len(l.data)+len(l.members)+len(l.groups) == 0 {
		return nil
	}
	if len(l.groups) > 0 {
		g.lineageIDs++
		l.id = g.lineageIDs
	}
	return &l
}

// tupleLineage returns what the rows a tuple binds are, or come from:
// table rows, the candidate members and groups of derived rows, and the
// ids of the rows from groups among them (in ids). Rows of enclosing
// queries are not the tuple's.
func (g *grounder) tupleLineage(t *tuple) (l lineage, ids []int) {
	var one *lineage // the only derived row with members, shared as is
	nMembers := 0
	for _, rw := range t.rows {
		if rw == nil {
			continue
		}
		if ref, ok := g.origin[rw]; ok {
			if ref.Decision() {
				l.decision = appendRef(l.decision, ref)
			} else {
				l.data = appendRef(l.data, ref)
			}
			continue
		}
		d := g.lineageOf(rw)
		if d == nil {
			continue
		}
		if d.id != 0 {
			ids = append(ids, d.id)
		}
		for _, r := range d.decision {
			l.decision = appendRef(l.decision, r)
		}
		for _, r := range d.data {
			l.data = appendRef(l.data, r)
		}
		for _, vg := range d.groups {
			l.groups = appendGroup(l.groups, vg)
		}
		if len(d.members) > 0 {
			nMembers++
			one = d
		}
	}
	switch {
	case nMembers == 1:
		l.members = one.members
	case nMembers > 1:
		for _, rw := range t.rows {
			if d := g.lineageOf(rw); rw != nil && d != nil {
				l.members = append(l.members, d.members...)
			}
		}
		l.members = dedupeRefs(l.members)
	}
	return l, ids
}

// groupLineage returns what a group is made of: the table rows every
// member shares (the node), the groups (the view's own when it groups by
// something, and those its members come from) and, when naming (Resolve),
// the decision rows of its other members (the pods that may go there).
func (g *grounder) groupLineage(grp *group, v *ir.View) lineage {
	var l lineage
	if len(grp.q.GroupBy) > 0 {
		l.groups = []ViewGroup{{View: v, Key: keyValues(grp.q, grp.key)}}
	}
	var shared, buf, cands []RowRef
	for i, m := range g.membersOf(grp) {
		buf = buf[:0]
		for _, rw := range m.t.rows {
			if rw == nil {
				continue
			}
			if ref, ok := g.origin[rw]; ok {
				buf = append(buf, ref)
				if g.naming && ref.Decision() {
					cands = append(cands, ref)
				}
				continue
			}
			d := g.lineageOf(rw)
			if d == nil {
				continue
			}
			buf = append(append(buf, d.decision...), d.data...)
			if g.naming {
				cands = append(append(cands, d.decision...), d.members...)
			}
			for _, vg := range d.groups {
				l.groups = appendGroup(l.groups, vg)
			}
		}
		if i == 0 {
			shared = append(shared, buf...)
			continue
		}
		keep := shared[:0]
		for _, r := range shared {
			if containsRef(buf, r) {
				keep = append(keep, r)
			}
		}
		shared = keep
	}
	for _, r := range dedupeRefs(shared) {
		if r.Decision() {
			l.decision = append(l.decision, r)
		} else {
			l.data = append(l.data, r)
		}
	}
	for _, r := range dedupeRefs(cands) {
		if !containsRef(l.decision, r) {
			l.members = append(l.members, r)
		}
	}
	return l
}

// recordLineage notes where the rows of a query's result come from: each
// row from one tuple, or one group, in emission order.
func (g *grounder) recordLineage(out *rel, srcs []*rowSource) {
	for i := range out.rows {
		if srcs[i] != nil {
			g.sources[&out.rows[i]] = srcs[i]
		}
	}
}

// dedupeRefs sorts rows (sortRefs) and drops repeats.
func dedupeRefs(rs []RowRef) []RowRef {
	if len(rs) < 2 {
		return rs
	}
	sortRefs(rs)
	return slices.Compact(rs)
}

func appendRef(rs []RowRef, r RowRef) []RowRef {
	if containsRef(rs, r) {
		return rs
	}
	return append(rs, r)
}

func containsRef(rs []RowRef, r RowRef) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

func appendGroup(gs []ViewGroup, vg ViewGroup) []ViewGroup {
	for _, x := range gs {
		if x.View == vg.View && sameKey(x.Key, vg.Key) {
			return gs
		}
	}
	return append(gs, vg)
}

func sameKey(a, b []KeyValue) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Value != b[i].Value {
			return false
		}
	}
	return true
}

// blameKey identifies an assumption: the view, the rows that key it, the
// rows from groups it reads and the group key values.
func blameKey(v *ir.View, rows []RowRef, ids []int, key []value) string {
	// Called for every tuple of a hard view: no fmt on the common path.
	b := make([]byte, 0, 64)
	b = append(b, v.Name...)
	for _, r := range rows {
		b = append(b, '|')
		b = append(b, r.Name()...)
		b = append(b, '#')
		b = strconv.AppendInt(b, int64(r.Row), 10)
	}
	for _, id := range ids {
		b = append(b, '|', '@')
		b = strconv.AppendInt(b, int64(id), 10)
	}
	for _, k := range key {
		b = append(b, '|')
		switch c := k.c.(type) {
		case string:
			b = append(b, c...)
		case int64:
			b = strconv.AppendInt(b, c, 10)
		default:
			b = fmt.Append(b, c)
		}
	}
	return string(b)
}

// assumption returns the assumption literal for a row or group of a hard
// view: one per view, set of key rows, rows from groups it reads (ids)
// and group key values. The data rows shared by every row under it are
// kept as facts; at is the row or group, for Resolve.
func (g *grounder) assumption(v *ir.View, keyRows []RowRef, ids []int, l *lineage, at site, groupKey ...value) cp.Lit {
	sortRefs(keyRows)
	sort.Ints(ids)
	key := blameKey(v, keyRows, ids, groupKey)
	b, ok := g.blameByKey[key]
	if !ok {
		lit := g.m.NewBoolVar("assume " + key)
		dec := append([]RowRef(nil), l.decision...)
		sortRefs(dec)
		data := append([]RowRef(nil), l.data...)
		sortRefs(data)
		b = &Blame{View: v, Decision: dec, Data: data, Groups: l.groups, Lit: lit, sites: []site{at}}
		g.blameByKey[key] = b
		g.blames = append(g.blames, b)
		g.blameByLit[lit.Index()] = b
		g.m.AddAssumptions(lit)
		return lit
	}
	b.Data = intersectRefs(b.Data, l.data)
	if len(b.sites) < maxSites {
		b.sites = append(b.sites, at)
	}
	return b.Lit
}

// keyValues names a group's key values after q's group by expressions.
func keyValues(q *ir.Query, key []value) []KeyValue {
	if len(key) == 0 || len(key) != len(q.GroupBy) {
		return nil
	}
	out := make([]KeyValue, len(key))
	for i, e := range q.GroupBy {
		kv := KeyValue{Name: ir.FormatExpr(e), Value: key[i].c}
		if c, ok := e.(*ir.ColRef); ok {
			kv.Name = c.Name[strings.LastIndex(c.Name, ".")+1:]
			if c.Up == 0 && c.Source < len(q.From) {
				switch s := q.From[c.Source]; s.Kind {
				case ir.FromTable:
					kv.Table = s.Table
				case ir.FromInput:
					// A pushed-down view's rows named as its table's.
					if t := PushdownTable(s.View); t != nil {
						kv.Table = t
						kv.Name = ColumnNames(RowRef{Table: t, View: s.View})[c.Col]
					}
				}
			}
		}
		out[i] = kv
	}
	return out
}

// unionWord finds a union in a view's text.
var unionWord = regexp.MustCompile(`(?i)\bunion\b`)

func sortRefs(rs []RowRef) {
	viewName := func(r RowRef) string {
		if r.View == nil {
			return ""
		}
		return r.View.Name
	}
	sort.Slice(rs, func(i, j int) bool {
		if a, b := rs[i].Name(), rs[j].Name(); a != b {
			return a < b
		}
		if a, b := viewName(rs[i]), viewName(rs[j]); a != b {
			return a < b
		}
		return rs[i].Row < rs[j].Row
	})
}

func intersectRefs(a, b []RowRef) []RowRef {
	var out []RowRef
	for _, x := range a {
		for _, y := range b {
			if x == y {
				out = append(out, x)
				break
			}
		}
	}
	return out
}

// hasSubquery reports whether e has an exists, in or scalar subquery.
func hasSubquery(e ir.Expr) bool {
	found := false
	ir.Inspect(e, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Exists, *ir.Scalar:
			found = true
		case *ir.In:
			if x.Sub != nil {
				found = true
			}
		}
		return !found
	})
	return found
}
