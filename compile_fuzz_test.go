package weave_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weavesql/weave"
)

// FuzzCompile checks that Compile never panics, that every error it returns
// is either CompileErrors with positioned entries sorted by position or
// wraps ErrCompile, and that a compiled model can be printed.
func FuzzCompile(f *testing.F) {
	paper, err := os.ReadFile("testdata/paper.sql")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(paper))
	golden, err := filepath.Glob("internal/ir/testdata/*.txt")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range golden {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		src, _, _ := strings.Cut(string(b), "\n----\n")
		f.Add(src)
	}
	const base = "create table node (name varchar(20) primary key, cpu integer not null, ready boolean not null);\n" +
		"-- @variable_columns (node_name nullable)\n" +
		"create table pod (name varchar(20) primary key, node_name varchar(20) references node(name), cpu integer not null);\n"
	for _, s := range []string{
		"create view v as select name from pod where sum(cpu) > 3;",
		"create view v as select sum(count(*)) as n from pod;",
		"create view v as select node_name, (select count(*) from node where node.cpu = pod.cpu) as c from pod group by node_name;",
		"create view v as select nam from node;\ncreate view w as select * from v;",
		"-- @hard_constraint\ncreate view v as select app, all_different(node_name) from pod group by app;",
		"-- @soft_constraint\ncreate view v as select count(*) from pod p join node n on p.node_name = n.name where n.name like 'a%';",
		"create view v as select cpu / 0 as x from (select cpu from node) d where d.cpu between 1 and 2;",
		"create view v as select case when ready then 1 end as x from node where exists (select 1 from pod where pod.node_name = node.name);",
		"-- @hard_constraint\ncreate view v as select * from pod where node_name not in (select name from node) and coalesce(node_name, 'x') <> 'y';",
	} {
		f.Add(base + s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		m, err := weave.Compile(src)
		if err == nil {
			if m == nil {
				t.Fatal("Compile returned neither a model nor an error")
			}
			_ = m.IR()
			_ = m.Views()
			_ = m.VariableColumns()
			return
		}
		if m != nil {
			t.Fatalf("Compile returned a model and an error: %v", err)
		}
		var list weave.CompileErrors
		if errors.As(err, &list) {
			if len(list) == 0 {
				t.Fatal("empty CompileErrors")
			}
			for i, e := range list {
				if e.Line < 1 || e.Col < 1 {
					t.Fatalf("error without a position: %v", e)
				}
				if e.Msg == "" {
					t.Fatalf("error without a message at %d:%d", e.Line, e.Col)
				}
				if i > 0 && (list[i-1].Line > e.Line || list[i-1].Line == e.Line && list[i-1].Col > e.Col) {
					t.Fatalf("errors not sorted: %v before %v", list[i-1], e)
				}
			}
			return
		}
		if !errors.Is(err, weave.ErrCompile) {
			t.Fatalf("error neither CompileErrors nor ErrCompile: %T %v", err, err)
		}
	})
}
