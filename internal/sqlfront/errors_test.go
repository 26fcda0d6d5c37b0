package sqlfront

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // the single expected error, as printed
	}{
		{"a right join is rejected at the right keyword",
			"create view v as select a from t\n  right join u on t.a = u.a;",
			"2:3: v: only inner and left joins are supported"},
		{"a cross join is rejected at the cross keyword",
			"create view v as select a from t cross join u;",
			"1:34: v: only inner and left joins are supported"},
		{"a left join needs on",
			"create view v as select a from t left outer join u;",
			"1:51: v: expected \"on\" after joined table, found \";\""},
		{"join using is rejected at using",
			"create view v as select a from t join u using (a);",
			"1:41: v: join ... using is not supported; write the join condition with on"},
		{"offset is not supported in views",
			"create view v as\nselect a from t\norder by a limit 2 offset 1;",
			"3:20: v: offset is not supported here: a view may end with order by, then limit"},
		{"limit comes after order by",
			"create view v as select a from t limit 1 order by a;",
			"1:42: v: order is not supported here: a view may end with order by, then limit"},
		{"limit takes a whole number",
			"create view v as select a from t limit a;",
			"1:40: v: expected a whole number after \"limit\", found \"a\""},
		{"union is not supported in a subquery",
			"create view v as select a from t where a in (select b from u union select c from w);",
			"1:62: v: union is supported only between the selects of a view, not in a subquery"},
		{"intersect is not supported in views",
			"create view v as select a from t intersect select b from u;",
			"1:34: v: intersect is not supported in views"},
		{"union needs a select after it",
			"create view v as select a from t union all from u;",
			"1:44: v: expected \"select\" after \"union\", found keyword \"from\""},
		{"with is not supported in views",
			"create view v as with x as (select 1 from t) select * from x;",
			"1:18: v: with (common table expressions) is not supported in views"},
		{"order by inside a subquery is reported too",
			"create view v as select a from t where a in (select b from u order by b);",
			"1:62: v: order by is supported only at the end of a view's query, not in a subquery"},
		{"limit inside a derived table is reported",
			"create view v as select x.b from (select b from u limit 3) x;",
			"1:51: v: limit is supported only at the end of a view's query, not in a subquery"},
		{"drop is an unsupported statement",
			"\n  drop table t;",
			`2:3: unsupported statement "drop": a schema may contain only create table, create index and create view statements`},
		{"create or replace is an unsupported statement",
			"create or replace view v as select 1 from t;",
			`1:1: unsupported statement "create or ...": a schema may contain only create table, create index and create view statements`},
		{"an unterminated string is reported at its opening quote",
			"create table t (a int, b varchar(10) default 'x);\ncreate view v as select 1 from t;",
			"1:46: t: unterminated string literal"},
		{"an unterminated block comment is reported at its start",
			"create view v as select a from t /* oops",
			"1:34: v: unterminated block comment"},
		{"an unterminated quoted identifier is reported at its quote",
			"create view v as select a from \"t;",
			"1:32: v: unterminated quoted identifier"},
		{"a stray character is reported where it is",
			"create view v as\n  select a from t where a # 1;",
			"2:27: v: unexpected character '#'"},
		{"a malformed number is one error",
			"create view v as select a from t where a = 1.5e;",
			`1:44: v: invalid number "1.5e"`},
		{"an integer literal that does not fit in 64 bits",
			"create view v as select a from t where a = 99999999999999999999;",
			"1:44: v: integer literal 99999999999999999999 is out of range"},
		{"an unsupported column type lists the supported ones",
			"create table t (a float);",
			`1:19: t: unsupported column type "float" (supported: int, integer, bigint, smallint, boolean, bool, varchar(n), char(n), text)`},
		{"a trailing comma in a column list",
			"create table t (a int, b int,);",
			`1:30: t: expected column name, found ")"`},
		{"a missing closing parenthesis of a view column list",
			"create view v (a, b as select a, b from t;",
			`1:21: v: expected "," or ")" in view column list, found keyword "as"`},
		{"a missing closing parenthesis of an expression",
			"create view v as select a from t where (a = 1;",
			`1:46: v: expected ")" after parenthesised expression, found ";"`},
		{"a missing from",
			"create view v as select a, b;",
			`1:29: v: expected "," or "from" after select item, found ";"`},
		{"an empty select list",
			"create view v as select from t;",
			`1:25: v: expected expression, found keyword "from"`},
		{"a reserved word used as a column name suggests quoting",
			"create table t (order int);",
			`1:17: t: expected column name, found keyword "order" (quote it as "order" to use it as a name)`},
		{"a derived table without an alias",
			"create view v as select a from (select b from u);",
			`1:49: v: expected alias for subquery in from clause, found ";"`},
		{"a case without end",
			"create view v as select a from t where case when a then 1;",
			`1:58: v: expected "when", "else" or "end" in case expression, found ";"`},
		{"not followed by something other than in, between or like",
			"create view v as select a from t where a not b;",
			`1:46: v: expected "in", "between" or "like" after "not", found "b"`},
		{"an unparenthesised subquery",
			"create view v as select a from t where select 1;",
			"1:40: v: a subquery must be enclosed in parentheses"},
		{"a statement without its semicolon at the end of input",
			"create table t (a int)\n",
			`1:23: t: expected ";" at end of create table, found end of input`},
		{"two primary keys",
			"create table t (a int primary key, b int, primary key (a, b));",
			"1:43: t: multiple primary keys for table t are not allowed"},
		{"a foreign key with mismatched column counts",
			"create table t (a int, foreign key (a) references u (x, y));",
			"1:53: t: foreign key has 1 column but references 2"},
		{"check constraints",
			"create table t (a int check (a > 0));",
			"1:23: t: check constraints are not supported"},
		{"a hard constraint annotation on a table",
			"-- @hard_constraint\ncreate table t (a int);",
			"1:4: t: @hard_constraint applies only to create view, not create table"},
		{"variable columns on a view",
			"-- @variable_columns (a)\ncreate view v as select a from t;",
			"1:4: v: @variable_columns applies only to create table, not create view"},
		{"an annotation on an index",
			"-- @soft_constraint\ncreate index i on t (a);",
			"1:4: i: annotation @soft_constraint cannot be applied to create index"},
		{"an unknown annotation",
			"create table t (a int);\n  --   @foo bar\ncreate table u (a int);",
			"2:8: unknown annotation @foo (known: @variable_columns, @hard_constraint, @soft_constraint)"},
		{"an annotation at the end of the file",
			"create table t (a int);\n-- @hard_constraint\n\n-- the end\n",
			"2:4: annotation @hard_constraint is not followed by a statement"},
		{"an annotation followed by an empty statement",
			"-- @hard_constraint\n;\ncreate view v as select 1 from t;",
			"1:4: annotation @hard_constraint is not followed by a statement"},
		{"an annotation inside a statement",
			"create table t (\n -- @variable_columns (a)\n a int);",
			"2:5: t: annotation @variable_columns inside a statement; annotations go on the lines immediately before create table or create view"},
		{"variable columns without a list",
			"-- @variable_columns\ncreate table t (a int);",
			"1:4: @variable_columns needs a column list, as in -- @variable_columns (node_name)"},
		{"a trailing comma in an annotation list",
			"-- @variable_columns (a b, )\ncreate table t (a int);",
			`1:28: expected column name in @variable_columns, found ")"`},
		{"an unclosed annotation list",
			"-- @variable_columns (a\ncreate table t (a int);",
			`1:24: expected "," or ")" in @variable_columns, found end of line`},
		{"arguments to hard_constraint",
			"-- @hard_constraint (x)\ncreate view v as select a from t;",
			"1:21: @hard_constraint takes no arguments"},
		{"a duplicate annotation",
			"-- @hard_constraint\n-- @hard_constraint\ncreate view v as select 1 from t;",
			"2:4: v: duplicate annotation @hard_constraint"},
		{"hard and soft on one view",
			"-- @hard_constraint\n-- @soft_constraint\ncreate view v as select 1 from t;",
			"2:4: v: a view cannot be both @hard_constraint and @soft_constraint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.src)
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("got error %v (%T), want ErrorList", err, err)
			}
			var got []string
			for _, e := range list {
				got = append(got, e.Error())
			}
			if want := []string{tt.want}; !reflect.DeepEqual(got, want) {
				t.Errorf("errors:\n got %q\nwant %q", got, want)
			}
		})
	}
}

