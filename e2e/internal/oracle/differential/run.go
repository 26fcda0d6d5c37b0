package differential

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/weavesql/weave/cmd/weave-scheduler/app"
	"github.com/weavesql/weave/e2e/internal/oracle"
	"github.com/weavesql/weave/e2e/internal/oracle/gen"
)

// Summary aggregates the results of many cases.
type Summary struct {
	Cases   int
	Outcome Outcome
	// Decide is the total time of app.Decide over the cases.
	Decide time.Duration
	// Total counts the findings, ByKind those of each kind.
	Total  int
	ByKind map[Kind]int
	// Categories holds the findings per Finding.Categories (a finding may be in several).
	Categories map[string]*Category
	// Pending and Bound count, per feature (gen.Features), the pending pods of weave-scheduler that use it
	// and those of them weave bound.
	Pending, Bound map[string]int
	// PendingPods counts the pending pods of weave-scheduler.
	PendingPods int
	// ReplayExhausted lists the cases whose bindings were judged in the final state, no order found in time.
	ReplayExhausted []int64
	// Errors are cases that could not be decided or judged.
	Errors []error
}

// Category is the findings of one cause.
type Category struct {
	Name     string
	Findings int
	Seeds    map[int64]bool
	// Example is the finding of the smallest case (fewest nodes and pods), to read first.
	Example     Finding
	ExampleCase Result
	// Features counts the features of the pods concerned.
	Features map[string]int
}

func (s *Summary) add(r Result, decide time.Duration) {
	s.Cases++
	s.Decide += decide
	if r.ReplayExhausted {
		s.ReplayExhausted = append(s.ReplayExhausted, r.Case.Seed)
	}
	s.Outcome.Bound += r.Outcome.Bound
	s.Outcome.Unschedulable += r.Outcome.Unschedulable
	s.Outcome.Refused += r.Outcome.Refused
	s.Outcome.Gated += r.Outcome.Gated
	for _, p := range r.Case.Pending {
		if p.Spec.SchedulerName != gen.SchedulerName {
			continue
		}
		s.PendingPods++
		_, bound := r.Decision.Bindings[key(p)]
		for _, f := range gen.Features(p) {
			s.Pending[f]++
			if bound {
				s.Bound[f]++
			}
		}
	}
	for _, f := range r.Findings {
		s.Total++
		s.ByKind[f.Kind]++
		for _, name := range f.Categories() {
			s.addTo(name, r, f)
		}
	}
}

func (s *Summary) addTo(name string, r Result, f Finding) {
	size := func(c *gen.Case) int { return len(c.Nodes) + len(c.Bound) + len(c.Pending) }
	c := s.Categories[name]
	if c == nil {
		c = &Category{Name: name, Seeds: map[int64]bool{}, Features: map[string]int{}}
		s.Categories[name] = c
	}
	c.Findings++
	c.Seeds[r.Case.Seed] = true
	if c.ExampleCase.Case == nil || size(r.Case) < size(c.ExampleCase.Case) {
		c.Example, c.ExampleCase = f, r
	}
	if p := r.pod(f.Pod); p != nil {
		for _, ft := range gen.Features(p) {
			c.Features[ft]++
		}
	}
}

// Findings counts the findings of the given kinds (all kinds if none given).
func (s *Summary) Findings(kinds ...Kind) int {
	if len(kinds) == 0 {
		return s.Total
	}
	n := 0
	for _, k := range kinds {
		n += s.ByKind[k]
	}
	return n
}

// Options configure a run.
type Options struct {
	// App is weave-scheduler's configuration.
	App app.Config
	// Gen shapes the generated states.
	Gen gen.Options
	// Workers is how many cases are decided at once.
	Workers int
	// Attribute is how many missed placements to explain with Attribute (the first found; each costs
	// many app.Decide runs).
	Attribute int
}

