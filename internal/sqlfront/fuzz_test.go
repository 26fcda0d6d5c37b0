package sqlfront

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, that every error it reports has a
// valid position, that statement texts are slices of the source, and that
// every expression it returns survives a Format round trip.
func FuzzParse(f *testing.F) {
	for _, s := range []string{paperPendingPod, paperNodePredicates, paperLoadBalance, paperNodeAffinity} {
		f.Add(s)
	}
	for _, s := range roundTripExprs {
		f.Add("create view v as select " + s + " from t;")
	}
	f.Add("create table t (a int primary key, b varchar(3) not null default 'x' references u(c), unique (a, b), constraint f foreign key (b) references u (c));\ncreate unique index i on t (a, b);")
	f.Add("-- @variable_columns (a nullable, \"B\")\ncreate table t (a int);\n-- @soft_constraint\ncreate view v (x) as select sum(a) x from t group by b having count(*) > 0;")
	f.Add("create view v as select a from t left join u on a = b; drop table x; /* unterminated")
	f.Add("create table t (a int, b int,);\n-- @hard_constraint\n;\n-- @foo\n create view v as select 'x")
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse(src)
		if s == nil {
			t.Fatal("Parse returned a nil schema")
		}
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is not a non-empty ErrorList: %v", err)
			}
			for i, e := range list {
				if e.Pos.Line < 1 || e.Pos.Col < 1 || e.Pos.Offset < 0 || e.Pos.Offset > len(src) {
					t.Fatalf("error with invalid position: %v (%+v)", e, e.Pos)
				}
				if i > 0 && list[i-1].Pos.Offset > e.Pos.Offset {
					t.Fatalf("errors not sorted: %v before %v", list[i-1], e)
				}
			}
		}
		for _, st := range s.Stmts {
			var text string
			switch st := st.(type) {
			case *CreateTable:
				text = st.Text
			case *CreateView:
				text = st.Text
			case *CreateIndex:
				text = st.Text
			}
			off := st.Position().Offset
			if !strings.HasPrefix(src[off:], text) || !strings.HasPrefix(strings.ToLower(text), "create") {
				t.Fatalf("statement text %q is not the source at offset %d", text, off)
			}
		}
		Inspect(s, func(n Node) bool {
			if e, ok := n.(Expr); ok {
				checkRoundTrip(t, e)
				return false // checkRoundTrip strips positions of the subtree
			}
			return true
		})
	})
}
