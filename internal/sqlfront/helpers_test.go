package sqlfront

import (
	"fmt"
	"reflect"
	"strings"
)

// sexpr dumps a node as a compact s-expression, so tests can assert on the
// shape of the tree: (= node.ready true), (in x (select ...)), ...
func sexpr(n Node) string {
	switch n := n.(type) {
	case nil:
		return "nil"
	case *ColumnRef:
		if n.Table != "" {
			return n.Table + "." + n.Column
		}
		return n.Column
	case *IntLit:
		return fmt.Sprint(n.Value)
	case *FloatLit:
		return "float:" + n.Text
	case *StringLit:
		return fmt.Sprintf("%q", n.Value)
	case *BoolLit:
		return fmt.Sprint(n.Value)
	case *NullLit:
		return "null"
	case *BinaryExpr:
		return fmt.Sprintf("(%s %s %s)", n.Op, sexpr(n.L), sexpr(n.R))
	case *UnaryExpr:
		return fmt.Sprintf("(%s %s)", n.Op, sexpr(n.X))
	case *ParenExpr:
		return fmt.Sprintf("(paren %s)", sexpr(n.X))
	case *FuncCall:
		parts := []string{n.Name}
		if n.Star {
			parts = append(parts, "*")
		}
		if n.Distinct {
			parts = append(parts, "distinct")
		}
		for _, a := range n.Args {
			parts = append(parts, sexpr(a))
		}
		return "(call " + strings.Join(parts, " ") + ")"
	case *InExpr:
		op := "in"
		if n.Not {
			op = "not-in"
		}
		if n.Query != nil {
			return fmt.Sprintf("(%s %s %s)", op, sexpr(n.X), sexpr(n.Query))
		}
		parts := []string{}
		for _, e := range n.List {
			parts = append(parts, sexpr(e))
		}
		return fmt.Sprintf("(%s %s [%s])", op, sexpr(n.X), strings.Join(parts, " "))
	case *ExistsExpr:
		if n.Not {
			return "(not-exists " + sexpr(n.Query) + ")"
		}
		return "(exists " + sexpr(n.Query) + ")"
	case *SubqueryExpr:
		return "(scalar " + sexpr(n.Query) + ")"
	case *CaseExpr:
		s := "(case"
		if n.Operand != nil {
			s += " " + sexpr(n.Operand)
		}
		for _, w := range n.Whens {
			s += fmt.Sprintf(" (when %s %s)", sexpr(w.Cond), sexpr(w.Result))
		}
		if n.Else != nil {
			s += " (else " + sexpr(n.Else) + ")"
		}
		return s + ")"
	case *IsNullExpr:
		if n.Not {
			return "(is-not-null " + sexpr(n.X) + ")"
		}
		return "(is-null " + sexpr(n.X) + ")"
	case *BetweenExpr:
		op := "between"
		if n.Not {
			op = "not-between"
		}
		return fmt.Sprintf("(%s %s %s %s)", op, sexpr(n.X), sexpr(n.Lo), sexpr(n.Hi))
	case *Select:
		var parts []string
		head := "select"
		if n.Distinct {
			head = "select-distinct"
		}
		for _, it := range n.Items {
			parts = append(parts, sexpr(it))
		}
		s := "(" + head + " [" + strings.Join(parts, " ") + "]"
		parts = nil
		for _, f := range n.From {
			parts = append(parts, sexpr(f))
		}
		s += " (from " + strings.Join(parts, " ") + ")"
		if n.Where != nil {
			s += " (where " + sexpr(n.Where) + ")"
		}
		if len(n.GroupBy) > 0 {
			parts = nil
			for _, g := range n.GroupBy {
				parts = append(parts, sexpr(g))
			}
			s += " (group " + strings.Join(parts, " ") + ")"
		}
		if n.Having != nil {
			s += " (having " + sexpr(n.Having) + ")"
		}
		return s + ")"
	case *SelectItem:
		switch {
		case n.Star && n.StarTable != "":
			return n.StarTable + ".*"
		case n.Star:
			return "*"
		case n.Alias != "":
			return "(as " + sexpr(n.Expr) + " " + n.Alias + ")"
		}
		return sexpr(n.Expr)
	case *TableRef:
		if n.Alias != "" {
			return "(table " + n.Name + " " + n.Alias + ")"
		}
		return n.Name
	case *DerivedTable:
		return "(derived " + sexpr(n.Query) + " " + n.Alias + ")"
	case *Join:
		return fmt.Sprintf("(join %s %s %s)", sexpr(n.Left), sexpr(n.Right), sexpr(n.On))
	}
	return fmt.Sprintf("<%T>", n)
}

// stripPositions zeroes every Pos field reachable from v, in place.
func stripPositions(v any) {
	strip(reflect.ValueOf(v))
}

var posType = reflect.TypeOf(Pos{})

func strip(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			strip(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == posType {
			if v.CanSet() {
				v.Set(reflect.Zero(posType))
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			strip(v.Field(i))
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			strip(v.Index(i))
		}
	}
}

// equalIgnoringPos reports whether two ASTs are equal apart from positions.
// It modifies both.
func equalIgnoringPos(a, b any) bool {
	stripPositions(a)
	stripPositions(b)
	return reflect.DeepEqual(a, b)
}

// mustParse parses src and fails the test on error.
func mustParse(t interface {
	Helper()
	Fatalf(string, ...any)
}, src string) *Schema {
	t.Helper()
	s, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse: unexpected error: %v\nsource:\n%s", err, src)
	}
	return s
}
