package app

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/weavesql/weave/internal/doccheck"
)

// flagDefined reports whether weave-scheduler has the flag name, asking
// ParseFlags itself: the flag set it builds is the only definition. Its
// complaints (a flag given without its value) are not the test's output.
func flagDefined(t *testing.T, name string) bool {
	t.Helper()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	stderr := os.Stderr
	os.Stderr = devnull
	_, err = ParseFlags([]string{"--" + name})
	os.Stderr = stderr
	return err == nil || !strings.Contains(err.Error(), "flag provided but not defined")
}

// inlineFlag is a flag in the prose's inline code: `--batch-size`,
// `--state-db 'postgres://...'`.
var inlineFlag = regexp.MustCompile("`--([a-z][a-z0-9-]*)")

// TestDocSchedulerFlags holds the docs to weave-scheduler's flags: every
// flag of a weave-scheduler command in the README and docs/, and every
// `--flag` in the prose of docs/scheduler.md, must be one ParseFlags
// defines. A failure names the file and line.
func TestDocSchedulerFlags(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	files, err := doccheck.Files(root)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	defined := func(name string) bool {
		if _, ok := known[name]; !ok {
			known[name] = flagDefined(t, name)
		}
		return known[name]
	}
	commands := 0
	for _, f := range files {
		blocks, err := doccheck.Blocks(root, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			cmds, err := doccheck.Commands(b)
			if err != nil {
				t.Error(err)
			}
			for _, c := range cmds {
				if c.Program != "cmd/weave-scheduler" {
					continue
				}
				commands++
				for _, name := range doccheck.Flags(c.Args[1:]) {
					if !defined(name) {
						t.Errorf("%s: weave-scheduler has no flag --%s", c.Where(), name)
					}
				}
			}
		}
	}
	if commands == 0 {
		t.Error("no weave-scheduler command in the docs")
	}
	page := "docs/scheduler.md"
	data, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	prose := 0
	inBlock := false
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			continue
		}
		for _, m := range inlineFlag.FindAllStringSubmatch(line, -1) {
			prose++
			if !defined(m[1]) {
				t.Errorf("%s:%d: weave-scheduler has no flag --%s", page, i+1, m[1])
			}
		}
	}
	if prose < 10 {
		t.Errorf("%s names only %d flags: where did the configuration go?", page, prose)
	}
	checkConfigTable(t, page, string(data))
	// The check must be able to fail.
	if defined("no-such-flag") || !defined("batch-size") || !defined("secure-port") {
		t.Errorf("flagDefined is wrong: %v", known)
	}
}

// checkConfigTable holds the configuration table of docs/scheduler.md
// (| `--flag` | `fileField` | default | what |) to Config: every file field
// it names is a field of the configuration file, and every field of the
// file is in the table.
func checkConfigTable(t *testing.T, page, text string) {
	t.Helper()
	fields := map[string]bool{}
	ct := reflect.TypeOf(Config{})
	for i := 0; i < ct.NumField(); i++ {
		if name, _, _ := strings.Cut(ct.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			fields[name] = false
		}
	}
	rows := 0
	for i, line := range strings.Split(text, "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `--") || len(cells) < 4 {
			continue
		}
		rows++
		for _, m := range regexp.MustCompile("`([a-zA-Z]+)`").FindAllStringSubmatch(cells[1], -1) {
			if _, ok := fields[m[1]]; !ok {
				t.Errorf("%s:%d: the configuration file has no field %s", page, i+1, m[1])
			}
			fields[m[1]] = true
		}
	}
	for f, seen := range fields {
		if !seen {
			t.Errorf("%s: the configuration table lacks the file field %s", page, f)
		}
	}
	if rows < 10 {
		t.Errorf("%s: found %d rows of the configuration table", page, rows)
	}
}
