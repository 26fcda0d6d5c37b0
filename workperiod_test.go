package weave_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The repository dates its measurements and names the commit they were
// taken at; it never names the numbered work period in which something
// was done, which means nothing to a reader and goes stale. The word is
// spelled in two halves here so that this file does not match itself.
const workPeriodWord = "sess" + "ion"

// workPeriod matches the word (or its plural) followed by a number,
// case-insensitively, with spaces, line breaks, "_", "-", "#" or a comment
// marker between them, so that a number wrapped onto the next comment
// line is caught too.
var workPeriod = regexp.MustCompile(`(?i)` + workPeriodWord + `s?[\s_#/-]*[0-9]`)

func TestWorkPeriodPatternMatchesEverySpelling(t *testing.T) {
	w := workPeriodWord
	up := strings.ToUpper(w)
	title := strings.ToUpper(w[:1]) + w[1:]
	cases := []struct {
		text string
		want bool
	}{
		{title + " 3", true},
		{w + "3", true},
		{up + "-12", true},
		{w + "s 5 and 6", true},
		{"the " + w + "-10 analysis", true},
		{"figures/quality-" + w + "11.png", true},
		{"(" + w + " #4)", true},
		{"before " + w + "\n// 4 it re-read", true},
		{"-- as in " + w + "_7", true},
		{w, false},
		{"a TLS " + w + " resumes", false},
		{w + "ID", false},
		{w + "s", false},
		{"commit 57ee6a3 on 2026-11-23", false},
	}
	for _, c := range cases {
		if got := workPeriod.MatchString(c.text); got != c.want {
			t.Errorf("%q: matched %v, want %v", c.text, got, c.want)
		}
	}
}

// TestNoWorkPeriodsInTheRepository fails when a tracked file's name, or
// the text of a tracked *.md, *.go or *.sql file, names a numbered work
// period; it lists every hit as path:line. It reads the files git tracks
// (git ls-files), or every file under the module root when git or the
// repository is not there (a module downloaded by go get).
func TestNoWorkPeriodsInTheRepository(t *testing.T) {
	files := repositoryFiles(t)
	if len(files) < 10 {
		t.Fatalf("found only %d files in the repository: %v", len(files), files)
	}
	var hits []string
	for _, f := range files {
		if workPeriod.MatchString(f) {
			hits = append(hits, fmt.Sprintf("%s: the file name", f))
		}
		switch filepath.Ext(f) {
		case ".md", ".go", ".sql":
		default:
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("reading %s: %v", f, err)
		}
		for _, loc := range workPeriod.FindAllIndex(data, -1) {
			line := 1 + bytes.Count(data[:loc[0]], []byte("\n"))
			hits = append(hits, fmt.Sprintf("%s:%d: %s", f, line, excerpt(data, loc[0])))
		}
	}
	if len(hits) > 0 {
		t.Errorf("%d mentions of a numbered work period (date a measurement and name its commit instead):\n%s",
			len(hits), strings.Join(hits, "\n"))
	}
}

// repositoryFiles lists the files of the repository, relative to this
// package's directory (the repository root): git's tracked files, or a
// walk of the directory without .git when git cannot list them.
func repositoryFiles(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err == nil && len(out) > 0 {
		var files []string
		for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
			// A file deleted in the work tree but not yet in the index
			// has no text to check.
			if _, err := os.Stat(f); err == nil {
				files = append(files, filepath.ToSlash(f))
			}
		}
		return files
	}
	t.Logf("git ls-files failed (%v): checking every file under the module root", err)
	var files []string
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			files = append(files, filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("listing the repository's files: %v", err)
	}
	return files
}

// excerpt returns the text around offset at, on its line, at most about
// 100 characters.
func excerpt(data []byte, at int) string {
	start := bytes.LastIndexByte(data[:at], '\n') + 1
	end := at + bytes.IndexByte(data[at:], '\n')
	if end < at {
		end = len(data)
	}
	if at-start > 40 {
		start = at - 40
	}
	if end-at > 60 {
		end = at + 60
	}
	return strings.ToValidUTF8(strings.TrimSpace(string(data[start:end])), "")
}
