package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// An elision, "...", stands for text the docs leave out: within a line any
// text, and as a line of its own (alone, or as a comment "// ...", "-- ...",
// "# ...") any number of lines.

// elidedLine reports whether a line is an elision of its own.
func elidedLine(line string) bool {
	t := strings.TrimSpace(line)
	for _, p := range []string{"//", "--", "#"} {
		t = strings.TrimSpace(strings.TrimPrefix(t, p))
	}
	return t == "..." || t == "…"
}

// linePattern is a line's regular expression: the line with each "..."
// standing for any text.
// Patterns are cached: matching an excerpt with elisions tries each line
// at many places of a file.
func linePattern(line string) *regexp.Regexp {
	patternsMu.Lock()
	defer patternsMu.Unlock()
	if re, ok := patterns[line]; ok {
		return re
	}
	parts := strings.Split(line, "...")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	re := regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
	patterns[line] = re
	return re
}

var (
	patternsMu sync.Mutex
	patterns   = map[string]*regexp.Regexp{}
)

// matchLines reports whether got, from its first line, matches want in
// full (whole) or as a prefix.
func matchLines(want, got []string, whole bool) bool {
	if len(want) == 0 {
		return !whole || len(got) == 0
	}
	if elidedLine(want[0]) {
		for k := 0; k <= len(got); k++ {
			if matchLines(want[1:], got[k:], whole) {
				return true
			}
		}
		return false
	}
	if len(got) == 0 || !linePattern(want[0]).MatchString(got[0]) {
		return false
	}
	return matchLines(want[1:], got[1:], whole)
}

// MatchOutput compares a command's output with the lines the docs show,
// line by line, trailing spaces and blank lines at the end ignored, "..."
// standing for what the docs leave out. It returns an error showing both
// when they differ.
func MatchOutput(want []string, got string) error {
	w := trimLines(want, false)
	g := trimLines(strings.Split(got, "\n"), false)
	if matchLines(w, g, true) {
		return nil
	}
	return fmt.Errorf("the output differs from the docs\n--- docs:\n%s\n--- got:\n%s", strings.Join(w, "\n"), strings.Join(g, "\n"))
}

// CopyOf checks that excerpt is a copy of part of the file path (relative
// to root): its lines appear in the file one after the other, compared
// without indentation, blank lines ignored, "..." standing for what the
// excerpt leaves out. Docs that quote a tested file this way stay true:
// an edit of the file that the docs do not follow fails.
func CopyOf(root, path, excerpt string) error {
	data, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		return err
	}
	w := trimLines(strings.Split(excerpt, "\n"), true)
	g := trimLines(strings.Split(string(data), "\n"), true)
	if len(w) == 0 {
		return fmt.Errorf("the excerpt is empty")
	}
	for i := range g {
		if matchLines(w, g[i:], false) {
			return nil
		}
	}
	// Name the first line that is not in the file, the likeliest edit.
	for _, l := range w {
		if elidedLine(l) {
			continue
		}
		found := false
		for _, gl := range g {
			if linePattern(l).MatchString(gl) {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("not a copy of %s: %q is not in it", path, l)
		}
	}
	return fmt.Errorf("not a copy of %s: its lines are there, but not in this order", path)
}

// trimLines drops trailing spaces of each line and blank lines at the end;
// with indentation, also each line's leading spaces and every blank line.
func trimLines(lines []string, indentation bool) []string {
	var out []string
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if indentation {
			l = strings.TrimLeft(l, " \t")
			if l == "" {
				continue
			}
		}
		out = append(out, l)
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}
