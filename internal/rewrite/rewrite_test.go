package rewrite

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weavesql/weave/internal/analyze"
	"github.com/weavesql/weave/internal/ir"
	"github.com/weavesql/weave/internal/sqlfront"
)

var regenerate = flag.Bool("rewrite", false, "regenerate the expected IR in testdata")

func lower(t *testing.T, src string) *ir.Program {
	t.Helper()
	ast, err := sqlfront.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := analyze.Analyze(ast, analyze.Options{ConstraintAggregates: map[string]bool{"all_different": true}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGolden runs the pipeline on each testdata file: the header names the
// pass that must fire (and optionally one that must not), the expected IR
// follows "----".
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			src, want, ok := strings.Cut(string(raw), "\n----\n")
			if !ok {
				t.Fatal("missing ---- separator")
			}
			p := lower(t, src)
			var fired []string
			for _, ps := range Passes {
				if ps.Run(p) {
					fired = append(fired, ps.Name)
				}
				checkInvariants(t, ps.Name, p)
			}
			for _, line := range strings.Split(src, "\n") {
				if name, ok := strings.CutPrefix(line, "-- fires: "); ok && !slices.Contains(fired, name) {
					t.Errorf("pass %s did not fire (fired: %v)", name, fired)
				}
				if name, ok := strings.CutPrefix(line, "-- does not fire: "); ok && slices.Contains(fired, name) {
					t.Errorf("pass %s fired but must not", name)
				}
			}
			got := p.String()
			if *regenerate {
				if err := os.WriteFile(f, []byte(src+"\n----\n"+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("IR after passes:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// checkInvariants verifies, after a pass, that every column reference
// points at an existing source column and every expression is typed.
func checkInvariants(t *testing.T, pass string, p *ir.Program) {
	t.Helper()
	for _, v := range p.Views {
		var check func(q *ir.Query, outer []*ir.Query)
		check = func(q *ir.Query, outer []*ir.Query) {
			stack := append([]*ir.Query{q}, outer...)
			ir.InspectQuery(q, func(e ir.Expr) bool {
				if e.Type() == ir.Invalid {
					t.Errorf("after %s: view %s: untyped expression %s", pass, v.Name, ir.FormatExpr(e))
				}
				switch x := e.(type) {
				case *ir.ColRef:
					if x.Up >= len(stack) {
						t.Errorf("after %s: view %s: %s refers %d levels out", pass, v.Name, x.Name, x.Up)
						return true
					}
					src := stack[x.Up].From
					if x.Source >= len(src) || x.Col >= len(src[x.Source].Columns) {
						t.Errorf("after %s: view %s: %s points past its source", pass, v.Name, x.Name)
					}
				case *ir.In:
					if x.Sub != nil {
						check(x.Sub, stack)
						return false
					}
				case *ir.Exists:
					check(x.Sub, stack)
					return false
				case *ir.Scalar:
					check(x.Sub, stack)
					return false
				}
				return true
			})
		}
		check(v.Query, nil)
	}
}

func TestPassOrderIsChecked(t *testing.T) {
	swapped := []Pass{Passes[1], Passes[0], Passes[2]}
	if err := checkOrder(swapped); err == nil || !strings.Contains(err.Error(), "fold_constants must run before push_not") {
		t.Fatalf("swapping fold_constants and push_not: got %v", err)
	}
	if err := checkOrder(Passes); err != nil {
		t.Fatal(err)
	}
}

func TestRunRejectsUnknownPass(t *testing.T) {
	p := lower(t, "create table t (a integer primary key);")
	if _, err := Run(p, map[string]bool{"no_such_pass": true}); err == nil {
		t.Fatal("disabling an unknown pass must fail")
	}
	fired, err := Run(p, map[string]bool{"push_not": true})
	if err != nil || len(fired) != 0 {
		t.Fatalf("nothing to rewrite: fired %v, err %v", fired, err)
	}
}

func TestFoldConstantsThreeValued(t *testing.T) {
	cases := []struct{ in, want string }{
		{"1 + 2 * 3 = x", "(7 = t.x?)"},
		{"null + 1 = x", "null"},
		{"true and (x = 1)", "(t.x? = 1)"},
		{"false and (x = 1)", "false"},
		{"(x = 1) or true", "true"},
		{"not false", "true"},
		{"case when 1 = 2 then 5 else x end = 3", "(t.x? = 3)"},
		{"case when 1 = 1 then 5 else x end = 3", "false"},
		{"7 / 2 = 3 and 7 % 2 = 1 and -7 / 2 = -3", "true"},
	}
	for _, c := range cases {
		src := fmt.Sprintf(`create table u (y integer primary key);
-- @variable_columns (x)
create table t (id integer primary key, x integer references u(y));
-- @hard_constraint
create view v as select * from t where %s;`, c.in)
		p := lower(t, src)
		foldConstants(p)
		if got := ir.FormatExpr(p.View("v").Query.Check); got != c.want {
			t.Errorf("%s: got %s, want %s", c.in, got, c.want)
		}
	}
}
