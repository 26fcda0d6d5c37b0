package sqlfront

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is the lexical class of a token.
type tokKind int

const (
	tEOF     tokKind = iota
	tIllegal         // malformed input; the scanner has already reported it
	tIdent           // unquoted identifier or keyword; val is lower-cased
	tQIdent          // "quoted" identifier; val is unescaped, case kept
	tString          // 'string'; val is unescaped
	tInt             // integer literal; val is the source text
	tFloat           // decimal literal; val is the source text
	tPunct           // operator or punctuation; val is the canonical text
	tAnnot           // -- @annotation comment; val is the text from '@' to end of line
)

// token is one lexical token.
type token struct {
	kind tokKind
	val  string
	pos  Pos
	end  int // offset just past the token's last byte
}

// scanner splits SQL source into tokens, skipping whitespace and comments.
type scanner struct {
	src         string
	off         int // current offset
	limit       int // scan stops here
	line        int // current line
	lineStart   int // offset of the first byte of the current line
	annotations bool
	errh        func(Pos, string)
}

func newScanner(src string, errh func(Pos, string)) *scanner {
	return &scanner{src: src, limit: len(src), line: 1, annotations: true, errh: errh}
}

func (s *scanner) posAt(off int) Pos {
	return Pos{Offset: off, Line: s.line, Col: off - s.lineStart + 1}
}

func (s *scanner) newline(at int) {
	s.line++
	s.lineStart = at + 1
}

func isIdentStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '$' }

