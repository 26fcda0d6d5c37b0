package sqlfront

// A Visitor's Visit method is invoked for each node encountered by Walk. If
// the result visitor w is not nil, Walk visits each of the children of node
// with w, followed by a call of w.Visit(nil).
type Visitor interface {
	Visit(n Node) (w Visitor)
}

// Walk traverses the AST rooted at n in depth-first, source order. It
// descends into every subquery: in (select ...), exists, scalar subqueries
// and derived tables. A CreateTable's foreign keys are visited through its
// ForeignKeys list only (not again through ColumnDef.References).
func Walk(v Visitor, n Node) {
	if v = v.Visit(n); v == nil {
		return
	}
	walkExpr := func(e Expr) {
		if e != nil {
			Walk(v, e)
		}
	}
	switch n := n.(type) {
	case *Schema:
		for _, s := range n.Stmts {
			Walk(v, s)
		}
	case *CreateTable:
		for _, a := range n.Annotations {
			Walk(v, a)
		}
		for _, c := range n.Columns {
			Walk(v, c)
		}
		for _, fk := range n.ForeignKeys {
			Walk(v, fk)
		}
	case *ColumnDef:
		walkExpr(n.Default)
	case *CreateView:
		for _, a := range n.Annotations {
			Walk(v, a)
		}
		if n.Query != nil {
			Walk(v, n.Query)
		}
	case *Select:
		for _, it := range n.Items {
			Walk(v, it)
		}
		for _, f := range n.From {
			Walk(v, f)
		}
		walkExpr(n.Where)
		for _, g := range n.GroupBy {
			Walk(v, g)
		}
		walkExpr(n.Having)
		for _, u := range n.Union {
			if u.Select != nil {
				Walk(v, u.Select)
			}
		}
		for _, o := range n.OrderBy {
			walkExpr(o.Expr)
		}
	case *SelectItem:
		walkExpr(n.Expr)
	case *DerivedTable:
		if n.Query != nil {
			Walk(v, n.Query)
		}
	case *Join:
		Walk(v, n.Left)
		Walk(v, n.Right)
		walkExpr(n.On)
	case *BinaryExpr:
		Walk(v, n.L)
		Walk(v, n.R)
	case *UnaryExpr:
		Walk(v, n.X)
	case *FuncCall:
		for _, a := range n.Args {
			Walk(v, a)
		}
	case *InExpr:
		Walk(v, n.X)
		for _, e := range n.List {
			Walk(v, e)
		}
		if n.Query != nil {
			Walk(v, n.Query)
		}
	case *ExistsExpr:
		if n.Query != nil {
			Walk(v, n.Query)
		}
	case *SubqueryExpr:
		if n.Query != nil {
			Walk(v, n.Query)
		}
	case *CaseExpr:
		walkExpr(n.Operand)
		for _, w := range n.Whens {
			Walk(v, w)
		}
		walkExpr(n.Else)
	case *When:
		Walk(v, n.Cond)
		Walk(v, n.Result)
	case *IsNullExpr:
		Walk(v, n.X)
	case *BetweenExpr:
		Walk(v, n.X)
		Walk(v, n.Lo)
		Walk(v, n.Hi)
	case *ParenExpr:
		Walk(v, n.X)
	}
	v.Visit(nil)
}

type inspector func(Node) bool

func (f inspector) Visit(n Node) Visitor {
	if f(n) {
		return f
	}
	return nil
}

// Inspect traverses the AST rooted at n like Walk, calling f for each node
// and then f(nil) after its children; if f returns false, the node's
// children are skipped.
func Inspect(n Node, f func(Node) bool) {
	Walk(inspector(f), n)
}
