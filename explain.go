package weave

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/weavesql/weave/cp"
	"github.com/weavesql/weave/internal/ground"
	"github.com/weavesql/weave/internal/ir"
)

// Explanation says why no solution exists: the hard constraints, and for
// each the rows or groups, that together cannot hold. Every member is
// needed when Minimal is true: drop any one and the rest can be satisfied.
type Explanation struct {
	Minimal     bool                  `json:"minimal"`
	Constraints []ExplainedConstraint `json:"constraints"`
}

// ExplainedConstraint is one hard-constraint view in an explanation: the
// conflicting items it holds for (Items, one per row or group of the
// view), and the rows and groups of all of them together.
type ExplainedConstraint struct {
	View string `json:"view"`
	// Line is where the view is defined in the schema.
	Line int `json:"line"`
	// Rows are the rows of every item, each once.
	Rows []ExplainedRow `json:"rows"`
	// Groups are the group keys of every item (app=web for a view
	// grouped by app, name=n1 for a view that reads one grouped by
	// node), each once; Items say which view each is of.
	Groups []Row `json:"groups,omitempty"`
	// Items are the conflicting members of the explanation that are
	// this view's: each a row of its from clause (the pod and the node
	// it needs) or one of its groups (a node's capacity), or a row of
	// a grouped view it reads (node n1's row of spare_capacity_per_node).
	// Each is needed when the explanation is Minimal.
	Items []ExplainedItem `json:"items"`
}

// ExplainedItem is one conflicting member: the groups it is of and the
// rows involved. Its text is one line of Explanation.String.
type ExplainedItem struct {
	// Groups are the groups the item is of: the view's own (when it
	// groups), then those of the grouped views it reads.
	Groups []ExplainedGroup `json:"groups,omitempty"`
	// Rows are the rows involved: the decision rows the item restricts
	// (the pod), the data rows it depends on (the node), the candidate
	// members of its groups (the pods that may go to the node) and the
	// rows its subqueries read (the other pods of an anti-affinity's
	// "not exists"), at most maxListedRows candidates and subquery rows.
	Rows []ExplainedRow `json:"rows"`
	// MoreRows counts the candidate and subquery rows involved but not
	// listed.
	MoreRows int `json:"more_rows,omitempty"`
}

// ExplainedGroup is one group of a grouped view.
type ExplainedGroup struct {
	// View is the grouped view: the constraint itself, or a view it
	// reads (through intermediate views too).
	View string `json:"view"`
	// Key holds the group by values, by column name (or expression).
	Key Row `json:"key"`
	// Table and RowKey name the row the group is of, when its key is
	// a table row's primary key (node n1 for a view grouped by
	// node.name); that row is one of the item's rows.
	Table  string `json:"table,omitempty"`
	RowKey string `json:"row_key,omitempty"`
}

// ExplainedRow is a table row in an explanation. Decision rows are those
// whose decision columns the constraint restricts (the pod); data rows are
// input facts it depends on (the node whose capacity it is). Row holds the
// input columns only: decision columns have no value to show.
type ExplainedRow struct {
	Table string `json:"table"`
	Role  string `json:"role"` // "decision" or "data"
	Row   Row    `json:"row"`
	// Key is the row's primary key value (its values joined by "/" for a
	// key of several columns), "" for a table without one.
	Key string `json:"key,omitempty"`
	// View is the pushed-down view the row was read through: Table is
	// the table the view filters when it selects that table's primary
	// key, else the view itself.
	View string `json:"view,omitempty"`
	// Read lists the input columns of Row, other than the key, that the
	// constraint reads (through the views it reads too): what the text
	// shows of the row.
	Read []string `json:"read,omitempty"`
}

// maxListedRows bounds the candidate and subquery rows an item lists.
const maxListedRows = 16