func TestParseReportsEveryBrokenStatement(t *testing.T) {
	src := `create table a (x int, y float);
create table ok1 (x int);
drop table a;
create view v1 as select x from a full join ok1 on a.x = ok1.x;
-- @hard_constraint
create view ok2 as select * from ok1;
create view v2 as select x from a where x in (1, 2;
create view v3 as select x from a offset 2
create view ok3 as select 'unterminated from ok1;
`
	s, err := Parse(src)
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("got %v, want an ErrorList", err)
	}
	var got []string
	for _, e := range list {
		got = append(got, e.Error())
	}
	want := []string{
		`1:26: a: unsupported column type "float" (supported: int, integer, bigint, smallint, boolean, bool, varchar(n), char(n), text)`,
		`3:1: unsupported statement "drop": a schema may contain only create table, create index and create view statements`,
		`4:35: v1: only inner and left joins are supported`,
		`7:51: v2: expected "," or ")" in "in" list, found ";"`,
		`8:35: v3: offset is not supported in views`,
		`9:27: ok3: unterminated string literal`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n got %q\nwant %q", got, want)
	}
	// The statements without errors are still returned, with their annotations.
	var names []string
	for _, st := range s.Stmts {
		switch st := st.(type) {
		case *CreateTable:
			names = append(names, st.Name)
		case *CreateView:
			names = append(names, st.Name+annotationNames(st.Annotations))
		}
	}
	if want := []string{"ok1", "ok2 @hard_constraint"}; !reflect.DeepEqual(names, want) {
		t.Errorf("parsed statements: got %q, want %q", names, want)
	}
	wantMsg := want[0] + " (and 5 more errors)"
	if err.Error() != wantMsg {
		t.Errorf("Error():\n got %q\nwant %q", err.Error(), wantMsg)
	}
}

