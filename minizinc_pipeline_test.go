package weave_test

import (
	"context"
	"testing"
	"time"

	"github.com/weavesql/weave"
	"github.com/weavesql/weave/backend/minizinc"
	"github.com/weavesql/weave/backend/minizinc/mzntest"
	"github.com/weavesql/weave/cp"
	"github.com/weavesql/weave/internal/testdb"
)

// The paper's MiniZinc pipeline measurements (§4, "sum with filter" vs
// "sum of predicate", the demand_per_node capacity table at 100 pods x 50
// nodes, all_different vs pairwise): the models of encoding_test.go are
// grounded by Weave, written as MiniZinc in the Naive and the Optimized
// style (backend/minizinc.Style), and flattened to FlatZinc for Gecode
// with minizinc -c. docs/encodings.md holds the numbers.

// pipelineCase is one of the paper's tables with the paper's FlatZinc
// sizes (naive, then optimised).
type pipelineCase struct {
	name              string
	schema, state     string
	paperNaive        [2]int // variables, constraints
	paperOptimized    [2]int
	naiveMustBeLarger bool
	// naiveEncoding switches off Weave's grounding optimisation for the
	// case (encoding_test.go), for the second half of the table.
	naiveEncoding weave.Encoding
}

func pipelineCases() []pipelineCase {
	return []pipelineCase{
		// MiniZinc 2.6.4 rewrites a filtered sum of constants into a sum of
		// bool2int predicates itself: both styles flatten to the same
		// FlatZinc (measured, see docs/encodings.md).
		{"sum over 1,000 rows", sumSchema, sumState(), [2]int{6001, 7001}, [2]int{1000, 0}, false, weave.Encoding{NaiveSums: true}},
		{"capacity at 100 pods x 50 nodes", capacitySchema, capacityState(100, 50), [2]int{40000, 20100}, [2]int{100, 0}, true, weave.Encoding{NoLoads: true, NoBinPacking: true}},
		{"all_different over 100 variables", pairwiseSchema, pairwiseState(100), [2]int{101, 4951}, [2]int{101, 2}, true, weave.Encoding{Pairwise: true}},
	}
}

// captureBackend is a weave.Backend that keeps the grounded model it is
// handed and solves nothing.
type captureBackend struct{ m *cp.Model }

func (c *captureBackend) Name() string { return "capture" }

func (c *captureBackend) Solve(_ context.Context, m *cp.Model, _ cp.Params) (*cp.Response, error) {
	c.m = m
	return &cp.Response{Status: cp.Unknown}, nil
}

// groundedModel compiles schema with enc, loads state and returns the cp
// model Weave grounds.
func groundedModel(t testing.TB, schema, state string, enc weave.Encoding) *cp.Model {
	t.Helper()
	m, err := weave.Compile(schema, weave.WithEncoding(enc))
	if err != nil {
		t.Fatal(err)
	}
	db := testdb.OpenSQLite(t)
	ctx := context.Background()
	if err := m.CreateSchema(ctx, db); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, state)
	if err := m.Connect(db); err != nil {
		t.Fatal(err)
	}
	var c captureBackend
	if _, err := m.Solve(ctx, weave.SolveOptions{NoExplain: true, Backend: &c}); err != nil {
		t.Fatal(err)
	}
	if c.m == nil {
		t.Fatal("the backend was not called")
	}
	return c.m
}

func flattenStyle(t testing.TB, m *cp.Model, style minizinc.Style) minizinc.Stats {
	t.Helper()
	src, err := minizinc.Emit(m, style)
	if err != nil {
		t.Fatal(err)
	}
	st, err := minizinc.Flatten(context.Background(), src)
	if err != nil {
		t.Fatalf("%s: %v", style, err)
	}
	return st
}

