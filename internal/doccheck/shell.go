package doccheck

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// Command is one command of a shell block: a line, or a part of a line
// between "&&", ";" or "|".
type Command struct {
	Block Block
	Line  int    // its line in the Markdown file
	Dir   string // the working directory it runs in, relative to the repository root ("." at first; cd changes it)
	Env   map[string]string
	Args  []string // argv, quotes removed
	// Program is the repository package the command runs, as a directory
	// relative to the repository root ("cmd/weave"), when it runs one:
	// "go run ./cmd/weave ...", "weave ...", or a binary that an earlier
	// "go build -o" of the block made. Then Args[0] is the program's name
	// and Args[1:] its arguments. "" otherwise.
	Program string
	// Output holds the lines printed after a "$ " command in a console
	// block, up to the next "$ " line.
	Output []string
}

// Where is "file:line" of the command.
func (c Command) Where() string { return fmt.Sprintf("%s:%d", c.Block.File, c.Line) }

// Programs maps the names the docs use for the repository's commands to
// their packages.
var Programs = map[string]string{
	"weave":           "cmd/weave",
	"weave-scheduler": "cmd/weave-scheduler",
	"weave-bench":     "e2e/cmd/weave-bench",
}

// shellWords are the programs that mark a line of an untagged block as a
// command (other lines are output or text).
var shellWords = map[string]bool{
	"go": true, "cd": true, "weave": true, "weave-scheduler": true, "weave-bench": true,
	"kubectl": true, "psql": true, "sqlite3": true, "git": true, "createdb": true,
}

var envAssign = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)

// Commands returns the commands of a shell block ("sh", "console", "bash",
// "shell" or untagged). In a block with "$ " prompts the prompted lines
// are the commands and the others their output; otherwise a line is a
// command when its first word (after VAR=value assignments) is one of the
// programs the docs run, or a binary the block built.
func Commands(b Block) ([]Command, error) {
	switch b.Info {
	case "", "sh", "console", "bash", "shell", "text":
	default:
		return nil, nil
	}
	lines := strings.Split(b.Text, "\n")
	prompted := false
	for _, l := range lines {
		if strings.HasPrefix(l, "$ ") {
			prompted = true
		}
	}
	var cmds []Command
	dir := "."
	built := map[string]string{} // go build -o NAME PKG: NAME -> package
	var last *Command
	for i := 0; i < len(lines); i++ {
		line, n := lines[i], b.Line+1+i
		if prompted {
			if !strings.HasPrefix(line, "$ ") {
				if last != nil {
					last.Output = append(last.Output, line)
				}
				continue
			}
			line = strings.TrimPrefix(line, "$ ")
		}
		// A trailing backslash continues the command on the next line.
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + strings.TrimSpace(lines[i])
		}
		// A synopsis ("[--format text|json]", "(--data F | --db DSN)")
		// is one command: its bars are alternatives, not pipes.
		synopsis := strings.Contains(line, "[-") || strings.Contains(line, "(-")
		parts, err := split(line, !synopsis)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", b.File, n, err)
		}
		for _, words := range parts {
			env := map[string]string{}
			for len(words) > 0 && envAssign.MatchString(words[0]) {
				k, v, _ := strings.Cut(words[0], "=")
				env[k] = v
				words = words[1:]
			}
			if len(words) == 0 {
				continue
			}
			if !prompted && !shellWords[words[0]] && built[words[0]] == "" {
				break // output or prose, not a command
			}
			c := Command{Block: b, Line: n, Dir: dir, Env: env, Args: words}
			switch {
			case words[0] == "cd" && len(words) == 2:
				dir = path.Clean(path.Join(dir, words[1]))
			case words[0] == "go" && len(words) > 2 && words[1] == "run":
				pkg := path.Clean(path.Join(dir, words[2]))
				c.Program, c.Args = pkg, append([]string{path.Base(pkg)}, words[3:]...)
			case words[0] == "go" && len(words) > 1 && words[1] == "build":
				if o, pkg := buildOutput(words[2:]); o != "" {
					built[o] = path.Clean(path.Join(dir, pkg))
				}
			case built[words[0]] != "":
				c.Program = built[words[0]]
			case Programs[words[0]] != "":
				c.Program = Programs[words[0]]
			}
			cmds = append(cmds, c)
			last = &cmds[len(cmds)-1]
		}
	}
	return cmds, nil
}

// buildOutput returns the -o file and the package of "go build" arguments.
func buildOutput(args []string) (out, pkg string) {
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-o" && i+1 < len(args):
			out = args[i+1]
			i++
		case !strings.HasPrefix(args[i], "-"):
			pkg = args[i]
		}
	}
	if pkg == "" {
		pkg = "."
	}
	return out, pkg
}

// split cuts a shell line into commands at "&&", "||", ";" and, with
// pipes, "|" (outside quotes), drops a "# comment" and removes quotes. It
// knows no more shell than the docs use: no variables, no substitutions.
func split(line string, pipes bool) ([][]string, error) {
	var (
		cmds  [][]string
		words []string
		word  strings.Builder
		inW   bool
		quote rune
	)
	endWord := func() {
		if inW {
			words = append(words, word.String())
			word.Reset()
			inW = false
		}
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				word.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inW = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			word.WriteRune(rs[i])
			inW = true
		case r == ' ' || r == '\t':
			endWord()
		case r == '#' && !inW:
			endCmd()
			return cmds, nil
		case r == ';' || r == '&' || r == '|' && (pipes || i+1 < len(rs) && rs[i+1] == '|'):
			if r != ';' && i+1 < len(rs) && rs[i+1] == r {
				i++
			}
			endCmd()
		default:
			word.WriteRune(r)
			inW = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote in %q", line)
	}
	endCmd()
	return cmds, nil
}

// Placeholder reports whether an argument stands for something the reader
// supplies (POLICY.sql, DSN, DIR) or is synopsis syntax ("[--seed N]",
// "(--data STATE.sql | --db DSN)", "text|json"), so that the command is a
// synopsis to check, not a command to run.
func Placeholder(arg string) bool {
	if strings.ContainsAny(arg, "[]()|…") || strings.Contains(arg, "...") && !strings.HasSuffix(arg, "/...") {
		return true
	}
	name := strings.TrimLeft(arg, "-")
	if _, v, ok := strings.Cut(name, "="); ok {
		name = v
	}
	base := strings.TrimSuffix(path.Base(name), path.Ext(name))
	return len(base) > 1 && strings.ToUpper(base) == base && strings.ToLower(base) != base
}

// Flags returns the flag names an argument list uses ("-v", "--out=x" and
// "--quick" give "v", "out", "quick"; a synopsis's "[--seed" and "(--data"
// give "seed" and "data"); "--" ends them.
func Flags(args []string) []string {
	var names []string
	for _, a := range args {
		if a == "--" {
			break
		}
		a = strings.TrimRight(strings.TrimLeft(a, "[("), "])")
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name := strings.TrimLeft(a, "-")
		name, _, _ = strings.Cut(name, "=")
		if name != "" && !strings.ContainsAny(name, " /") {
			names = append(names, name)
		}
	}
	return names
}
