package weave

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/weavesql/weave/cp"
	"github.com/weavesql/weave/internal/ground"
)

// Explanation says why no solution exists: the hard constraints, and for
// each the table rows, that together cannot hold. Every member is needed
// when Minimal is true: drop any one and the rest can be satisfied.
type Explanation struct {
	Minimal     bool                  `json:"minimal"`
	Constraints []ExplainedConstraint `json:"constraints"`
}

// ExplainedConstraint is one hard-constraint view in an explanation, with
// the rows it was grounded for.
type ExplainedConstraint struct {
	View string `json:"view"`
	// Line is where the view is defined in the schema.
	Line int            `json:"line"`
	Rows []ExplainedRow `json:"rows"`
	// Groups are the keys of the view's groups involved (app=web for a
	// view grouped by app), when the view groups its rows.
	Groups []Row `json:"groups,omitempty"`
}

// ExplainedRow is a table row in an explanation. Decision rows are those
// whose decision columns the constraint restricts (the pod); data rows are
// input facts it depends on (the node whose capacity it is). Row holds the
// input columns only: decision columns have no value to show.
type ExplainedRow struct {
	Table string `json:"table"`
	Role  string `json:"role"` // "decision" or "data"
	Row   Row    `json:"row"`
}

// String renders the explanation for people, one constraint a line.
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
		fmt.Fprintf(&b, "  %s (line %d)", c.View, c.Line)
		if len(c.Groups) > 0 && !hasData(c.Rows) {
			// The group is what a person names ("anti_affinity for
			// app=web"); a data row (the node whose capacity it is)
			// names it already.
			var keys []string
			for _, g := range c.Groups {
				keys = append(keys, strings.Trim(formatRow(g), "()"))
			}
			b.WriteString(" for " + strings.Join(keys, "; "))
		}
		var parts []string
		for _, r := range c.Rows {
			parts = append(parts, fmt.Sprintf("%s %s %s", r.Role, r.Table, formatRow(r.Row)))
		}
		if len(parts) > 0 {
			b.WriteString(": " + strings.Join(parts, "; "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func hasData(rows []ExplainedRow) bool {
	for _, r := range rows {
		if r.Role == "data" {
			return true
		}
	}
	return false
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

// describe turns core literals into views and rows, in schema order.
func (m *Model) describe(gr *ground.Grounded, core []cp.Lit, minimal bool) *Explanation {
	byView := map[string]*ExplainedConstraint{}
	for _, l := range core {
		b := gr.BlameOf(l)
		if b == nil {
			continue
		}
		c := byView[b.View.Name]
		if c == nil {
			c = &ExplainedConstraint{View: b.View.Name, Line: b.View.Pos.Line}
			byView[b.View.Name] = c
		}
		seen := map[string]bool{}
		for _, r := range c.Rows {
			seen[r.Table+formatRow(r.Row)] = true
		}
		add := func(refs []ground.RowRef, role string) {
			for _, r := range refs {
				row := Row(gr.Row(r))
				if k := r.Table.Name + formatRow(row); !seen[k] {
					seen[k] = true
					c.Rows = append(c.Rows, ExplainedRow{Table: r.Table.Name, Role: role, Row: row})
				}
			}
		}
		add(b.Decision, "decision")
		add(b.Data, "data")
		if len(b.Group) > 0 {
			key := Row{}
			for _, kv := range b.Group {
				key[kv.Name] = kv.Value
			}
			if k := formatRow(key); !seen["group"+k] {
				seen["group"+k] = true
				c.Groups = append(c.Groups, key)
			}
		}
	}
	e := &Explanation{Minimal: minimal}
	for _, v := range m.prog.Views {
		if c := byView[v.Name]; c != nil {
			e.Constraints = append(e.Constraints, *c)
		}
	}
	return e
}
