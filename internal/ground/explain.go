package ground

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/weavesql/weave/cp"
	"github.com/weavesql/weave/internal/ir"
)

// In explain mode every hard constraint is grounded under an assumption
// literal, one per view and per row of a decision table (a pod × the node
// selector) or per group (the capacity of node n3). When the model is
// infeasible, the solver's core is a set of these literals; Blame says what
// each stands for, in SQL terms: the view and the table rows involved.

// RowRef names one fetched row of a table.
type RowRef struct {
	Table *ir.Table
	Row   int
}

// Blame is what one assumption literal stands for.
type Blame struct {
	View *ir.View
	// Decision rows are the rows whose decision columns the constraint
	// restricts; Data rows are input facts every row of the group shares
	// (the node whose capacity it is).
	Decision []RowRef
	Data     []RowRef
	// Group is the key of the group the constraint holds for (the app
	// whose pods must be apart), one entry per group by expression.
	Group []KeyValue
	Lit   cp.Lit
}

// KeyValue is one group by expression of a view and its value in a group.
type KeyValue struct {
	Name  string // the column name, or the expression's text
	Value any
}

// Label is a short human name: "capacity: node n3" or
// "constraint_node_affinity: pending_pod p7".
func (b *Blame) Label(gr *Grounded) string {
	var parts []string
	for _, r := range append(append([]RowRef(nil), b.Decision...), b.Data...) {
		parts = append(parts, r.Table.Name+" "+gr.RowKey(r))
	}
	return b.View.Name + ": " + strings.Join(parts, ", ")
}

// RowKey is the primary key of a row, or all its columns without one.
func (gr *Grounded) RowKey(r RowRef) string {
	data := gr.snap.rows(r.Table.Name)[r.Row]
	cols := r.Table.PrimaryKey
	if len(cols) == 0 {
		for i := range r.Table.Columns {
			cols = append(cols, i)
		}
	}
	var vals []string
	for _, c := range cols {
		vals = append(vals, fmt.Sprint(data[c]))
	}
	return strings.Join(vals, "/")
}

// Row returns the stored values of a referenced row, keyed by column.
func (gr *Grounded) Row(r RowRef) map[string]any {
	data := gr.snap.rows(r.Table.Name)[r.Row]
	out := map[string]any{}
	for i, c := range r.Table.Columns {
		if c.Variable {
			continue // not a fact: the solver decides it
		}
		out[c.Name] = data[i]
	}
	return out
}

// Blames lists the assumption literals of an explain-mode model.
func (gr *Grounded) Blames() []*Blame { return gr.blames }

// BlameOf returns what an assumption literal stands for, or nil.
func (gr *Grounded) BlameOf(l cp.Lit) *Blame { return gr.blameByLit[l.Index()] }

// rowRefs returns the base-table rows a tuple binds (through derived
// sources too), split into rows with decision columns and the others.
func (g *grounder) rowRefs(t *tuple) (decision, data []RowRef) {
	for _, rw := range t.rows {
		if rw == nil {
			continue
		}
		if ref, ok := g.origin[rw]; ok {
			if ref.Table.HasVariables() {
				decision = append(decision, ref)
			} else {
				data = append(data, ref)
			}
		}
	}
	return decision, data
}

// blameKey identifies an assumption: the view, the rows that key it and
// the group key values.
func blameKey(v *ir.View, rows []RowRef, key []value) string {
	// Called for every tuple of a hard view: no fmt on the common path.
	b := make([]byte, 0, 64)
	b = append(b, v.Name...)
	for _, r := range rows {
		b = append(b, '|')
		b = append(b, r.Table.Name...)
		b = append(b, '#')
		b = strconv.AppendInt(b, int64(r.Row), 10)
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

// assumption returns the assumption literal for a row of a hard view: one
// per view and set of key rows (and group key values); data rows shared by
// every tuple under it are kept as facts.
func (g *grounder) assumption(v *ir.View, keyRows, decision, data []RowRef, groupKey ...value) cp.Lit {
	sortRefs(keyRows)
	sortRefs(decision)
	key := blameKey(v, keyRows, groupKey)
	b, ok := g.blameByKey[key]
	if !ok {
		l := g.m.NewBoolVar("assume " + key)
		b = &Blame{View: v, Decision: decision, Data: append([]RowRef(nil), data...), Group: keyValues(v, groupKey), Lit: l}
		g.blameByKey[key] = b
		g.blames = append(g.blames, b)
		g.blameByLit[l.Index()] = b
		g.m.AddAssumptions(l)
		return l
	}
	b.Data = intersectRefs(b.Data, data)
	return b.Lit
}

// keyValues names a group's key values after v's group by expressions.
func keyValues(v *ir.View, key []value) []KeyValue {
	if len(key) == 0 || len(key) != len(v.Query.GroupBy) {
		return nil
	}
	out := make([]KeyValue, len(key))
	for i, e := range v.Query.GroupBy {
		name := ir.FormatExpr(e)
		if c, ok := e.(*ir.ColRef); ok {
			name = c.Name[strings.LastIndex(c.Name, ".")+1:]
		}
		out[i] = KeyValue{Name: name, Value: key[i].c}
	}
	return out
}

func sortRefs(rs []RowRef) {
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].Table.Name != rs[j].Table.Name {
			return rs[i].Table.Name < rs[j].Table.Name
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

// groupRefs returns the rows every member of a group shares.
func (g *grounder) groupRefs(grp *group) (decision, data []RowRef) {
	for i, m := range g.membersOf(grp) {
		d, x := g.rowRefs(m.t)
		all := append(d, x...)
		if i == 0 {
			data = all
			continue
		}
		data = intersectRefs(data, all)
	}
	for _, r := range data {
		if r.Table.HasVariables() {
			decision = append(decision, r)
		}
	}
	var facts []RowRef
	for _, r := range data {
		if !r.Table.HasVariables() {
			facts = append(facts, r)
		}
	}
	return decision, facts
}

// memberRefs adds to dec the decision rows of a group's members.
func (g *grounder) memberRefs(grp *group, dec []RowRef) []RowRef {
	out := append([]RowRef(nil), dec...)
	for _, m := range g.membersOf(grp) {
		d, _ := g.rowRefs(m.t)
		for _, r := range d {
			dup := false
			for _, o := range out {
				if o == r {
					dup = true
					break
				}
			}
			if !dup {
				out = append(out, r)
			}
		}
	}
	return out
}