// TestMiniZincPipeline flattens each case in both styles and checks that
// the naive FlatZinc is never smaller, and strictly larger in variables
// and constraints where the rewrite still pays on MiniZinc 2.6.4.
func TestMiniZincPipeline(t *testing.T) {
	mzntest.Require(t)
	for _, c := range pipelineCases() {
		t.Run(c.name, func(t *testing.T) {
			m := groundedModel(t, c.schema, c.state, weave.Encoding{})
			naive := flattenStyle(t, m, minizinc.Naive)
			opt := flattenStyle(t, m, minizinc.Optimized)
			t.Logf("cp model %d vars, %d constraints; FlatZinc naive %d vars, %d constraints (paper %d, %d); optimized %d vars, %d constraints (paper %d, %d)",
				m.NumVars(), m.NumConstraints(), naive.Variables, naive.Constraints, c.paperNaive[0], c.paperNaive[1],
				opt.Variables, opt.Constraints, c.paperOptimized[0], c.paperOptimized[1])
			if naive.Variables < opt.Variables || naive.Constraints < opt.Constraints {
				t.Errorf("naive FlatZinc smaller than optimized: %+v vs %+v", naive, opt)
			}
			if c.naiveMustBeLarger && (naive.Variables <= opt.Variables && naive.Constraints <= opt.Constraints) {
				t.Errorf("naive FlatZinc not larger: %+v vs %+v", naive, opt)
			}
			// The same with Weave's grounding optimisation off: what the
			// emission style changes on an unoptimised cp model.
			mn := groundedModel(t, c.schema, c.state, c.naiveEncoding)
			nn := flattenStyle(t, mn, minizinc.Naive)
			no := flattenStyle(t, mn, minizinc.Optimized)
			t.Logf("encoding %+v: cp model %d vars, %d constraints; FlatZinc naive %d vars, %d constraints; optimized %d vars, %d constraints",
				c.naiveEncoding, mn.NumVars(), mn.NumConstraints(), nn.Variables, nn.Constraints, no.Variables, no.Constraints)
		})
	}
}

// BenchmarkMiniZincPipeline reports, per case and style, the FlatZinc
// size, the time minizinc -c takes to flatten, the time of a full solve
// through backend/minizinc (flattening included, 10 s limit) and the
// share of flattening in it (the paper: up to 90%). Run with
//
//	go test -run '^$' -bench MiniZincPipeline -benchtime=1x .
func BenchmarkMiniZincPipeline(b *testing.B) {
	mzntest.Require(b)
	for _, c := range pipelineCases() {
		m := groundedModel(b, c.schema, c.state, weave.Encoding{})
		for _, style := range []minizinc.Style{minizinc.Naive, minizinc.Optimized} {
			b.Run(c.name+"/"+style.String(), func(b *testing.B) {
				var fl minizinc.Stats
				var solve time.Duration
				var r *cp.Response
				for b.Loop() {
					fl = flattenStyle(b, m, style)
					start := time.Now()
					var err error
					r, err = minizinc.Backend{Style: style}.Solve(context.Background(), m, cp.Params{TimeLimit: 10 * time.Second})
					if err != nil {
						b.Fatal(err)
					}
					solve = time.Since(start)
					if r.HasSolution() {
						if err := m.Verify(r); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(fl.Variables), "fzn-vars")
				b.ReportMetric(float64(fl.Constraints), "fzn-constraints")
				b.ReportMetric(float64(fl.Duration.Microseconds())/1000, "flatten-ms")
				b.ReportMetric(float64(solve.Microseconds())/1000, "solve-ms")
				b.ReportMetric(100*fl.Duration.Seconds()/solve.Seconds(), "flatten-%")
				b.ReportMetric(float64(r.Objective), "objective")
				b.ReportMetric(float64(r.Status), "status")
				b.Logf("%s %s: %v objective %d", c.name, style, r.Status, r.Objective)
			})
		}
		// The native engine on the same grounded model, in the same run.
		b.Run(c.name+"/native", func(b *testing.B) {
			var r *cp.Response
			var solve time.Duration
			for b.Loop() {
				start := time.Now()
				var err error
				r, err = m.Solve(context.Background(), cp.Params{TimeLimit: 10 * time.Second})
				if err != nil {
					b.Fatal(err)
				}
				solve = time.Since(start)
				if r.HasSolution() {
					if err := m.Verify(r); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(solve.Microseconds())/1000, "solve-ms")
			b.ReportMetric(float64(r.Objective), "objective")
			b.ReportMetric(float64(r.Status), "status")
		})
	}
}