// String renders the explanation for people, one conflicting item a line:
//
//	capacity (line 41) for node n1 (cpu=4): pod p1 (cpu=3), p2 (cpu=3)
//
// Rows are named by table and primary key, with the columns the
// constraint reads; a group by the key it is of.
func (e *Explanation) String() string {
	if e == nil {
		return ""
	}
	var b strings.Builder
	if e.Minimal {
		b.WriteString("no solution: these constraints conflict (each one is needed):\n")
	} else {
		b.WriteString("no solution: these constraints conflict (not proven minimal):\n")
	}
	for _, c := range e.Constraints {
		for _, it := range c.Items {
			fmt.Fprintf(&b, "  %s (line %d)%s\n", c.View, c.Line, it.text(c.View))
		}
	}
	return b.String()
}

// text is an item's line after the view's name.
func (it *ExplainedItem) text(view string) string {
	var b strings.Builder
	named := map[int]bool{} // rows a group names
	var groups []string
	for _, g := range it.Groups {
		s := ""
		if g.Table != "" {
			for i, r := range it.Rows {
				if r.Table == g.Table && r.Key == g.RowKey && !named[i] {
					named[i] = true
					s = r.Table + " " + r.text()
					break
				}
			}
		}
		if s == "" {
			s = strings.Trim(formatRow(g.Key), "()")
		}
		if g.View != view && g.View != "" {
			s += " in " + g.View
		}
		groups = append(groups, s)
	}
	if len(groups) > 0 {
		b.WriteString(" for " + strings.Join(groups, "; "))
	}
	// The rows by table, in the order tables first appear.
	var tables []string
	byTable := map[string][]string{}
	for i, r := range it.Rows {
		if named[i] {
			continue
		}
		if _, ok := byTable[r.Table]; !ok {
			tables = append(tables, r.Table)
		}
		byTable[r.Table] = append(byTable[r.Table], r.text())
	}
	var parts []string
	for _, t := range tables {
		parts = append(parts, t+" "+strings.Join(byTable[t], ", "))
	}
	if it.MoreRows > 0 {
		parts = append(parts, fmt.Sprintf("and %d more rows", it.MoreRows))
	}
	if len(parts) > 0 {
		b.WriteString(": " + strings.Join(parts, "; "))
	}
	return b.String()
}

// sortKey identifies a row in an explanation: its table and key, or all
// its columns without a key.
func (r *ExplainedRow) sortKey() string {
	if r.Key != "" {
		return r.Table + "\x00" + r.Key
	}
	return r.Table + "\x00" + formatRow(r.Row)
}

// text names a row: its key and the columns read, or without a key all
// its columns.
func (r *ExplainedRow) text() string {
	var kv []string
	cols := r.Read
	if r.Key == "" {
		// A row without a key is all its columns.
		cols = nil
		for k := range r.Row {
			cols = append(cols, k)
		}
		sort.Strings(cols)
	}
	for _, k := range cols {
		kv = append(kv, fmt.Sprintf("%s=%v", k, r.Row[k]))
	}
	switch {
	case r.Key == "":
		return "(" + strings.Join(kv, ", ") + ")"
	case len(kv) == 0:
		return r.Key
	}
	return r.Key + " (" + strings.Join(kv, ", ") + ")"
}

func formatRow(r Row) string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var kv []string
	for _, k := range keys {
		kv = append(kv, fmt.Sprintf("%s=%v", k, r[k]))
	}
	return "(" + strings.Join(kv, ", ") + ")"
}

// explain grounds the model again with an assumption literal on every hard
// row or group, finds an infeasible subset and shrinks it (QuickXplain,
// then a deletion check of each member) within the budget.
func (m *Model) explain(ctx context.Context, snap *ground.Snapshot, budget time.Duration) (*Explanation, error) {
	gr, core, minimal, err := m.explainCore(ctx, snap, budget)
	if err != nil || gr == nil {
		return nil, err
	}
	return m.describe(gr, core, minimal), nil
}

