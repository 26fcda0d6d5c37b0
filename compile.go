package weave

import (
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/weavesql/weave/internal/analyze"
	"github.com/weavesql/weave/internal/ground"
	"github.com/weavesql/weave/internal/ir"
	"github.com/weavesql/weave/internal/rewrite"
	"github.com/weavesql/weave/internal/sqlfront"
)

// Model is a compiled schema. Compile it once; Connect it to a database;
// Solve it whenever the state changes. A Model is safe for use by one
// goroutine at a time.
type Model struct {
	schema string
	prog   *ir.Program
	plan   *ground.Plan // what each solve reads (ground.NewPlan of prog)
	ast    *sqlfront.Schema
	aggs   map[string]Aggregate
	enc    Encoding
	// rewrites lists the passes that changed the program.
	rewrites []string
	db       *sql.DB
	reads    preparedReads // the snapshot's statements, prepared on db
	// readsPrepared: reads were prepared since Connect (by the first
	// read, startFetch).
	readsPrepared bool
	mu            sync.Mutex
	// lastVars and lastConstraints size the next model (Solve), so a
	// scheduling loop grounding batch after batch does not regrow it.
	lastVars, lastConstraints int
	// smallSets is ground.Options.SmallSets (the differential tests).
	smallSets bool
	// verifyHook, when set (tests), is called with each stage of a
	// verification: "loaded" once the assignment is in the temporary
	// tables, "check VIEW" before each view is checked, "checked" once
	// every view has been.
	verifyHook func(stage string)
}

// CompileOption configures Compile.
type CompileOption func(*compileConfig)

type compileConfig struct {
	aggs     map[string]Aggregate
	disabled map[string]bool
	enc      Encoding
}

// Encoding chooses how SQL is grounded into the model. The zero value is
// Weave's encoding; each field switches one optimisation off, so that what
// it buys can be measured (the paper's encoding tables, §4).
type Encoding struct {
	// NaiveSums grounds a sum over rows that exist under a decision with
	// one auxiliary variable per row (the paper's "sum with filter")
	// instead of a sum of predicates.
	NaiveSums bool
	// NoLoads grounds per-node sums with one literal per (row, node)
	// instead of one shared load variable per node.
	NoLoads bool
	// NoBinPacking keeps per-node loads as separate linear sums instead of
	// one bin-packing constraint per resource.
	NoBinPacking bool
	// Pairwise keeps pairwise inequalities (no pairwise_to_all_different
	// rewrite) and posts all_different as pairwise inequalities.
	Pairwise bool
}

// WithEncoding selects an encoding (see Encoding).
func WithEncoding(e Encoding) CompileOption {
	return func(c *compileConfig) {
		c.enc = e
		if e.Pairwise {
			c.disabled["pairwise_to_all_different"] = true
		}
	}
}

// WithoutRewrite disables optional IR rewrite passes by name (see
// RewritePasses), to measure an encoding against its naive form. Unknown
// or required passes make Compile fail.
func WithoutRewrite(names ...string) CompileOption {
	return func(c *compileConfig) {
		for _, n := range names {
			c.disabled[n] = true
		}
	}
}

// RewritePasses lists the IR rewrite passes Compile runs, in order.
func RewritePasses() []string {
	var out []string
	for _, p := range rewrite.Passes {
		out = append(out, p.Name)
	}
	return out
}

// WithAggregate registers a constraint aggregate, usable in the select list
// of a hard-constraint view like the built-in all_different.
func WithAggregate(a Aggregate) CompileOption {
	return func(c *compileConfig) { c.aggs[strings.ToLower(a.Name)] = a }
}

// CompileError is one positioned error in a schema.
type CompileError struct {
	Line, Col int
	// View is the table or view the error is in, if known.
	View string
	Msg  string
}

func (e *CompileError) Error() string {
	if e.View != "" {
		return fmt.Sprintf("%d:%d: %s: %s", e.Line, e.Col, e.View, e.Msg)
	}
	return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg)
}

// CompileErrors is every error found in a schema, sorted by position. It
// wraps ErrCompile.
type CompileErrors []*CompileError

