package analyze

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/weavesql/weave/internal/ir"
)

// base is the schema most cases extend: three lines, so a case's own
// statements start on line 4.
const base = `create table node (name varchar(20) primary key, cpu integer not null, ready boolean not null);
-- @variable_columns (node_name)
create table pod (name varchar(20) primary key, node_name varchar(20) references node(name), cpu integer not null, prio integer not null);
`

type analyzeCase struct {
	name string
	src  string
	// err is the exact error text, one "line:col: stmt: msg" per line;
	// empty when the schema must compile.
	err string
	// roles maps view names to their kinds (pushdown, hard, soft,
	// intermediate); only the views named are checked.
	roles map[string]string
	// domains maps "table.column" to the reasons of its domain sources,
	// in order; only the columns named are checked.
	domains map[string][]string
	check   func(t *testing.T, p *ir.Program)
}

func runAnalyzeCases(t *testing.T, cases []analyzeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := analyzeSQL(t, tc.src)
			if tc.err != "" {
				if err == nil {
					t.Fatalf("compiled, want error:\n%s", tc.err)
				}
				if got := errorText(t, err); got != tc.err {
					t.Fatalf("errors:\n%s\nwant:\n%s", got, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error:\n%s", errorText(t, err))
			}
			for name, want := range tc.roles {
				v := p.View(name)
				if v == nil {
					t.Errorf("no view %s", name)
				} else if got := kindName(v.Kind); got != want {
					t.Errorf("view %s is %s, want %s (all: %s)", name, got, want, roles(p))
				}
			}
			for col, want := range tc.domains {
				if got := domainReasons(p, col); !reflect.DeepEqual(got, want) {
					t.Errorf("domain of %s: %q, want %q", col, got, want)
				}
			}
			if tc.check != nil {
				tc.check(t, p)
			}
		})
	}
}

func kindName(k ir.ViewKind) string {
	switch k {
	case ir.Pushdown:
		return "pushdown"
	case ir.Hard:
		return "hard"
	case ir.Soft:
		return "soft"
	}
	return "intermediate"
}

func domainReasons(p *ir.Program, col string) []string {
	tn, cn, _ := strings.Cut(col, ".")
	t := p.Table(tn)
	if t == nil || t.Column(cn) < 0 {
		return []string{"no column " + col}
	}
	var out []string
	for _, d := range t.Columns[t.Column(cn)].Domain {
		r := d.Reason
		if d.View != "" {
			r += " in " + d.View
		}
		out = append(out, r)
	}
	return out
}

// roles lists every view's kind, for the failure message of a case.
func roles(p *ir.Program) string {
	var out []string
	for _, v := range p.Views {
		out = append(out, fmt.Sprintf("%s=%s", v.Name, kindName(v.Kind)))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