// Run decides and judges the cases of seeds.
func Run(ctx context.Context, o *oracle.Oracle, opts Options, seeds []int64) *Summary {
	s := &Summary{Categories: map[string]*Category{}, ByKind: map[Kind]int{}, Pending: map[string]int{}, Bound: map[string]int{}}
	var mu sync.Mutex
	budget := opts.Attribute
	next := make(chan int64)
	var wg sync.WaitGroup
	for range max(opts.Workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range next {
				c := gen.Generate(seed, opts.Gen)
				start := time.Now()
				d, err := app.Decide(ctx, opts.App, app.Snapshot{Nodes: c.Nodes, Pods: c.Pods(), Namespaces: c.Namespaces})
				took := time.Since(start)
				var r Result
				if err != nil && ctx.Err() == nil {
					// Weave's failure, not the harness's: a finding.
					r = Result{Case: c, Decision: app.Decision{}, Findings: []Finding{{Kind: DecideError, Detail: err.Error()}}}
					err = nil
				} else if err == nil {
					r, err = Judge(ctx, o, c, d)
				}
				for i := range r.Findings {
					if err != nil || r.Findings[i].Kind != MissedPlacement {
						continue
					}
					mu.Lock()
					try := budget > 0
					budget--
					mu.Unlock()
					if try {
						r.Findings[i].Why, err = Attribute(ctx, opts.App, r, r.Findings[i])
					}
				}
				mu.Lock()
				if err != nil {
					s.Errors = append(s.Errors, fmt.Errorf("seed %d: %w", seed, err))
				} else {
					s.add(r, took)
				}
				mu.Unlock()
			}
		}()
	}
	for _, seed := range seeds {
		if ctx.Err() != nil {
			break
		}
		next <- seed
	}
	close(next)
	wg.Wait()
	return s
}

// Report prints the counts, the coverage per feature and the categories of findings, largest first, each
// with its smallest example.
func (s *Summary) Report() string {
	var b strings.Builder
	per := time.Duration(0)
	if s.Cases > 0 {
		per = s.Decide / time.Duration(s.Cases)
	}
	fmt.Fprintf(&b, "%d cases (app.Decide %v per case); pods: %d bound, %d unschedulable, %d refused, %d gated; %d findings, %d errors\n",
		s.Cases, per.Round(time.Millisecond), s.Outcome.Bound, s.Outcome.Unschedulable, s.Outcome.Refused, s.Outcome.Gated, s.Findings(), len(s.Errors))
	if n := len(s.ReplayExhausted); n > 0 {
		seeds := map[int64]bool{}
		for _, sd := range s.ReplayExhausted {
			seeds[sd] = true
		}
		fmt.Fprintf(&b, "%d cases judged in the final state, no order of their bindings found in time (seeds %s)\n", n, seedList(seeds, 10))
	}
	b.WriteString("coverage: feature: pending pods using it / of them bound by weave\n")
	feats := make([]string, 0, len(s.Pending))
	for f := range s.Pending {
		feats = append(feats, f)
	}
	sort.Strings(feats)
	for _, f := range feats {
		fmt.Fprintf(&b, "  %-90s %6d %6d\n", f, s.Pending[f], s.Bound[f])
	}
	for _, c := range s.SortedCategories() {
		fmt.Fprintf(&b, "\n== %s: %d findings in %d cases (seeds %s)\n", c.Name, c.Findings, len(c.Seeds), seedList(c.Seeds, 8))
		fmt.Fprintf(&b, "   features over-represented among the pods concerned (pods with it / findings, times its base rate): %s\n",
			s.overRepresented(c, 8))
		b.WriteString(indent(c.ExampleCase.Describe(c.Example), "   "))
	}
	for i, err := range s.Errors {
		if i == 10 {
			fmt.Fprintf(&b, "... %d more errors\n", len(s.Errors)-10)
			break
		}
		fmt.Fprintf(&b, "error: %v\n", err)
	}
	return b.String()
}

// SortedCategories returns the categories, the most findings first.
func (s *Summary) SortedCategories() []*Category {
	out := make([]*Category, 0, len(s.Categories))
	for _, c := range s.Categories {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Findings != out[j].Findings {
			return out[i].Findings > out[j].Findings
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func seedList(seeds map[int64]bool, n int) string {
	var ss []int64
	for s := range seeds {
		ss = append(ss, s)
	}
	sort.Slice(ss, func(i, j int) bool { return ss[i] < ss[j] })
	var parts []string
	for i, s := range ss {
		if i == n {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprint(s))
	}
	return strings.Join(parts, " ")
}

// overRepresented lists the features most over-represented among the pods of a category's findings compared
// with all pending pods: a hint at the field a category is about.
func (s *Summary) overRepresented(c *Category, n int) string {
	type kv struct {
		k    string
		v    int
		lift float64
	}
	var xs []kv
	for k, v := range c.Features {
		base := float64(s.Pending[k]) / float64(max(s.PendingPods, 1))
		if base == 0 || 2*v < c.Findings && v < 3 {
			continue
		}
		xs = append(xs, kv{k, v, float64(v) / float64(c.Findings) / base})
	}
	sort.Slice(xs, func(i, j int) bool {
		if xs[i].lift != xs[j].lift {
			return xs[i].lift > xs[j].lift
		}
		return xs[i].k < xs[j].k
	})
	var parts []string
	for i, x := range xs {
		if i == n || x.lift < 1.5 {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d/%d ×%.1f", x.k, x.v, c.Findings, x.lift))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