// explainCore grounds the model with assumptions and returns an infeasible
// subset of them, and whether each member is proven needed; a nil model
// when no trustworthy subset was found within the budget.
func (m *Model) explainCore(ctx context.Context, snap *ground.Snapshot, budget time.Duration) (*ground.Grounded, []cp.Lit, bool, error) {
	deadline := time.Now().Add(budget)
	gr, err := ground.Ground(m.prog, snap, m.groundOptions(ground.Options{Explain: true}))
	if err != nil {
		return nil, nil, false, err
	}
	md := gr.Model
	all := make([]cp.Lit, 0, len(gr.Blames()))
	for _, b := range gr.Blames() {
		all = append(all, b.Lit)
	}
	const conflicts = 20000
	// Past the deadline every check is "unknown" at once: the budget
	// bounds the whole explanation, not each check.
	checker := md.NewChecker()
	check := func(lits []cp.Lit) cp.Status {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return cp.Unknown
		}
		return checker.Check(ctx, lits, deadline, conflicts)
	}
	// Progression needs propagation only, and its core proves the whole
	// set infeasible; otherwise search must show it first.
	core := progression(checker, all)
	if core == nil {
		if check(all) != cp.Infeasible {
			// Not infeasible within the budget: no trustworthy explanation.
			return nil, nil, false, nil
		}
		core = quickXplain(check, nil, all)
	}
	if len(core) == 0 || check(core) != cp.Infeasible {
		// QuickXplain ran out of time: the whole set is the (proven)
		// infeasible subset we have.
		return gr, all, false, nil
	}
	// Minimality: each member dropped, the rest must be satisfiable. The
	// other assumptions are tried false first: their constraints are then
	// off, so search finds a witness at once, and a solution with them
	// off is a solution of the rest alone. Only when that fails is the
	// rest checked with them free.
	inCore := map[cp.Lit]bool{}
	for _, l := range core {
		inCore[l] = true
	}
	var off []cp.Lit
	for _, l := range all {
		if !inCore[l] {
			off = append(off, l.Not())
		}
	}
	minimal := true
	for i := range core {
		rest := append(append([]cp.Lit(nil), core[:i]...), core[i+1:]...)
		if check(append(rest, off...)) != cp.Feasible && check(rest) != cp.Feasible {
			minimal = false
			break
		}
	}
	return gr, core, minimal, nil
}

// progression finds a core when propagation alone refutes the
// assumptions: assume the core found so far, then the others in order,
// until propagation fails; the literal at which it fails joins the core
// and only those before it remain candidates. It returns nil when search,
// not propagation, is needed (QuickXplain then takes over).
func progression(ch *cp.Checker, all []cp.Lit) []cp.Lit {
	var core []cp.Lit
	rest := all
	for {
		at := ch.FirstFailure(append(append([]cp.Lit(nil), core...), rest...))
		switch {
		case at < 0:
			return nil
		case at < len(core):
			return core
		}
		j := at - len(core)
		core = append(core, rest[j])
		rest = rest[:j]
	}
}

// quickXplain (Junker 2004) returns a subset of c that, with b, is
// infeasible, using O(k log(n/k)) checks for a core of size k.
func quickXplain(check func([]cp.Lit) cp.Status, b, c []cp.Lit) []cp.Lit {
	var qx func(b []cp.Lit, delta bool, c []cp.Lit) []cp.Lit
	qx = func(b []cp.Lit, delta bool, c []cp.Lit) []cp.Lit {
		if delta && len(b) > 0 && check(b) == cp.Infeasible {
			return nil
		}
		if len(c) <= 1 {
			return c
		}
		half := len(c) / 2
		c1, c2 := c[:half], c[half:]
		d2 := qx(append(append([]cp.Lit(nil), b...), c1...), len(c1) > 0, c2)
		d1 := qx(append(append([]cp.Lit(nil), b...), d2...), len(d2) > 0, c1)
		return append(d1, d2...)
	}
	return qx(b, false, c)
}

