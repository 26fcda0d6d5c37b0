// Package doccheck reads the repository's Markdown so that tests can hold
// the documentation to the code: the fenced code blocks with the line they
// start on and the directive that says how to check them, the commands in
// them, and the relative links. The checks themselves live in the tests of
// the packages that own what the docs describe (the root package compiles
// SQL, cmd/weave runs its commands, cmd/weave-scheduler/app parses its
// flags), so that each check uses the real thing rather than a copy.
package doccheck

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Block is a fenced code block of a Markdown file.
type Block struct {
	File string // the Markdown file, relative to the repository root
	Line int    // the line of the opening fence, 1-based
	Info string // the fence's info string: "sql", "go", "sh", "console" or ""
	// Directive is the text of a "<!-- doc: ... -->" comment on the line
	// just before the fence, without the markers: how the block is checked
	// ("compile testdata/x.sql", "copy example_test.go", "output exit=2").
	Directive string
	Text      string // the block's lines, without the fences
}

// Where is "file:line" of the block's first line of content, for test
// failures that lead straight to the snippet.
func (b Block) Where() string { return fmt.Sprintf("%s:%d", b.File, b.Line+1) }

// Verb is the directive's first word ("compile", "copy", "output"), or "".
func (b Block) Verb() string {
	f := strings.Fields(b.Directive)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// Args is the directive's text after its verb.
func (b Block) Args() string {
	return strings.TrimSpace(strings.TrimPrefix(b.Directive, b.Verb()))
}

var directive = regexp.MustCompile(`^\s*<!--\s*doc:\s*(.*?)\s*-->\s*$`)

// Blocks returns the fenced code blocks of the Markdown file path (relative
// to root), in order. A fence is three or more backticks or tildes at the
// start of a line, possibly indented (a block inside a list item).
func Blocks(root, path string) ([]Block, error) {
	data, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		return nil, err
	}
	var (
		blocks []Block
		cur    *Block
		fence  string
		body   []string
		prev   string
		indent int
	)
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		if cur == nil {
			if f := fenceOf(trimmed); f != "" {
				cur = &Block{File: path, Line: n, Info: strings.TrimSpace(trimmed[len(f):])}
				if m := directive.FindStringSubmatch(prev); m != nil {
					cur.Directive = m[1]
				}
				fence, body, indent = f, nil, len(line)-len(trimmed)
			}
			prev = line
			continue
		}
		if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(trimmed[len(fence):]) == "" {
			cur.Text = strings.Join(body, "\n")
			blocks = append(blocks, *cur)
			cur = nil
			prev = line
			continue
		}
		// A block in a list item is indented with the item: drop that
		// indentation, keep the block's own.
		for i := 0; i < indent && strings.HasPrefix(line, " "); i++ {
			line = line[1:]
		}
		body = append(body, line)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: the code block is never closed", path, cur.Line)
	}
	return blocks, nil
}

// fenceOf returns the fence a line opens with ("```", "~~~~"), or "".
func fenceOf(line string) string {
	for _, c := range []string{"`", "~"} {
		if strings.HasPrefix(line, c+c+c) {
			n := len(line) - len(strings.TrimLeft(line, c))
			return line[:n]
		}
	}
	return ""
}

// Files returns the Markdown files the documentation checks cover,
// relative to root and sorted: the README, every page of docs/ and the
// READMEs of the examples and of package scheduler. docs/figures holds a
// generated report, not documentation written by hand, and is left out.
func Files(root string) ([]string, error) {
	var files []string
	for _, pattern := range []string{"README.md", "docs/*.md", "examples/README.md", "examples/*/README.md", "scheduler/README.md"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			return nil, err
		}
		for _, f := range m {
			rel, err := filepath.Rel(root, f)
			if err != nil {
				return nil, err
			}
			files = append(files, filepath.ToSlash(rel))
		}
	}
	sort.Strings(files)
	return files, nil
}

// Link is a relative link of a Markdown file: [text](target).
type Link struct {
	File   string // the Markdown file, relative to the repository root
	Line   int
	Target string // the link's path, relative to the repository root, without its #fragment
	Anchor string // the #fragment, without "#", or ""
}

var linkPattern = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Links returns the relative links of the Markdown file path (outside
// code blocks and inline code), resolved against its directory. Links
// with a scheme (https:) are left out: the checks run without network.
func Links(root, path string) ([]Link, error) {
	data, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		return nil, err
	}
	var links []Link
	inBlock := ""
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if f := fenceOf(trimmed); f != "" {
			switch {
			case inBlock == "":
				inBlock = f
			case strings.HasPrefix(trimmed, inBlock):
				inBlock = ""
			}
			continue
		}
		if inBlock != "" {
			continue
		}
		for _, m := range linkPattern.FindAllStringSubmatch(stripInlineCode(line), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			anchor := ""
			if j := strings.Index(target, "#"); j >= 0 {
				target, anchor = target[:j], target[j+1:]
			}
			if target == "" {
				target = path
			} else {
				target = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(path), target)))
			}
			links = append(links, Link{File: path, Line: i + 1, Target: target, Anchor: anchor})
		}
	}
	return links, nil
}

// stripInlineCode blanks out `inline code`, where brackets and parentheses
// are code, not links.
func stripInlineCode(line string) string {
	var b strings.Builder
	in := false
	for _, r := range line {
		if r == '`' {
			in = !in
			continue
		}
		if !in {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Anchors returns the anchors of the headings of the Markdown file path
// (relative to root) as GitHub derives them: lower case, punctuation other
// than "-" and "_" dropped, spaces turned into "-", repeats numbered.
func Anchors(root, path string) (map[string]bool, error) {
	blocks, err := Blocks(root, path)
	if err != nil {
		return nil, err
	}
	inBlock := map[int]bool{}
	for _, b := range blocks {
		for l := b.Line; l <= b.Line+strings.Count(b.Text, "\n")+2; l++ {
			inBlock[l] = true
		}
	}
	data, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		return nil, err
	}
	anchors := map[string]bool{}
	seen := map[string]int{}
	for i, line := range strings.Split(string(data), "\n") {
		if inBlock[i+1] || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		a := slug(title)
		if n := seen[a]; n > 0 {
			seen[a]++
			a = fmt.Sprintf("%s-%d", a, n)
		} else {
			seen[a] = 1
		}
		anchors[a] = true
	}
	return anchors, nil
}

// slug is GitHub's anchor of a heading.
func slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
