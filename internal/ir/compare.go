package ir

import "strings"

// CompareConst applies a comparison operator (= <> < <= > >=) to two
// non-NULL constants of the same type (int64, string or bool), as SQL does
// with byte-order strings and false < true. Both constant folding and
// grounding use it, so they cannot disagree.
func CompareConst(op string, a, b any) bool {
	c := 0
	switch x := a.(type) {
	case int64:
		y := b.(int64)
		switch {
		case x < y:
			c = -1
		case x > y:
			c = 1
		}
	case string:
		c = strings.Compare(x, b.(string))
	case bool:
		y := b.(bool)
		switch {
		case !x && y:
			c = -1
		case x && !y:
			c = 1
		}
	}
	switch op {
	case "=":
		return c == 0
	case "<>":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}
