package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplitScript(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []statement
		err  string
	}{
		{"empty", "", nil, ""},
		{"only comments", "-- a; b\n/* c; d */\n;;\n", nil, ""},
		{"two statements", "insert into t values (1);\ninsert into t values (2);",
			[]statement{{"insert into t values (1)", 1, 1}, {"insert into t values (2)", 2, 1}}, ""},
		{"no trailing semicolon", "  select 1", []statement{{"select 1", 1, 3}}, ""},
		{"semicolon in string", "insert into t values ('a;b');select 2;",
			[]statement{{"insert into t values ('a;b')", 1, 1}, {"select 2", 1, 30}}, ""},
		{"escaped quote", "insert into t values ('it''s; fine');",
			[]statement{{"insert into t values ('it''s; fine')", 1, 1}}, ""},
		{"comment markers in string", "insert into t values ('-- no', '/* no');",
			[]statement{{"insert into t values ('-- no', '/* no')", 1, 1}}, ""},
		{"quoted identifier", `insert into "we;ird" values (1); select 1`,
			[]statement{{`insert into "we;ird" values (1)`, 1, 1}, {"select 1", 1, 34}}, ""},
		{"backquoted identifier", "select `a;b` from t;", []statement{{"select `a;b` from t", 1, 1}}, ""},
		{"line comment with semicolon and quote", "insert into t -- it's; here\nvalues (1);",
			[]statement{{"insert into t -- it's; here\nvalues (1)", 1, 1}}, ""},
		{"block comment", "/* x; 'y */ insert /* ; */ into t values (1);",
			[]statement{{"insert /* ; */ into t values (1)", 1, 13}}, ""},
		{"leading comment sets no position", "-- header\n\n   insert into t values (1);",
			[]statement{{"insert into t values (1)", 3, 4}}, ""},
		{"multi-line string", "insert into t values ('a\n;b');\nselect 1;",
			[]statement{{"insert into t values ('a\n;b')", 1, 1}, {"select 1", 3, 1}}, ""},
		{"unterminated string", "select 1;\nselect 'abc;", nil, "2:8: unterminated string"},
		{"unterminated identifier", `select "abc`, nil, "1:8: unterminated quoted identifier"},
		{"unterminated comment", "select 1 /* never", nil, "1:10: unterminated block comment"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := splitScript(tc.src)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestAbbreviate(t *testing.T) {
	if got := abbreviate("insert\n  into t", 100); got != "insert into t" {
		t.Errorf("got %q", got)
	}
	if got := abbreviate("ééééé", 3); got != "é..." {
		t.Errorf("got %q, want a cut on a rune boundary", got)
	}
}
