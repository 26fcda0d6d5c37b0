package main

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/weavesql/weave/internal/doccheck"
)

// TestDocWeaveCommands holds every weave command of the README and docs/
// to the command itself: its subcommand exists and every flag it names is
// one of that subcommand's (the flag sets the command parses, flagSet). A
// command the reader can run as written — its policy, state and database
// files exist — is run in-process from the directory the docs run it in;
// it must exit 0, or the status its block's directive gives
// ("<!-- doc: output exit=2 -->"), and under "output" its output must be
// the one the docs show ("..." elides). A failure names the file and line.
func TestDocWeaveCommands(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files, err := doccheck.Files(root)
	if err != nil {
		t.Fatal(err)
	}
	checked, ran, compared := 0, 0, 0
	for _, f := range files {
		blocks, err := doccheck.Blocks(root, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			cmds, err := doccheck.Commands(b)
			if err != nil {
				t.Error(err)
				continue
			}
			if b.Verb() == "output" && len(cmds) == 0 {
				t.Errorf("%s: an output block needs \"$ weave ...\" commands", b.Where())
			}
			for _, c := range cmds {
				if c.Program != "cmd/weave" {
					continue
				}
				checked++
				if !runnable(t, c, root) {
					continue
				}
				ran++
				if b.Verb() == "output" {
					compared++
				}
				runDocCommand(t, c, root)
			}
		}
	}
	if checked < 10 || ran < 4 || compared < 2 {
		t.Errorf("checked %d weave commands, ran %d, compared the output of %d: the docs lost their examples?", checked, ran, compared)
	}
}

// runnable checks a command's subcommand and flags and reports whether
// the reader could run it as written.
func runnable(t *testing.T, c doccheck.Command, root string) bool {
	t.Helper()
	args := c.Args[1:]
	if len(args) == 0 || args[0] == "help" {
		return false
	}
	sub := args[0]
	switch sub {
	case "solve", "check", "explain":
	default:
		t.Errorf("%s: weave has no command %q", c.Where(), sub)
		return false
	}
	fs := flagSet(sub, &solveConfig{}, io.Discard)
	ok := true
	for _, name := range doccheck.Flags(args[1:]) {
		if fs.Lookup(name) == nil && name != "h" && name != "help" {
			t.Errorf("%s: weave %s has no flag --%s", c.Where(), sub, name)
			ok = false
		}
	}
	for i, a := range args {
		if doccheck.Placeholder(a) {
			return false
		}
		// The files a command reads must be there; a PostgreSQL URL
		// needs a server the docs cannot assume.
		switch strings.TrimLeft(a, "-") {
		case "schema", "data", "db":
			if i+1 >= len(args) {
				return false
			}
			if _, err := os.Stat(filepath.Join(root, c.Dir, args[i+1])); err != nil {
				return false
			}
		}
	}
	return ok
}

// runDocCommand runs a command in-process from its directory and checks
// its exit status and, in an output block, its output.
func runDocCommand(t *testing.T, c doccheck.Command, root string) {
	t.Helper()
	wantExit := 0
	for _, w := range strings.Fields(c.Block.Args()) {
		if v, ok := strings.CutPrefix(w, "exit="); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Errorf("%s: bad directive %q", c.Block.Where(), c.Block.Directive)
			}
			wantExit = n
		}
	}
	t.Run(strings.ReplaceAll(c.Where(), "/", "_"), func(t *testing.T) {
		t.Chdir(filepath.Join(root, c.Dir))
		code, stdout, stderr := runCmd(t, c.Args[1:]...)
		if code != wantExit {
			t.Errorf("%s: %s exits %d, want %d\nstdout:\n%s\nstderr:\n%s", c.Where(), strings.Join(c.Args, " "), code, wantExit, stdout, stderr)
		}
		if c.Block.Verb() == "output" {
			if err := doccheck.MatchOutput(c.Output, stdout+stderr); err != nil {
				t.Errorf("%s: %s: %v", c.Where(), strings.Join(c.Args, " "), err)
			}
		}
	})
}