func TestErrorListIsSortedByPosition(t *testing.T) {
	// The annotation error is found after the statements are parsed but
	// belongs before them.
	src := "create table t (a int);\n-- @hard_constraint\ncreate table u (a float);"
	_, err := Parse(src)
	list, _ := err.(ErrorList)
	if len(list) != 2 {
		t.Fatalf("got %d errors (%v), want 2", len(list), err)
	}
	if !strings.Contains(list[0].Msg, "@hard_constraint") || list[0].Pos.Line != 2 || list[1].Pos.Line != 3 {
		t.Errorf("errors out of order: %v, %v", list[0], list[1])
	}
}

func TestErrorFormatting(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"an error without a statement name", &Error{Pos: Pos{10, 2, 3}, Msg: "boom"}, "2:3: boom"},
		{"an error in a view names the view", &Error{Pos: Pos{10, 2, 3}, Stmt: "v", Msg: "boom"}, "2:3: v: boom"},
		{"a list of one prints just that error", ErrorList{{Pos: Pos{0, 1, 1}, Msg: "a"}}, "1:1: a"},
		{"a longer list counts the rest", ErrorList{{Pos: Pos{0, 1, 1}, Msg: "a"}, {Pos: Pos{5, 1, 6}, Msg: "b"}, {Pos: Pos{9, 2, 1}, Msg: "c"}}, "1:1: a (and 2 more errors)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if err := (ErrorList{}).Err(); err != nil {
		t.Errorf("empty ErrorList.Err() = %v, want nil", err)
	}
}
