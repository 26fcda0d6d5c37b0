package ir

import (
	"fmt"
	"strconv"
	"strings"
)

// String prints the program: tables with their decision columns and
// domains, then each view with its kind and query in comprehension form.
func (p *Program) String() string {
	var b strings.Builder
	for _, t := range p.Tables {
		fmt.Fprintf(&b, "table %s(", t.Name)
		for i, c := range t.Columns {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %s", c.Name, c.Type)
			if c.Variable {
				b.WriteString(" var")
				if c.Nullable {
					b.WriteString(" nullable")
				}
				if c.Unique {
					b.WriteString(" unique")
				}
			}
		}
		b.WriteString(")\n")
		for _, c := range t.Columns {
			for _, d := range c.Domain {
				if d.Query != nil {
					fmt.Fprintf(&b, "  domain %s.%s <- %s: %s\n", t.Name, c.Name, d.Reason, FormatQuery(d.Query))
				} else {
					fmt.Fprintf(&b, "  domain %s.%s <- %s: %v\n", t.Name, c.Name, d.Reason, d.Values)
				}
			}
		}
	}
	for _, v := range p.Views {
		fmt.Fprintf(&b, "view %s [%s]:\n  %s\n", v.Name, v.Kind.Role(), FormatQuery(v.Query))
	}
	return b.String()
}

// FormatQuery prints q as a comprehension:
// [outputs | a <- t, b <- u, filters, group by ..., having ..., check ...].
func FormatQuery(q *Query) string {
	if q == nil {
		return "<nil>"
	}
	var b strings.Builder
	b.WriteString("[")
	if q.Distinct {
		b.WriteString("distinct ")
	}
	for i, o := range q.Select {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(FormatExpr(o.Expr))
		if c, ok := o.Expr.(*ColRef); !ok || !strings.HasSuffix(c.Name, "."+o.Name) {
			b.WriteString(" as " + o.Name)
		}
	}
	b.WriteString(" | ")
	var quals []string
	for _, s := range q.From {
		switch s.Kind {
		case FromTable:
			quals = append(quals, s.Alias+" <- "+s.Table.Name)
		case FromInput:
			quals = append(quals, s.Alias+" <- input "+s.View.Name)
		case FromQuery:
			if s.View != nil {
				quals = append(quals, s.Alias+" <- view "+s.View.Name)
			} else {
				quals = append(quals, s.Alias+" <- "+FormatQuery(s.Query))
			}
		}
	}
	for _, f := range q.Filters {
		quals = append(quals, FormatExpr(f))
	}
	if len(q.GroupBy) > 0 {
		var g []string
		for _, e := range q.GroupBy {
			g = append(g, FormatExpr(e))
		}
		quals = append(quals, "group by "+strings.Join(g, ", "))
	} else if q.Aggregate {
		quals = append(quals, "group all")
	}
	for _, h := range q.Having {
		quals = append(quals, "having "+FormatExpr(h))
	}
	if q.Check != nil {
		quals = append(quals, "check "+FormatExpr(q.Check))
	}
	for _, a := range q.Constraints {
		quals = append(quals, "check "+FormatExpr(a))
	}
	b.WriteString(strings.Join(quals, ", "))
	b.WriteString("]")
	return b.String()
}

// FormatExpr prints an expression; variable column references carry a
// trailing "?" so the printed IR shows what reaches the solver.
func FormatExpr(e Expr) string {
	switch e := e.(type) {
	case nil:
		return "<nil>"
	case *ColRef:
		s := e.Name
		if e.Up > 0 {
			s = strings.Repeat("^", e.Up) + s
		}
		if e.IsVar {
			s += "?"
		}
		return s
	case *Const:
		switch v := e.Value.(type) {
		case nil:
			return "null"
		case string:
			return "'" + strings.ReplaceAll(v, "'", "''") + "'"
		case int64:
			return strconv.FormatInt(v, 10)
		case bool:
			return strconv.FormatBool(v)
		}
		return fmt.Sprint(e.Value)
	case *Binary:
		return "(" + FormatExpr(e.L) + " " + e.Op + " " + FormatExpr(e.R) + ")"
	case *Unary:
		if e.Op == "not" {
			return "not " + FormatExpr(e.X)
		}
		return e.Op + FormatExpr(e.X)
	case *Agg:
		arg := "*"
		if e.Arg != nil {
			arg = FormatExpr(e.Arg)
		}
		if e.Distinct {
			arg = "distinct " + arg
		}
		return e.Func + "(" + arg + ")"
	case *In:
		op := " in "
		if e.Not {
			op = " not in "
		}
		if e.Sub != nil {
			return FormatExpr(e.X) + op + FormatQuery(e.Sub)
		}
		var l []string
		for _, x := range e.List {
			l = append(l, FormatExpr(x))
		}
		return FormatExpr(e.X) + op + "(" + strings.Join(l, ", ") + ")"
	case *Exists:
		if e.Not {
			return "not exists " + FormatQuery(e.Sub)
		}
		return "exists " + FormatQuery(e.Sub)
	case *Scalar:
		return "the " + FormatQuery(e.Sub)
	case *Case:
		var b strings.Builder
		b.WriteString("case")
		for _, w := range e.Whens {
			b.WriteString(" when " + FormatExpr(w.Cond) + " then " + FormatExpr(w.Result))
		}
		if e.Else != nil {
			b.WriteString(" else " + FormatExpr(e.Else))
		}
		b.WriteString(" end")
		return b.String()
	case *IsNull:
		if e.Not {
			return FormatExpr(e.X) + " is not null"
		}
		return FormatExpr(e.X) + " is null"
	case *Coalesce:
		var l []string
		for _, x := range e.Args {
			l = append(l, FormatExpr(x))
		}
		return "coalesce(" + strings.Join(l, ", ") + ")"
	}
	return fmt.Sprintf("%T", e)
}
