package rewrite

import "github.com/weavesql/weave/internal/ir"

// foldConstants evaluates operations whose operands are literals and
// simplifies Boolean connectives with a literal side, under SQL's
// three-valued logic:
//
//	1 + 2 * 3            →  7
//	x and true           →  x
//	x or true            →  true
//	not false            →  true
//	case when false then a else b end  →  b
//
// Pushed-down views are left alone: the database evaluates them.
func foldConstants(p *ir.Program) bool {
	return eachQuery(p, func(v *ir.View, q *ir.Query) bool {
		if v.Kind == ir.Pushdown {
			return false
		}
		changed := false
		ir.RewriteQuery(q, func(e ir.Expr) ir.Expr {
			if r := fold(e); r != e {
				changed = true
				return r
			}
			return e
		})
		return changed
	})
}

func constOf(e ir.Expr) (any, bool) {
	c, ok := e.(*ir.Const)
	if !ok {
		return nil, false
	}
	return c.Value, true
}

func fold(e ir.Expr) ir.Expr {
	switch x := e.(type) {
	case *ir.Unary:
		if c, ok := constOf(x.X); ok {
			switch v := c.(type) {
			case nil:
				return &ir.Const{P: x.P, Value: nil, T: ir.Null}
			case bool:
				if x.Op == "not" {
					return &ir.Const{P: x.P, Value: !v, T: ir.Bool}
				}
			case int64:
				if x.Op == "-" {
					return &ir.Const{P: x.P, Value: -v, T: ir.Int}
				}
			}
		}
	case *ir.Binary:
		return foldBinary(x)
	case *ir.Case:
		var whens []ir.When
		for _, w := range x.Whens {
			c, ok := constOf(w.Cond)
			if !ok {
				whens = append(whens, w)
				continue
			}
			if b, isBool := c.(bool); isBool && b {
				if len(whens) == 0 {
					return w.Result
				}
				return &ir.Case{P: x.P, Whens: whens, Else: w.Result, T: x.T}
			}
			// false or NULL: the arm never fires.
		}
		if len(whens) == 0 {
			if x.Else == nil {
				return &ir.Const{P: x.P, Value: nil, T: ir.Null}
			}
			return x.Else
		}
		if len(whens) != len(x.Whens) {
			return &ir.Case{P: x.P, Whens: whens, Else: x.Else, T: x.T}
		}
	}
	return e
}

func foldBinary(x *ir.Binary) ir.Expr {
	l, lok := constOf(x.L)
	r, rok := constOf(x.R)
	switch x.Op {
	case "and", "or":
		isOr := x.Op == "or"
		// The absorbing element decides; the neutral one disappears.
		for _, side := range []struct {
			c     any
			ok    bool
			other ir.Expr
		}{{l, lok, x.R}, {r, rok, x.L}} {
			if b, isBool := side.c.(bool); side.ok && isBool {
				if b == isOr {
					return &ir.Const{P: x.P, Value: b, T: ir.Bool}
				}
				return side.other
			}
		}
		return x
	}
	if lok && l == nil || rok && r == nil {
		// Arithmetic and comparison with NULL are NULL.
		return &ir.Const{P: x.P, Value: nil, T: ir.Null}
	}
	if !lok || !rok {
		return x
	}
	if l == nil || r == nil {
		return &ir.Const{P: x.P, Value: nil, T: ir.Null}
	}
	switch x.Op {
	case "+", "-", "*", "/", "%":
		a, b := l.(int64), r.(int64)
		var v int64
		switch x.Op {
		case "+":
			v = a + b
		case "-":
			v = a - b
		case "*":
			v = a * b
		case "/", "%":
			if b == 0 {
				return x // left for grounding to report
			}
			if x.Op == "/" {
				v = a / b
			} else {
				v = a % b
			}
		}
		return &ir.Const{P: x.P, Value: v, T: ir.Int}
	case "=", "<>", "<", "<=", ">", ">=":
		return &ir.Const{P: x.P, Value: ir.CompareConst(x.Op, l, r), T: ir.Bool}
	}
	return x
}
