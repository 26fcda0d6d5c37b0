package sqlfront

import (
	"strconv"
	"strings"
)

// Format prints an expression back as SQL, in lower case with single spaces,
// adding parentheses only where precedence requires them. Parsing the result
// with ParseExpr gives back an equal AST (ignoring positions). It is meant for
// error messages and debugging output.
func Format(e Expr) string {
	var b printer
	writeExpr(&b, e)
	return b.String()
}

// FormatSelect prints a select block back as SQL.
func FormatSelect(s *Select) string {
	var b printer
	writeSelect(&b, s)
	return b.String()
}

// FormatSelectRenaming prints a select block back as SQL with some of the
// tables and views it reads replaced: rel returns the SQL text of the
// relation to read in place of a table reference (in every subquery
// too), or "" to keep it. A replaced reference keeps its name as its
// alias (from t → from replacement as t), so the columns it qualifies
// still resolve.
func FormatSelectRenaming(s *Select, rel func(*TableRef) string) string {
	b := printer{rel: rel}
	writeSelect(&b, s)
	return b.String()
}

// printer accumulates formatted SQL; rel, if set, renames relations
// (FormatSelectRenaming).
type printer struct {
	strings.Builder
	rel func(*TableRef) string
}

// FormatIdent returns name as it must be written in SQL: unchanged if it is
// a lower-case, non-reserved identifier, else double-quoted.
func FormatIdent(name string) string {
	plain := name != "" && !reserved[name]
	for i := 0; i < len(name) && plain; i++ {
		c := name[i]
		plain = c == '_' || 'a' <= c && c <= 'z' || i > 0 && (isDigit(c) || c == '$')
	}
	if plain {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// Precedence levels, loosest first.
const (
	precOr = iota + 1
	precAnd
	precNot
	precCmp
	precAdd
	precMul
	precUnary
	precPrimary
)

func binaryPrec(op string) int {
	switch op {
	case "or":
		return precOr
	case "and":
		return precAnd
	case "+", "-":
		return precAdd
	case "*", "/", "%":
		return precMul
	}
	return precCmp
}

func prec(e Expr) int {
	switch e := e.(type) {
	case *BinaryExpr:
		return binaryPrec(e.Op)
	case *UnaryExpr:
		if e.Op == "not" {
			return precNot
		}
		return precUnary
	case *InExpr, *IsNullExpr, *BetweenExpr:
		return precCmp
	}
	return precPrimary
}

// writeOperand writes e, parenthesised if its precedence is below min.
func writeOperand(b *printer, e Expr, min int) {
	if e != nil && prec(e) < min {
		b.WriteByte('(')
		writeExpr(b, e)
		b.WriteByte(')')
		return
	}
	writeExpr(b, e)
}

func writeExprList(b *printer, list []Expr) {
	for i, e := range list {
		if i > 0 {
			b.WriteString(", ")
		}
		writeExpr(b, e)
	}
}

func writeExpr(b *printer, e Expr) {
	switch e := e.(type) {
	case nil:
		b.WriteString("<nil>")
	case *ColumnRef:
		if e.Table != "" {
			b.WriteString(FormatIdent(e.Table))
			b.WriteByte('.')
		}
		b.WriteString(FormatIdent(e.Column))
	case *IntLit:
		if e.Text != "" {
			b.WriteString(e.Text)
		} else {
			b.WriteString(strconv.FormatInt(e.Value, 10))
		}
	case *FloatLit:
		if e.Text != "" {
			b.WriteString(e.Text)
		} else {
			b.WriteString(strconv.FormatFloat(e.Value, 'g', -1, 64))
		}
	case *StringLit:
		b.WriteString("'" + strings.ReplaceAll(e.Value, "'", "''") + "'")
	case *BoolLit:
		b.WriteString(strconv.FormatBool(e.Value))
	case *NullLit:
		b.WriteString("null")
	case *BinaryExpr:
		p := binaryPrec(e.Op)
		writeOperand(b, e.L, p)
		b.WriteString(" " + e.Op + " ")
		writeOperand(b, e.R, p+1)
	case *UnaryExpr:
		if e.Op == "not" {
			b.WriteString("not ")
			writeOperand(b, e.X, precNot)
			return
		}
		x := &printer{rel: b.rel}
		writeOperand(x, e.X, precUnary)
		b.WriteString(e.Op)
		if strings.HasPrefix(x.String(), "-") {
			b.WriteByte(' ') // "--" would start a comment
		}
		b.WriteString(x.String())
	case *FuncCall:
		b.WriteString(FormatIdent(e.Name))
		b.WriteByte('(')
		switch {
		case e.Star:
			b.WriteByte('*')
		case e.Distinct:
			b.WriteString("distinct ")
			fallthrough
		default:
			writeExprList(b, e.Args)
		}
		b.WriteByte(')')
	case *InExpr:
		writeOperand(b, e.X, precCmp)
		if e.Not {
			b.WriteString(" not")
		}
		b.WriteString(" in (")
		if e.Query != nil {
			writeSelect(b, e.Query)
		} else {
			writeExprList(b, e.List)
		}
		b.WriteByte(')')
	case *ExistsExpr:
		if e.Not {
			b.WriteString("not ")
		}
		b.WriteString("exists (")
		writeSelect(b, e.Query)
		b.WriteByte(')')
	case *SubqueryExpr:
		b.WriteByte('(')
		writeSelect(b, e.Query)
		b.WriteByte(')')
	case *CaseExpr:
		b.WriteString("case")
		if e.Operand != nil {
			b.WriteByte(' ')
			writeExpr(b, e.Operand)
		}
		for _, w := range e.Whens {
			b.WriteString(" when ")
			writeExpr(b, w.Cond)
			b.WriteString(" then ")
			writeExpr(b, w.Result)
		}
		if e.Else != nil {
			b.WriteString(" else ")
			writeExpr(b, e.Else)
		}
		b.WriteString(" end")
	case *IsNullExpr:
		writeOperand(b, e.X, precCmp)
		if e.Not {
			b.WriteString(" is not null")
		} else {
			b.WriteString(" is null")
		}
	case *BetweenExpr:
		writeOperand(b, e.X, precCmp)
		if e.Not {
			b.WriteString(" not")
		}
		b.WriteString(" between ")
		writeOperand(b, e.Lo, precAdd)
		b.WriteString(" and ")
		writeOperand(b, e.Hi, precAdd)
	case *ParenExpr:
		b.WriteByte('(')
		writeExpr(b, e.X)
		b.WriteByte(')')
	}
}

func writeSelect(b *printer, s *Select) {
	if s == nil {
		b.WriteString("<nil>")
		return
	}
	b.WriteString("select ")
	if s.Distinct {
		b.WriteString("distinct ")
	}
	for i, it := range s.Items {
		if i > 0 {
			b.WriteString(", ")
		}
		switch {
		case it.Star && it.StarTable != "":
			b.WriteString(FormatIdent(it.StarTable) + ".*")
		case it.Star:
			b.WriteByte('*')
		default:
			writeExpr(b, it.Expr)
			if it.Alias != "" {
				b.WriteString(" as " + FormatIdent(it.Alias))
			}
		}
	}
	b.WriteString(" from ")
	for i, f := range s.From {
		if i > 0 {
			b.WriteString(", ")
		}
		writeFrom(b, f)
	}
	if s.Where != nil {
		b.WriteString(" where ")
		writeExpr(b, s.Where)
	}
	if len(s.GroupBy) > 0 {
		b.WriteString(" group by ")
		writeExprList(b, s.GroupBy)
	}
	if s.Having != nil {
		b.WriteString(" having ")
		writeExpr(b, s.Having)
	}
	for _, u := range s.Union {
		b.WriteString(" union ")
		if u.All {
			b.WriteString("all ")
		}
		writeSelect(b, u.Select)
	}
	for i, o := range s.OrderBy {
		if i == 0 {
			b.WriteString(" order by ")
		} else {
			b.WriteString(", ")
		}
		writeExpr(b, o.Expr)
		if o.Desc {
			b.WriteString(" desc")
		}
	}
	if s.Limit != nil {
		b.WriteString(" limit " + strconv.FormatInt(s.Limit.N, 10))
	}
}

func writeFrom(b *printer, f FromItem) {
	switch f := f.(type) {
	case *TableRef:
		alias := f.Alias
		if r := b.relation(f); r != "" {
			b.WriteString(r)
			if alias == "" {
				alias = f.Name
			}
		} else {
			if f.Schema != "" {
				b.WriteString(FormatIdent(f.Schema) + ".")
			}
			b.WriteString(FormatIdent(f.Name))
		}
		if alias != "" {
			b.WriteString(" as " + FormatIdent(alias))
		}
	case *DerivedTable:
		b.WriteByte('(')
		writeSelect(b, f.Query)
		b.WriteString(") as " + FormatIdent(f.Alias))
	case *Join:
		writeFrom(b, f.Left)
		if f.Outer {
			b.WriteString(" left join ")
		} else {
			b.WriteString(" join ")
		}
		writeFrom(b, f.Right)
		b.WriteString(" on ")
		writeExpr(b, f.On)
	}
}

func (b *printer) relation(f *TableRef) string {
	if b.rel == nil {
		return ""
	}
	return b.rel(f)
}