// identRuneAt reports the length of an identifier character at off (0 if none).
func (s *scanner) identRuneAt(off int, start bool) int {
	c := s.src[off]
	if c < utf8.RuneSelf {
		if start && isIdentStart(c) || !start && isIdentPart(c) {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRuneInString(s.src[off:s.limit])
	if r == utf8.RuneError || !unicode.IsLetter(r) && (start || !unicode.IsDigit(r)) {
		return 0
	}
	return n
}

// skip skips whitespace and ordinary comments. It returns an annotation or
// illegal token if it meets one, else ok=false.
func (s *scanner) skip() (token, bool) {
	for s.off < s.limit {
		c := s.src[s.off]
		switch {
		case c == '\n':
			s.newline(s.off)
			s.off++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			s.off++
		case c == '-' && s.off+1 < s.limit && s.src[s.off+1] == '-':
			eol := strings.IndexByte(s.src[s.off:s.limit], '\n')
			if eol < 0 {
				eol = s.limit
			} else {
				eol += s.off
			}
			body := s.off + 2
			for body < eol && (s.src[body] == ' ' || s.src[body] == '\t') {
				body++
			}
			if s.annotations && body < eol && s.src[body] == '@' {
				end := eol
				for end > body && (s.src[end-1] == '\r' || s.src[end-1] == ' ' || s.src[end-1] == '\t') {
					end--
				}
				s.off = eol
				return token{kind: tAnnot, val: s.src[body:end], pos: s.posAt(body), end: end}, true
			}
			s.off = eol
		case c == '/' && s.off+1 < s.limit && s.src[s.off+1] == '*':
			start := s.posAt(s.off)
			i := strings.Index(s.src[s.off+2:s.limit], "*/")
			end := s.limit
			if i >= 0 {
				end = s.off + 2 + i + 2
			}
			for j := s.off; j < end; j++ {
				if s.src[j] == '\n' {
					s.newline(j)
				}
			}
			s.off = end
			if i < 0 {
				s.errh(start, "unterminated block comment")
				return token{kind: tIllegal, pos: start, end: end}, true
			}
		default:
			return token{}, false
		}
	}
	return token{}, false
}

// next returns the next token.
func (s *scanner) next() token {
	if t, ok := s.skip(); ok {
		return t
	}
	if s.off >= s.limit {
		return token{kind: tEOF, pos: s.posAt(s.off), end: s.off}
	}
	start := s.off
	pos := s.posAt(start)
	c := s.src[start]
	switch {
	case s.identRuneAt(start, true) > 0:
		for s.off < s.limit {
			n := s.identRuneAt(s.off, s.off == start)
			if n == 0 {
				break
			}
			s.off += n
		}
		return token{kind: tIdent, val: strings.ToLower(s.src[start:s.off]), pos: pos, end: s.off}
	case isDigit(c) || c == '.' && start+1 < s.limit && isDigit(s.src[start+1]):
		return s.number(pos)
	case c == '\'' || c == '"':
		return s.quoted(pos, c)
	}
	two := ""
	if start+1 < s.limit {
		two = s.src[start : start+2]
	}
	switch two {
	case "<=", ">=", "<>":
		s.off += 2
		return token{kind: tPunct, val: two, pos: pos, end: s.off}
	case "!=":
		s.off += 2
		return token{kind: tPunct, val: "<>", pos: pos, end: s.off}
	}
	switch c {
	case '(', ')', ',', ';', '.', '*', '+', '-', '/', '%', '=', '<', '>':
		s.off++
		return token{kind: tPunct, val: string(c), pos: pos, end: s.off}
	}
	r, n := utf8.DecodeRuneInString(s.src[start:s.limit])
	s.off += n
	if r == utf8.RuneError && n == 1 {
		s.errh(pos, "invalid UTF-8 byte in input")
	} else {
		s.errh(pos, "unexpected character "+quoteRune(r))
	}
	return token{kind: tIllegal, pos: pos, end: s.off}
}

func quoteRune(r rune) string {
	if r == '\'' {
		return `"'"`
	}
	return "'" + string(r) + "'"
}

func (s *scanner) number(pos Pos) token {
	start := s.off
	kind := tInt
	for s.off < s.limit && isDigit(s.src[s.off]) {
		s.off++
	}
	if s.off < s.limit && s.src[s.off] == '.' {
		kind = tFloat
		s.off++
		for s.off < s.limit && isDigit(s.src[s.off]) {
			s.off++
		}
	}
	bad := false
	if s.off < s.limit && (s.src[s.off] == 'e' || s.src[s.off] == 'E') {
		kind = tFloat
		s.off++
		if s.off < s.limit && (s.src[s.off] == '+' || s.src[s.off] == '-') {
			s.off++
		}
		if s.off >= s.limit || !isDigit(s.src[s.off]) {
			bad = true
		}
		for s.off < s.limit && isDigit(s.src[s.off]) {
			s.off++
		}
	}
	for s.off < s.limit && s.identRuneAt(s.off, false) > 0 {
		bad = true
		s.off += s.identRuneAt(s.off, false)
	}
	if bad {
		s.errh(pos, "invalid number "+quoteText(s.src[start:s.off]))
		return token{kind: tIllegal, pos: pos, end: s.off}
	}
	return token{kind: kind, val: s.src[start:s.off], pos: pos, end: s.off}
}

// quoted scans a 'string' or "identifier"; a doubled quote stands for one.
func (s *scanner) quoted(pos Pos, q byte) token {
	s.off++
	var b strings.Builder
	for s.off < s.limit {
		c := s.src[s.off]
		if c == q {
			if s.off+1 < s.limit && s.src[s.off+1] == q {
				b.WriteByte(q)
				s.off += 2
				continue
			}
			s.off++
			if q == '\'' {
				return token{kind: tString, val: b.String(), pos: pos, end: s.off}
			}
			if b.Len() == 0 {
				s.errh(pos, "empty quoted identifier")
				return token{kind: tIllegal, pos: pos, end: s.off}
			}
			return token{kind: tQIdent, val: b.String(), pos: pos, end: s.off}
		}
		if c == '\n' {
			s.newline(s.off)
		}
		b.WriteByte(c)
		s.off++
	}
	if q == '\'' {
		s.errh(pos, "unterminated string literal")
	} else {
		s.errh(pos, "unterminated quoted identifier")
	}
	return token{kind: tIllegal, pos: pos, end: s.off}
}

// quoteText quotes s for an error message, shortening long text.
func quoteText(s string) string {
	const max = 40
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return `"` + s + `"`
}
