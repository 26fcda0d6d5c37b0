package weave_test

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weavesql/weave"
	"github.com/weavesql/weave/internal/doccheck"
)

// The documentation is held to the code here: every SQL and Go snippet of
// the README and docs/ is compiled or is a checked copy of a tested file,
// every command names packages, flags, tests and environment variables
// that exist, and every relative link leads somewhere. The weave and
// weave-scheduler commands are checked with their real flag sets by the
// tests of cmd/weave and cmd/weave-scheduler/app. A failure names the
// Markdown file and line of the snippet.
//
// How a block is checked is said by an HTML comment on the line before
// its fence:
//
//	<!-- doc: compile -->                  the SQL compiles (weave.Compile)
//	<!-- doc: compile FILE -->             it compiles after FILE's schema
//	<!-- doc: compile FILE fails: TEXT --> it is rejected with TEXT in the error
//	<!-- doc: copy FILE -->                it is a copy of part of FILE ("..." elides)
//	<!-- doc: output [exit=N] -->          cmd/weave runs its "$ weave" commands
//	                                       and compares their output

// docFiles returns the Markdown files the checks cover.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := doccheck.Files(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("found only %v", files)
	}
	return files
}

// docBlocks returns the code blocks of every documentation file.
func docBlocks(t *testing.T) []doccheck.Block {
	t.Helper()
	var all []doccheck.Block
	for _, f := range docFiles(t) {
		blocks, err := doccheck.Blocks(".", f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, blocks...)
	}
	return all
}

// ownedElsewhere are pages whose snippets this test does not require
// directives of: the evaluation report is rewritten from each full run of
// weave-bench, and its commands (checked below like every other) are
// what matters in it.
var ownedElsewhere = map[string]bool{"docs/evaluation.md": true}

func TestDocSQLBlocksCompile(t *testing.T) {
	checked := 0
	for _, b := range docBlocks(t) {
		if b.Info != "sql" || ownedElsewhere[b.File] {
			continue
		}
		checked++
		switch b.Verb() {
		case "copy":
			if err := doccheck.CopyOf(".", b.Args(), b.Text); err != nil {
				t.Errorf("%s: %v", b.Where(), err)
			}
		case "compile":
			checkCompiles(t, b)
		default:
			t.Errorf("%s: a sql block needs <!-- doc: compile [FILE] --> or <!-- doc: copy FILE --> on the line before it", b.Where())
		}
	}
	if checked < 8 {
		t.Errorf("checked only %d sql blocks", checked)
	}
}

// checkCompiles compiles a block after the schema file its directive
// names ("compile FILE"), and expects the error its directive quotes
// ("fails: TEXT") or none.
func checkCompiles(t *testing.T, b doccheck.Block) {
	t.Helper()
	args, want, fails := strings.Cut(b.Args(), "fails:")
	src := b.Text
	if file := strings.TrimSpace(args); file != "" {
		schema, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s: %v", b.Where(), err)
			return
		}
		src = string(schema) + "\n" + src
	}
	_, err := weave.Compile(src)
	switch {
	case !fails && err != nil:
		t.Errorf("%s: the SQL does not compile: %v", b.Where(), err)
	case fails && err == nil:
		t.Errorf("%s: the SQL compiles, but the docs say it is rejected with %q", b.Where(), strings.TrimSpace(want))
	case fails && !strings.Contains(err.Error(), strings.TrimSpace(want)):
		t.Errorf("%s: the error is %q, the docs say %q", b.Where(), err, strings.TrimSpace(want))
	}
}

func TestDocGoBlocksAreTestedCode(t *testing.T) {
	checked := 0
	for _, b := range docBlocks(t) {
		if b.Info != "go" || ownedElsewhere[b.File] {
			continue
		}
		checked++
		file := b.Args()
		if b.Verb() != "copy" || !strings.HasSuffix(file, "_test.go") {
			t.Errorf("%s: a go block needs <!-- doc: copy FILE_test.go --> on the line before it: a copy of code that go test compiles", b.Where())
			continue
		}
		if err := doccheck.CopyOf(".", file, b.Text); err != nil {
			t.Errorf("%s: %v", b.Where(), err)
		}
	}
	if checked < 3 {
		t.Errorf("checked only %d go blocks", checked)
	}
}