// describe turns core literals into views, items and rows, in schema
// order; the items of a view in the order of their text.
func (m *Model) describe(gr *ground.Grounded, core []cp.Lit, minimal bool) *Explanation {
	byView := map[string]*ExplainedConstraint{}
	seenRow := map[string]map[string]bool{}
	seenGroup := map[string]map[string]bool{}
	reads := map[*ir.View]map[string]map[string]bool{}
	for _, l := range core {
		b := gr.BlameOf(l)
		if b == nil {
			continue
		}
		gr.Resolve(b)
		c := byView[b.View.Name]
		if c == nil {
			c = &ExplainedConstraint{View: b.View.Name, Line: b.View.Pos.Line}
			byView[b.View.Name] = c
			seenRow[c.View], seenGroup[c.View] = map[string]bool{}, map[string]bool{}
			reads[b.View] = readColumns(b.View.Query)
		}
		it := ExplainedItem{}
		inItem := map[string]bool{}
		add := func(er ExplainedRow) {
			k := er.sortKey()
			if inItem[k] {
				return
			}
			inItem[k] = true
			it.Rows = append(it.Rows, er)
			if !seenRow[c.View][k] {
				seenRow[c.View][k] = true
				c.Rows = append(c.Rows, er)
			}
		}
		// The rows the item restricts, the facts it holds for, then its
		// candidates and what its subqueries read, each by table and key
		// (whatever order the database returned them in).
		extra := append(append([]ground.RowRef(nil), b.Members...), b.Read...)
		if len(extra) > maxListedRows {
			it.MoreRows = len(extra) - maxListedRows
			extra = extra[:maxListedRows]
		}
		for _, refs := range [][]ground.RowRef{b.Decision, b.Data, extra} {
			rows := make([]ExplainedRow, len(refs))
			for i, r := range refs {
				rows[i] = explainedRow(gr, r, reads[b.View])
			}
			sort.SliceStable(rows, func(i, j int) bool { return rows[i].sortKey() < rows[j].sortKey() })
			for _, er := range rows {
				add(er)
			}
		}
		for _, vg := range b.Groups {
			eg := ExplainedGroup{Key: Row{}}
			if vg.View != nil {
				eg.View = vg.View.Name
			}
			for _, kv := range vg.Key {
				eg.Key[kv.Name] = kv.Value
			}
			eg.Table, eg.RowKey = groupRow(vg, it.Rows)
			it.Groups = append(it.Groups, eg)
			if k := formatRow(eg.Key); !seenGroup[c.View][eg.View+k] {
				seenGroup[c.View][eg.View+k] = true
				c.Groups = append(c.Groups, eg.Key)
			}
		}
		c.Items = append(c.Items, it)
	}
	e := &Explanation{Minimal: minimal}
	for _, v := range m.prog.Views {
		if c := byView[v.Name]; c != nil {
			// Items in the order of their lines (node n1 before n2).
			sort.SliceStable(c.Items, func(i, j int) bool { return c.Items[i].text(c.View) < c.Items[j].text(c.View) })
			e.Constraints = append(e.Constraints, *c)
		}
	}
	return e
}

// explainedRow describes a row, with the columns the view reads of it.
func explainedRow(gr *ground.Grounded, r ground.RowRef, reads map[string]map[string]bool) ExplainedRow {
	er := ExplainedRow{Table: r.Name(), Role: "data", Row: Row(gr.Row(r))}
	if r.Decision() {
		er.Role = "decision"
	}
	keyCols := ground.KeyColumns(r)
	if len(keyCols) > 0 {
		er.Key = gr.RowKey(r)
	}
	read := reads[r.Name()]
	if r.View != nil {
		er.View = r.View.Name
		read = reads[r.View.Name]
	}
	for col := range er.Row {
		if read[col] && !slices.Contains(keyCols, col) {
			er.Read = append(er.Read, col)
		}
	}
	sort.Strings(er.Read)
	return er
}

