package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"unicode/utf8"
)

// statement is one statement of a SQL script with the position of its
// first character (1-based line and column).
type statement struct {
	Text      string
	Line, Col int
}

// splitScript splits a SQL script into statements at semicolons that are
// not inside a single-quoted string, a double-quoted or backquoted
// identifier, a "--" line comment or a "/* */" block comment.
// Comments are kept in the statement text (SQLite ignores them);
// statements holding only whitespace and comments are dropped. An
// unterminated string, identifier or block comment is reported as an
// error with its starting position.
func splitScript(src string) ([]statement, error) {
	var out []statement
	line, col := 1, 1
	start, startLine, startCol := 0, 1, 1
	hasCode := false // the current statement has more than blanks and comments

	flush := func(end int) {
		if hasCode {
			text := strings.TrimSpace(src[start:end])
			out = append(out, statement{Text: text, Line: startLine, Col: startCol})
		}
		hasCode = false
	}
	// advance moves past src[i] and returns i+1, tracking line and column.
	advance := func(i int) int {
		if src[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
		return i + 1
	}
	// markStart records the position of the statement's first code byte.
	markStart := func(i int) {
		if !hasCode {
			start, startLine, startCol = i, line, col
			hasCode = true
		}
	}

	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			for i < len(src) && src[i] != '\n' {
				i = advance(i)
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			l, k := line, col
			i = advance(advance(i))
			for {
				if i >= len(src) {
					return nil, fmt.Errorf("%d:%d: unterminated block comment", l, k)
				}
				if src[i] == '*' && i+1 < len(src) && src[i+1] == '/' {
					i = advance(advance(i))
					break
				}
				i = advance(i)
			}
		case c == '\'' || c == '"' || c == '`':
			markStart(i)
			l, k := line, col
			i = advance(i)
			for {
				if i >= len(src) {
					what := "string"
					if c != '\'' {
						what = "quoted identifier"
					}
					return nil, fmt.Errorf("%d:%d: unterminated %s", l, k, what)
				}
				if src[i] == c {
					i = advance(i)
					// A doubled quote is an escaped quote ('it''s').
					if i < len(src) && src[i] == c {
						i = advance(i)
						continue
					}
					break
				}
				i = advance(i)
			}
		case c == ';':
			flush(i)
			i = advance(i)
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i = advance(i)
		default:
			markStart(i)
			i = advance(i)
		}
	}
	flush(len(src))
	return out, nil
}

// runScript executes a SQL script statement by statement. A failing
// statement is reported with its position in the script, the database's
// message and (shortened) text.
func runScript(ctx context.Context, db *sql.DB, name, src string) error {
	stmts, err := splitScript(src)
	if err != nil {
		return fmt.Errorf("%s:%w", name, err)
	}
	for _, st := range stmts {
		if _, err := db.ExecContext(ctx, st.Text); err != nil {
			return fmt.Errorf("%s:%d:%d: %v\n\tstatement: %s", name, st.Line, st.Col, err, abbreviate(st.Text, 200))
		}
	}
	return nil
}

// abbreviate puts s on one line and shortens it to at most n bytes.
func abbreviate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."

}