func (l CompileErrors) Error() string {
	switch len(l) {
	case 0:
		return "weave: no errors"
	case 1:
		return "weave: " + l[0].Error()
	}
	return fmt.Sprintf("weave: %s (and %d more errors)", l[0], len(l)-1)
}

// Unwrap makes errors.Is(err, ErrCompile) true.
func (l CompileErrors) Unwrap() error { return ErrCompile }

// Compile parses and analyses a schema. No database is needed. Errors are
// CompileErrors carrying the view name and line:column of each problem.
func Compile(schema string, opts ...CompileOption) (*Model, error) {
	cfg := &compileConfig{aggs: map[string]Aggregate{}, disabled: map[string]bool{}}
	for name, a := range builtinAggregates {
		cfg.aggs[name] = a
	}
	for _, o := range opts {
		o(cfg)
	}
	names := map[string]bool{}
	for name, a := range cfg.aggs {
		if a.Post == nil {
			return nil, fmt.Errorf("%w: aggregate %s has no Post function", ErrCompile, name)
		}
		if isReservedFunc(name) {
			return nil, fmt.Errorf("%w: aggregate name %s is reserved", ErrCompile, name)
		}
		names[name] = true
	}
	ast, err := sqlfront.Parse(schema)
	if err != nil {
		return nil, convertErrors(err)
	}
	prog, err := analyze.Analyze(ast, analyze.Options{ConstraintAggregates: names})
	if err != nil {
		return nil, convertErrors(err)
	}
	fired, err := rewrite.Run(prog, cfg.disabled)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCompile, err)
	}
	return &Model{schema: schema, prog: prog, plan: ground.NewPlan(prog), ast: ast, aggs: cfg.aggs, rewrites: fired, enc: cfg.enc}, nil
}

// Clone returns a model of m's compiled program that is connected to no
// database (Connect it). The compiled program is not modified after
// Compile, so the two share it: a process that runs the same schema on
// several databases (one scheduler per test, say) compiles it once. The
// clone has its own connection, prepared statements, sizing hints and
// order of reads (ground.Plan.Learn).
func (m *Model) Clone() *Model {
	return &Model{schema: m.schema, prog: m.prog, plan: m.plan.Fresh(), ast: m.ast, aggs: m.aggs,
		enc: m.enc, rewrites: m.rewrites, smallSets: m.smallSets}
}

func isReservedFunc(name string) bool {
	switch name {
	case "count", "sum", "min", "max", "coalesce":
		return true
	}
	return false
}

func convertErrors(err error) error {
	var list sqlfront.ErrorList
	if errors.As(err, &list) {
		out := make(CompileErrors, 0, len(list))
		for _, e := range list {
			out = append(out, &CompileError{Line: e.Pos.Line, Col: e.Pos.Col, View: e.Stmt, Msg: e.Msg})
		}
		return out
	}
	var one *sqlfront.Error
	if errors.As(err, &one) {
		return CompileErrors{{Line: one.Pos.Line, Col: one.Pos.Col, View: one.Stmt, Msg: one.Msg}}
	}
	return fmt.Errorf("%w: %v", ErrCompile, err)
}

// ViewInfo describes what Weave does with one view.
type ViewInfo struct {
	Name string
	// Role is "pushdown", "hard", "soft" or "intermediate".
	Role string
	Line int
}

// Views lists the schema's views in order with their roles.
func (m *Model) Views() []ViewInfo {
	var out []ViewInfo
	for _, v := range m.prog.Views {
		out = append(out, ViewInfo{Name: v.Name, Role: v.Kind.Role(), Line: v.Pos.Line})
	}
	return out
}

// VariableColumns lists the decision columns as "table.column", sorted.
func (m *Model) VariableColumns() []string {
	var out []string
	for _, t := range m.prog.Tables {
		for _, c := range t.Columns {
			if c.Variable {
				out = append(out, t.Name+"."+c.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Rewrites lists the rewrite passes that changed the program, in order.
func (m *Model) Rewrites() []string { return append([]string(nil), m.rewrites...) }

// IR returns the compiled program in comprehension form, for debugging and
// golden tests.
func (m *Model) IR() string { return m.prog.String() }