// groupRow returns the row a group is of: one of rows whose primary key
// columns are among the group's key, every key value being the row's
// (node n1 for a view grouped by node.name, bin 3 for one grouped by
// bin.id, bin.cpu_cap).
func groupRow(vg ground.ViewGroup, rows []ExplainedRow) (table, key string) {
	var t *ir.Table
	for _, kv := range vg.Key {
		if kv.Table != nil {
			t = kv.Table
			break
		}
	}
	if t == nil || len(t.PrimaryKey) == 0 {
		return "", ""
	}
	names := map[string]bool{}
	for _, kv := range vg.Key {
		names[kv.Name] = true
	}
	for _, k := range t.PrimaryKey {
		if !names[t.Columns[k].Name] {
			return "", ""
		}
	}
next:
	for _, r := range rows {
		if r.Table != t.Name || r.Key == "" {
			continue
		}
		for _, kv := range vg.Key {
			if v, ok := r.Row[kv.Name]; !ok || v != kv.Value {
				continue next
			}
		}
		return r.Table, r.Key
	}
	return "", ""
}

// readColumns lists the columns a hard view's query reads, by table or
// pushed-down view, through the views and subqueries it reads: its
// filters, groups, check and constraint aggregates, and of a relation it
// reads only the outputs it uses (not a "select *" of its own).
func readColumns(q *ir.Query) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	note := func(rel, col string) {
		if out[rel] == nil {
			out[rel] = map[string]bool{}
		}
		out[rel][col] = true
	}
	type outKey struct {
		q   *ir.Query
		col int
	}
	done := map[*ir.Query]bool{}
	doneOut := map[outKey]bool{}
	var walkQ func(q *ir.Query, stack []*ir.Query, outputs bool)
	var walkE func(e ir.Expr, stack []*ir.Query)
	walkQ = func(q *ir.Query, stack []*ir.Query, outputs bool) {
		if q == nil {
			return
		}
		if !q.Correlated {
			if done[q] && !outputs {
				return
			}
			done[q] = true
		}
		stack = append(stack[:len(stack):len(stack)], q)
		for _, s := range q.From {
			if s.Kind == ir.FromQuery {
				walkQ(s.Query, nil, false)
			}
		}
		for _, e := range q.Filters {
			walkE(e, stack)
		}
		for _, e := range q.GroupBy {
			walkE(e, stack)
		}
		for _, e := range q.Having {
			walkE(e, stack)
		}
		walkE(q.Check, stack)
		for _, a := range q.Constraints {
			walkE(a, stack)
		}
		if outputs {
			for _, o := range q.Select {
				walkE(o.Expr, stack)
			}
		}
	}
	walkE = func(e ir.Expr, stack []*ir.Query) {
		ir.Inspect(e, func(x ir.Expr) bool {
			switch x := x.(type) {
			case *ir.ColRef:
				if x.Up >= len(stack) {
					return true
				}
				q := stack[len(stack)-1-x.Up]
				if x.Source >= len(q.From) {
					return true
				}
				switch s := q.From[x.Source]; s.Kind {
				case ir.FromTable:
					note(s.Table.Name, s.Table.Columns[x.Col].Name)
				case ir.FromInput:
					note(s.View.Name, pushdownColumn(s.View, x.Col))
				case ir.FromQuery:
					// The output used, in its query's scope; the rest
					// of that query once.
					sub := s.Query
					if sub == nil || x.Col >= len(sub.Select) {
						return true
					}
					walkQ(sub, nil, false)
					if k := (outKey{sub, x.Col}); !doneOut[k] {
						doneOut[k] = true
						walkE(sub.Select[x.Col].Expr, []*ir.Query{sub})
					}
				}
			case *ir.In:
				walkE(x.X, stack)
				for _, l := range x.List {
					walkE(l, stack)
				}
				walkQ(x.Sub, stack, true)
				return false
			case *ir.Exists:
				walkQ(x.Sub, stack, false)
				return false
			case *ir.Scalar:
				walkQ(x.Sub, stack, true)
				return false
			}
			return true
		})
	}
	walkQ(q, nil, false)
	return out
}

// pushdownColumn names column i of a pushed-down view as its rows are
// described: after the table column it selects, when the view's rows
// are that table's (ground.RowRef), else by its own name.
func pushdownColumn(v *ir.View, i int) string {
	r := ground.RowRef{View: v, Table: ground.PushdownTable(v)}
	return ground.ColumnNames(r)[i]
}