func TestDocCopiedBlocksAreCopies(t *testing.T) {
	checked := 0
	for _, b := range docBlocks(t) {
		if b.Verb() != "copy" || b.Info == "sql" || b.Info == "go" {
			continue // sql and go blocks: above
		}
		checked++
		if err := doccheck.CopyOf(".", b.Args(), b.Text); err != nil {
			t.Errorf("%s: %v", b.Where(), err)
		}
	}
	if checked < 2 {
		t.Errorf("checked only %d copied blocks", checked)
	}
}

// goTestValueFlags are the flags of go test (and of go build and the test
// binary) that take a value.
var goTestValueFlags = map[string]bool{
	"run": true, "bench": true, "benchtime": true, "count": true, "timeout": true, "o": true, "cpu": true,
	"tags": true, "p": true, "parallel": true, "fuzz": true, "fuzztime": true, "shuffle": true, "skip": true,
	"coverprofile": true, "covermode": true, "cpuprofile": true, "memprofile": true, "vet": true, "list": true,
}

// goTestBoolFlags are go test's flags without a value.
var goTestBoolFlags = map[string]bool{
	"v": true, "race": true, "short": true, "c": true, "benchmem": true, "cover": true, "json": true,
	"failfast": true, "trimpath": true, "x": true, "n": true, "a": true,
}

func TestDocCommandsNameWhatExists(t *testing.T) {
	var env []string
	envAt := map[string]string{}
	checked := 0
	for _, b := range docBlocks(t) {
		cmds, err := doccheck.Commands(b)
		if err != nil {
			t.Error(err)
			continue
		}
		for _, c := range cmds {
			checked++
			for k := range c.Env {
				if strings.HasPrefix(k, "WEAVE_") || strings.HasPrefix(k, "E2E_") {
					if envAt[k] == "" {
						env = append(env, k)
					}
					envAt[k] = c.Where()
				}
			}
			checkCommand(t, c)
		}
	}
	if checked < 20 {
		t.Errorf("checked only %d commands", checked)
	}
	missing, err := doccheck.Unmentioned(".", env)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range missing {
		t.Errorf("%s: no Go file reads the environment variable %s", envAt[k], k)
	}
}

// checkCommand checks one command of the docs against the repository:
// directories and packages exist, a program's flags are defined, go test's
// -run and -bench patterns select a test or benchmark.
func checkCommand(t *testing.T, c doccheck.Command) {
	t.Helper()
	isDir := func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && st.IsDir()
	}
	switch {
	case c.Program != "":
		if !isDir(c.Program) || !doccheck.IsMainPackage(c.Program) {
			t.Errorf("%s: %s is not a command of the repository", c.Where(), c.Program)
			return
		}
		switch c.Program {
		case "cmd/weave", "cmd/weave-scheduler":
			return // their own tests parse these with the real flag sets
		}
		defined, err := doccheck.FlagNames(c.Program)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range doccheck.Flags(c.Args[1:]) {
			if !defined[f] && f != "h" && f != "help" {
				t.Errorf("%s: %s has no flag -%s", c.Where(), c.Program, f)
			}
		}
		if c.Program == "e2e/cmd/weave-bench" {
			checkBenchCommand(t, c)
		}
	case c.Args[0] == "cd":
		if len(c.Args) != 2 || !isDir(c.Dir) {
			t.Errorf("%s: %q: no such directory", c.Where(), strings.Join(c.Args, " "))
		}
	case c.Args[0] == "go" && len(c.Args) > 1 && (c.Args[1] == "test" || c.Args[1] == "build" || c.Args[1] == "vet"):
		checkGoTest(t, c)
	}
}

// benchExperiment finds an experiment's name in weave-bench's list
// (e2e/internal/bench/bench.go, a module of its own that this one does not
// import).
var benchExperiment = regexp.MustCompile(`\{Name: "([a-z]+)"`)

// checkBenchCommand checks that a weave-bench command names an experiment
// that exists (or all, quick): a renamed experiment fails here.
func checkBenchCommand(t *testing.T, c doccheck.Command) {
	t.Helper()
	src, err := os.ReadFile("e2e/internal/bench/bench.go")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{"all": true, "quick": true}
	for _, m := range benchExperiment.FindAllStringSubmatch(string(src), -1) {
		known[m[1]] = true
	}
	if len(known) < 5 {
		t.Fatalf("found only %d weave-bench experiments in e2e/internal/bench/bench.go", len(known)-2)
	}
	for _, a := range c.Args[1:] {
		if strings.HasPrefix(a, "-") {
			break // flags follow the command
		}
		if !known[a] {
			t.Errorf("%s: weave-bench has no command %q", c.Where(), a)
		}
		return
	}
	t.Errorf("%s: a weave-bench command without a command name", c.Where())
}

