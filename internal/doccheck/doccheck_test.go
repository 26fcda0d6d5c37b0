package doccheck

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeDoc writes a Markdown file into a fresh directory and returns the
// directory.
func writeDoc(t *testing.T, name, text string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBlocksCarryLineInfoAndDirective(t *testing.T) {
	dir := writeDoc(t, "a.md", "# A\n\n<!-- doc: compile x.sql -->\n```sql\nselect 1;\n```\n\n- item\n\n  ```sh\n  go test .\n  ```\n")
	blocks, err := Blocks(dir, "a.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 {
		t.Fatalf("got %d blocks: %+v", len(blocks), blocks)
	}
	b := blocks[0]
	if b.Line != 4 || b.Info != "sql" || b.Verb() != "compile" || b.Args() != "x.sql" || b.Text != "select 1;" || b.Where() != "a.md:5" {
		t.Errorf("first block: %+v (where %s)", b, b.Where())
	}
	if b := blocks[1]; b.Info != "sh" || b.Text != "go test ." || b.Directive != "" {
		t.Errorf("a block in a list item keeps its own text, without the item's indentation: %+v", b)
	}
	if _, err := Blocks(writeDoc(t, "b.md", "```sh\ngo test\n"), "b.md"); err == nil {
		t.Error("an unclosed block is not an error")
	}
}

func TestCommandsFollowTheShell(t *testing.T) {
	b := Block{File: "d.md", Line: 10, Info: "sh", Text: strings.Join([]string{
		"cd e2e && go build -o /tmp/wb ./cmd/weave-bench && /tmp/wb all --out /tmp/x   # a comment",
		"WEAVE_X=1 go test -run 'A|B' -v ./... | tail   # what follows a pipe is not one of ours",
		"output that is not a command",
		"go run ./cmd/demo \\",
		"  -nodes 5",
		"weave solve --schema POLICY.sql [--format text|json]",
	}, "\n")}
	cmds, err := Commands(b)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cmds {
		got = append(got, c.Where()+" "+c.Dir+" "+c.Program+" "+strings.Join(c.Args, " "))
	}
	want := []string{
		"d.md:11 .  cd e2e",
		"d.md:11 e2e  go build -o /tmp/wb ./cmd/weave-bench",
		"d.md:11 e2e e2e/cmd/weave-bench /tmp/wb all --out /tmp/x",
		"d.md:12 e2e  go test -run A|B -v ./...",
		"d.md:14 e2e e2e/cmd/demo demo -nodes 5",
		"d.md:16 e2e cmd/weave weave solve --schema POLICY.sql [--format text|json]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if cmds[3].Env["WEAVE_X"] != "1" {
		t.Errorf("env: %v", cmds[3].Env)
	}
	if f := Flags(cmds[5].Args[1:]); !reflect.DeepEqual(f, []string{"schema", "format"}) {
		t.Errorf("synopsis flags: %v", f)
	}
}

func TestConsoleBlocksKeepTheOutput(t *testing.T) {
	b := Block{File: "c.md", Line: 1, Info: "console", Text: "$ weave check --schema p.sql\nok\n\n$ weave help\nUsage:"}
	cmds, err := Commands(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 2 || !reflect.DeepEqual(cmds[0].Output, []string{"ok", ""}) || !reflect.DeepEqual(cmds[1].Output, []string{"Usage:"}) {
		t.Errorf("got %+v", cmds)
	}
}

func TestPlaceholders(t *testing.T) {
	for arg, want := range map[string]bool{
		"POLICY.sql": true, "DSN": true, "[--seed": true, "(--data": true, "text|json": true, "…": true,
		"examples/quickstart/policy.sql": false, "2s": false, "./...": false, "--timeout": false, "N": false,
	} {
		if got := Placeholder(arg); got != want {
			t.Errorf("Placeholder(%q) = %v, want %v", arg, got, want)
		}
	}
}

func TestOutputElisions(t *testing.T) {
	got := "status: OPTIMAL\nobjective: 7\nrow a\nrow b\nstats: 3 variables\n"
	for _, c := range []struct {
		want []string
		ok   bool
	}{
		{[]string{"status: OPTIMAL", "objective: 7", "row a", "row b", "stats: 3 variables"}, true},
		{[]string{"status: OPTIMAL", "...", "stats: ... variables"}, true},
		{[]string{"status: OPTIMAL", "objective: ..."}, false}, // the rest is not elided
		{[]string{"status: OPTIMAL", "objective: 8", "..."}, false},
		{[]string{"...", "row b", "..."}, true},
	} {
		if err := MatchOutput(c.want, got); (err == nil) != c.ok {
			t.Errorf("%q: %v, want match %v", c.want, err, c.ok)
		}
	}
}

func TestCopyOf(t *testing.T) {
	dir := writeDoc(t, "f.go", "package f\n\nfunc F() {\n\ta := 1\n\tb := 2\n\n\tc := a + b\n\t_ = c\n}\n")
	for excerpt, ok := range map[string]bool{
		"a := 1\nb := 2":               true,
		"func F() {\n// ...\n_ = c\n}": true,
		"a := 1\n\nb := 2":             true, // blank lines do not count
		"b := 2\na := 1":               false,
		"a := 1\nc := a + b":           false, // not one after the other
		"a := ...\n...\n_ = c":         true,
		"d := 4":                       false,
	} {
		if err := CopyOf(dir, "f.go", excerpt); (err == nil) != ok {
			t.Errorf("%q: %v, want copy %v", excerpt, err, ok)
		}
	}
}

func TestLinksAndAnchors(t *testing.T) {
	dir := writeDoc(t, "docs/p.md", "# The SQL's `weave` page\n\nSee [q](q.md#a-b), [top](#the-sqls-weave-page), [web](https://x.org) and `[no](link)`.\n\n```\n[not](a-link.md)\n```\n## A b\n## A b\n")
	links, err := Links(dir, "docs/p.md")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range links {
		got = append(got, l.Target+"#"+l.Anchor)
	}
	if want := []string{"docs/q.md#a-b", "docs/p.md#the-sqls-weave-page"}; !reflect.DeepEqual(got, want) {
		t.Errorf("links %v, want %v", got, want)
	}
	anchors, err := Anchors(dir, "docs/p.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"the-sqls-weave-page", "a-b", "a-b-1"} {
		if !anchors[a] {
			t.Errorf("no anchor %q in %v", a, anchors)
		}
	}
}

func TestFlagNamesAndTestFuncs(t *testing.T) {
	dir := writeDoc(t, "main.go", "package main\n\nimport \"flag\"\n\nvar fs = flag.NewFlagSet(\"x\", 0)\nvar out = fs.String(\"out\", \"\", \"\")\nvar n int\n\nfunc init() { fs.IntVar(&n, \"nodes\", 1, \"\") }\n\nfunc main() {}\n")
	if err := os.WriteFile(filepath.Join(dir, "main_test.go"), []byte("package main\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\nfunc BenchmarkB(b *testing.B) {}\nfunc helper() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	names, err := FlagNames(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(names, map[string]bool{"out": true, "nodes": true}) {
		t.Errorf("flags %v", names)
	}
	funcs, err := TestFuncs(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(funcs, []string{"TestA", "BenchmarkB"}) {
		t.Errorf("test funcs %v", funcs)
	}
	if !IsMainPackage(dir) || IsMainPackage(t.TempDir()) {
		t.Error("IsMainPackage is wrong")
	}
	missing, err := Unmentioned(dir, []string{"out", "nowhere"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(missing, []string{"nowhere"}) {
		t.Errorf("unmentioned %v", missing)
	}
}
