package sqlfront

import (
	"fmt"
	"sort"
)

// Pos is a position in the schema source. Line and Col are 1-based; Col counts
// bytes from the start of the line. The zero Pos means "unknown".
type Pos struct {
	Offset int // byte offset from the start of the source, 0-based
	Line   int // 1-based line number
	Col    int // 1-based column, in bytes
}

// String returns the position as "line:col", or "-" for the zero Pos.
func (p Pos) String() string {
	if p.Line == 0 {
		return "-"
	}
	return fmt.Sprintf("%d:%d", p.Line, p.Col)
}

// IsValid reports whether p is a known position.
func (p Pos) IsValid() bool { return p.Line > 0 }

// Error is a single compile error in a schema.
type Error struct {
	Pos  Pos
	Stmt string // name of the table or view being parsed, if known
	Msg  string
}

// Error returns "line:col: msg", or "line:col: name: msg" when the statement
// name is known.
func (e *Error) Error() string {
	if e.Stmt != "" {
		return fmt.Sprintf("%s: %s: %s", e.Pos, e.Stmt, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Pos, e.Msg)
}

// ErrorList is a list of errors sorted by position. It implements error.
type ErrorList []*Error

// Len implements sort.Interface.
func (l ErrorList) Len() int { return len(l) }

// Swap implements sort.Interface.
func (l ErrorList) Swap(i, j int) { l[i], l[j] = l[j], l[i] }

// Less implements sort.Interface, ordering by source offset.
func (l ErrorList) Less(i, j int) bool {
	if l[i].Pos.Offset != l[j].Pos.Offset {
		return l[i].Pos.Offset < l[j].Pos.Offset
	}
	return l[i].Msg < l[j].Msg
}

// Sort sorts the list by position.
func (l ErrorList) Sort() { sort.Stable(l) }

// Error returns the first error, followed by "(and N more errors)" when
// there are more.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	return fmt.Sprintf("%s (and %d more errors)", l[0], len(l)-1)
}

// Err returns l as an error, or nil if l is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}