// checkGoTest checks "go test" (and "go build", "go vet"): its flags are
// go test's or a package's own, its packages exist, and -run and -bench
// select at least one function of the packages' tests.
func checkGoTest(t *testing.T, c doccheck.Command) {
	t.Helper()
	var pkgs []string
	values := map[string]string{}
	args := c.Args[2:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-args" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			pkgs = append(pkgs, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case goTestValueFlags[name]:
			if !hasValue && i+1 < len(args) {
				i++
				value = args[i]
			}
			values[name] = value
		case goTestBoolFlags[name]:
		default:
			t.Errorf("%s: go %s has no flag -%s", c.Where(), c.Args[1], name)
		}
	}
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	_, hasRun := values["run"]
	_, hasBench := values["bench"]
	var funcs []string
	for _, p := range pkgs {
		deep := strings.HasSuffix(p, "/...")
		dir := path.Join(c.Dir, strings.TrimSuffix(p, "/..."))
		if p == "./..." {
			dir, deep = c.Dir, true
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			t.Errorf("%s: no package %s (in %s)", c.Where(), p, c.Dir)
			continue
		}
		if !hasRun && !hasBench {
			continue
		}
		fs, err := doccheck.TestFuncs(filepath.FromSlash(dir), deep)
		if err != nil {
			t.Fatal(err)
		}
		funcs = append(funcs, fs...)
	}
	selects := func(pattern, prefix string) bool {
		first, _, _ := strings.Cut(pattern, "/")
		re, err := regexp.Compile(first)
		if err != nil {
			t.Errorf("%s: -run/-bench %q: %v", c.Where(), pattern, err)
			return true
		}
		for _, f := range funcs {
			if strings.HasPrefix(f, prefix) && re.MatchString(f) {
				return true
			}
		}
		return false
	}
	if b, ok := values["bench"]; ok && !selects(b, "Benchmark") {
		t.Errorf("%s: -bench %q selects no benchmark of %v", c.Where(), b, pkgs)
	}
	// With -bench, -run names the tests to run beside the benchmarks;
	// '^$' or XXX, none.
	if r, ok := values["run"]; ok && values["bench"] == "" && !selects(r, "Test") && !selects(r, "Example") && !selects(r, "Fuzz") {
		t.Errorf("%s: -run %q selects no test of %v", c.Where(), r, pkgs)
	}
}

// pendingPages are pages that the README links to and that another line
// of work adds; once a page is in the tree its link is checked like any
// other.
var pendingPages = map[string]bool{}

func TestDocLinksLeadSomewhere(t *testing.T) {
	checked := 0
	anchors := map[string]map[string]bool{}
	for _, f := range docFiles(t) {
		links, err := doccheck.Links(".", f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links {
			checked++
			where := fmt.Sprintf("%s:%d", l.File, l.Line)
			if _, err := os.Stat(l.Target); err != nil {
				if !pendingPages[l.Target] {
					t.Errorf("%s: the link to %s leads nowhere", where, l.Target)
				}
				continue
			}
			if l.Anchor == "" || !strings.HasSuffix(l.Target, ".md") {
				continue
			}
			if anchors[l.Target] == nil {
				if anchors[l.Target], err = doccheck.Anchors(".", l.Target); err != nil {
					t.Fatal(err)
				}
			}
			if !anchors[l.Target][l.Anchor] {
				t.Errorf("%s: %s has no heading #%s", where, l.Target, l.Anchor)
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked only %d links", checked)
	}
}

// The README is a front door: its first lines are the two commands a
// fresh machine needs (CI runs the second), and the reference is in docs/.
func TestREADMEIsAFrontDoor(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 150 {
		t.Errorf("README.md has %d lines; the reference belongs in docs/", len(lines))
	}
	if len(lines) < 6 || lines[2] != "```sh" || lines[5] != "```" {
		t.Fatalf("README.md must open with a sh block of two commands (lines 3-6), got %q", lines[:min(6, len(lines))])
	}
	run, test := lines[3], lines[4]
	if !strings.HasPrefix(run, "go run ./cmd/weave solve ") {
		t.Errorf("README.md:4: the first command must run the main job with weave solve, got %q", run)
	}
	if !strings.HasPrefix(test, "go test ") {
		t.Errorf("README.md:5: the second command must run the tests, got %q", test)
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ci), "\n"+test+"\n") {
		t.Errorf(".ci/run does not run the README's test command %q", test)
	}
}
