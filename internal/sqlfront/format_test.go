package sqlfront

import (
	"testing"
)

// roundTripExprs are expressions whose Format must reparse to the same AST.
var roundTripExprs = []string{
	"a",
	`"Mixed Case"."select"`,
	"t.c + 1 * 2",
	"(a + b) * c",
	"a - (b - c)",
	"a - b - c",
	"- - a",
	"-(-1)",
	"- -1",
	"-a * b",
	"a % -b",
	"not not a",
	"not (a and b) or c",
	"a or b and c",
	"(a or b) and c",
	"a = b = c",
	"a = (b = c)",
	"a is null is not null",
	"(a is null) = true",
	"a != b",
	"a <= b and c >= d and e < f and g > h",
	"a not in (1, 2, 'x') and b in (select c from d where d.e = t.f)",
	"a between b + 1 and (c and d)",
	"a not between 1 and 2 = false",
	"a like 'x%' or b not like '_'",
	"exists (select * from t) and not exists (select 1 from u join v on u.a = v.a)",
	"not exists (select 1 from t) = true",
	"(select max(x) from t group by y having count(*) > 1) + 1",
	"case when a then 1 when b then 2 else 3 end",
	"case a + 1 when 1 then 'one' end",
	"count(*) + count(distinct a) + coalesce(a, b) + now()",
	"'it''s' = ''",
	"1.5 + .5 + 2e10 + 007",
	"null is null",
	"x in (select distinct t.*, s.a as b from t, (select 1 as a from u) as s where t.a = s.a)",
	"((a))",
	"exists (select 1 from u left join v on u.a = v.a join w on w.b = u.b)",
	"exists (select 1 from u left outer join (select a from v) as s on u.a = s.a)",
}

func TestFormatRoundTrip(t *testing.T) {
	for _, src := range roundTripExprs {
		t.Run(src, func(t *testing.T) {
			e, err := ParseExpr(src)
			if err != nil {
				t.Fatalf("ParseExpr(%q): %v", src, err)
			}
			checkRoundTrip(t, e)
		})
	}
}

// checkRoundTrip asserts that Format(e) reparses to e, ignoring positions.
func checkRoundTrip(t interface {
	Helper()
	Errorf(string, ...any)
}, e Expr) {
	t.Helper()
	out := Format(e)
	back, err := ParseExpr(out)
	if err != nil {
		t.Errorf("Format gave %q, which does not parse: %v", out, err)
		return
	}
	want := sexpr(e)
	if !equalIgnoringPos(back, e) {
		t.Errorf("Format gave %q, which reparses differently:\n got %s\nwant %s", out, sexpr(back), want)
	}
}

func TestFormatOutput(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"keywords are lower-cased and spacing normalised", "A  AND(b OR C)", "a and (b or c)"},
		{"!= is printed as <>", "a!=b", "a <> b"},
		{"names that need quotes keep them", `"Pod"."order" = 'x''y'`, `"Pod"."order" = 'x''y'`},
		{"double negation does not turn into a comment", "- -1", "- -1"},
		{"subqueries print as SQL", "a in (select b from c inner join d on c.x=d.x where c.y>1)", "a in (select b from c join d on c.x = d.x where c.y > 1)"},
		{"not exists", "NOT EXISTS (SELECT * FROM t)", "not exists (select * from t)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := ParseExpr(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := Format(e); got != tt.want {
				t.Errorf("Format(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestFormatAddsParenthesesToBuiltTrees(t *testing.T) {
	a := &ColumnRef{Column: "a"}
	b := &ColumnRef{Column: "b"}
	c := &ColumnRef{Column: "c"}
	tests := []struct {
		name string
		e    Expr
		want string
	}{
		{"a sum under a product", &BinaryExpr{Op: "*", L: &BinaryExpr{Op: "+", L: a, R: b}, R: c}, "(a + b) * c"},
		{"a right-nested difference", &BinaryExpr{Op: "-", L: a, R: &BinaryExpr{Op: "-", L: b, R: c}}, "a - (b - c)"},
		{"an or under not", &UnaryExpr{Op: "not", X: &BinaryExpr{Op: "or", L: a, R: b}}, "not (a or b)"},
		{"a comparison under minus", &UnaryExpr{Op: "-", X: &BinaryExpr{Op: "=", L: a, R: b}}, "-(a = b)"},
		{"an and inside between bounds", &BetweenExpr{X: a, Lo: &BinaryExpr{Op: "and", L: a, R: b}, Hi: c}, "a between (a and b) and c"},
		{"an or tested for null", &IsNullExpr{X: &BinaryExpr{Op: "or", L: a, R: b}, Not: true}, "(a or b) is not null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Format(tt.e); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFormatRoundTripOfPaperViews(t *testing.T) {
	for _, src := range []string{paperNodePredicates, paperLoadBalance, paperNodeAffinity} {
		s := mustParse(t, src)
		Inspect(s, func(n Node) bool {
			if e, ok := n.(Expr); ok {
				checkRoundTrip(t, e)
			}
			return true
		})
	}
}

// FormatSelectRenaming replaces table references everywhere (joins,
// subqueries, operands of unary operators), keeping the name as the alias.
func TestFormatSelectRenaming(t *testing.T) {
	s, err := Parse(`create view v as
select * from pod join node as n on pod.node = n.name
where -(select count(*) from pod as q where q.node = pod.node) < 0
  and exists (select 1 from other where other.x = pod.x);`)
	if err != nil {
		t.Fatal(err)
	}
	got := FormatSelectRenaming(s.Stmts[0].(*CreateView).Query, func(r *TableRef) string {
		if r.Name == "pod" {
			return "temp.copy_of_pod"
		}
		return ""
	})
	want := "select * from temp.copy_of_pod as pod join node as n on pod.node = n.name " +
		"where -(select count(*) from temp.copy_of_pod as q where q.node = pod.node) < 0 " +
		"and exists (select 1 from other where other.x = pod.x)"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
