// Package rewrite holds the IR rewrite passes that run at the end of
// Compile. Each pass is one file whose header shows the rewrite before →
// after; the table below lists them in order, and the ordering
// constraints between them are written down and checked at start-up.
// Passes change the IR only; grounding alone emits the model.
package rewrite

import (
	"fmt"

	"github.com/weavesql/weave/internal/ir"
)

// Pass is one rewrite of the whole program. Run reports whether it changed
// anything. Optional passes can be disabled (to measure an encoding
// against its naive form); required ones cannot.
type Pass struct {
	Name     string
	Run      func(*ir.Program) bool
	Required bool
}

// Passes is the pass pipeline, in order.
var Passes = []Pass{
	{Name: "fold_constants", Run: foldConstants},
	{Name: "push_not", Run: pushNot},
	{Name: "pairwise_to_all_different", Run: pairwiseToAllDifferent},
}

// order lists the constraints between passes, each with its reason.
var order = []struct{ before, after, why string }{
	{"fold_constants", "push_not", "folding removes 'not true' and constant arms first, so negations only reach real predicates"},
	{"push_not", "pairwise_to_all_different", "the pairwise pattern matches 'a.x <> b.x', which push_not makes of 'not (a.x = b.x)'"},
}

func init() {
	if err := checkOrder(Passes); err != nil {
		panic(err)
	}
}

func checkOrder(ps []Pass) error {
	at := map[string]int{}
	for i, p := range ps {
		at[p.Name] = i
	}
	for _, o := range order {
		b, okb := at[o.before]
		a, oka := at[o.after]
		if !okb || !oka {
			return fmt.Errorf("rewrite: ordering constraint names unknown pass %s or %s", o.before, o.after)
		}
		if b >= a {
			return fmt.Errorf("rewrite: %s must run before %s: %s", o.before, o.after, o.why)
		}
	}
	return nil
}

// Run applies every pass not disabled, in order, and returns the names of
// the passes that changed the program.
func Run(p *ir.Program, disabled map[string]bool) ([]string, error) {
	for name := range disabled {
		found := false
		for _, ps := range Passes {
			if ps.Name == name {
				found = true
				if ps.Required {
					return nil, fmt.Errorf("pass %s is required and cannot be disabled", name)
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown rewrite pass %s", name)
		}
	}
	var fired []string
	for _, ps := range Passes {
		if disabled[ps.Name] {
			continue
		}
		if ps.Run(p) {
			fired = append(fired, ps.Name)
		}
	}
	return fired, nil
}

// eachQuery calls f on every view's query.
func eachQuery(p *ir.Program, f func(v *ir.View, q *ir.Query) bool) bool {
	changed := false
	for _, v := range p.Views {
		if f(v, v.Query) {
			changed = true
		}
	}
	return changed
}
