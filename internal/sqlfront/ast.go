package sqlfront

// Node is any node of the AST. Every node records the position where it
// starts in the source (for operators, the position of the operator).
//
// The position is stored in each node's Pos field; the method that returns it
// is called Position because Go does not allow a field and a method with the
// same name.
type Node interface {
	Position() Pos
	node()
}

// Stmt is a schema statement: *CreateTable, *CreateIndex or *CreateView.
type Stmt interface {
	Node
	stmtNode()
}

// Expr is an SQL expression.
type Expr interface {
	Node
	exprNode()
}

// FromItem is an entry of a from clause: *TableRef, *DerivedTable or *Join.
type FromItem interface {
	Node
	fromNode()
}

// Schema is a parsed schema: its statements in source order.
type Schema struct {
	Stmts []Stmt
}

// Annotation is a "-- @name (item, ...)" comment attached to the statement
// that follows it. Pos is the position of the '@'.
type Annotation struct {
	Pos   Pos
	Name  string // lower-case, without '@': variable_columns, hard_constraint, soft_constraint
	Items []AnnotationItem
}

// AnnotationItem is one item of an annotation's list: an identifier followed
// by option words, as in "node_name nullable".
type AnnotationItem struct {
	Pos     Pos
	Name    string   // folded to lower case unless quoted
	Options []string // lower-case option words
}

// CreateTable is a create table statement.
//
// PrimaryKey, Unique and ForeignKeys collect the keys declared both as column
// options and as table constraints, so that later passes need look in one
// place only; a column-level references clause appears both as the column's
// References and, as the same pointer, in ForeignKeys.
type CreateTable struct {
	Pos         Pos    // position of "create"
	Schema      string // "s" of "create table s.t", else ""
	Name        string
	NamePos     Pos
	IfNotExists bool
	Columns     []*ColumnDef
	PrimaryKey  []string
	Unique      [][]string
	ForeignKeys []*ForeignKey
	Annotations []*Annotation
	Text        string // source text from "create" through the last token before ";"
}

// TypeName is a column type, such as varchar(100).
type TypeName struct {
	Name string // lower-case: int, integer, bigint, smallint, boolean, bool, varchar, char, text
	Args []int
}

// ColumnDef is a column definition in a create table statement.
type ColumnDef struct {
	Pos        Pos // position of the column name
	Name       string
	Type       TypeName
	NotNull    bool
	PrimaryKey bool
	Unique     bool
	Default    Expr        // a literal, possibly negated; nil if absent
	References *ForeignKey // nil if the column has no references clause
}

// ForeignKey is a foreign key, from a column's references clause or from a
// table constraint. RefColumns is empty when the referenced table's primary
// key is meant.
type ForeignKey struct {
	Pos        Pos // position of "references", or of the table constraint
	Columns    []string
	RefSchema  string // "s" of "references s.t", else ""
	RefTable   string
	RefColumns []string
}

// CreateIndex is a create index statement.
type CreateIndex struct {
	Pos         Pos
	Name        string
	TableSchema string // "s" of "on s.t", else ""
	Table       string
	Columns     []string
	Unique      bool
	Text        string
}

// CreateView is a create view statement.
type CreateView struct {
	Pos         Pos
	Schema      string // "s" of "create view s.v", else ""
	Name        string
	NamePos     Pos
	Columns     []string // optional column names
	Query       *Select
	Annotations []*Annotation
	Text        string // source text from "create" through the last token before ";"
}

// Select is a select block.
type Select struct {
	Pos      Pos // position of "select"
	Distinct bool
	Items    []*SelectItem
	From     []FromItem
	Where    Expr
	GroupBy  []Expr
	Having   Expr
	// Union holds the further arms of "select ... union [all] select ...",
	// accepted at the top of a view only (the analyzer admits it in views
	// over input columns, which the database evaluates).
	Union []*UnionArm
	// OrderBy and Limit end a view's query ("... order by x desc limit
	// 1"), accepted at the top of a view only, after its last union arm
	// (the analyzer admits them in views over input columns, which the
	// database evaluates).
	OrderBy []*OrderItem
	Limit   *Limit
}

// OrderItem is one term of an order by: an expression, and whether it
// sorts descending.
type OrderItem struct {
	Pos  Pos
	Expr Expr
	Desc bool
}

// Limit is "limit n"; Pos is the position of "limit".
type Limit struct {
	Pos Pos
	N   int64
}

// UnionArm is one "union [all] select ..." after a view's first select.
// Pos is the position of "union".
type UnionArm struct {
	Pos    Pos
	All    bool
	Select *Select
}

// SelectItem is an entry of a select list: *, t.* or an expression with an
// optional alias.
type SelectItem struct {
	Pos       Pos
	Expr      Expr   // nil for * and t.*
	Alias     string // "" if none
	Star      bool
	StarTable string // "t" for t.*, "" for *
}

// TableRef names a table or view in a from clause.
type TableRef struct {
	Pos    Pos
	Schema string // "s" of "from s.t", else ""
	Name   string
	Alias  string
}

// DerivedTable is a parenthesised subquery in a from clause.
type DerivedTable struct {
	Pos   Pos // position of "("
	Query *Select
	Alias string
}

// Join is an inner join, or a left outer join when Outer is set. Pos is
// the position of "join" (or "inner", or "left").
type Join struct {
	Pos   Pos
	Left  FromItem
	Right FromItem
	On    Expr
	Outer bool
}

// ColumnRef is a column reference, c or t.c.
type ColumnRef struct {
	Pos    Pos
	Table  string // "" if unqualified
	Column string
}

// IntLit is an integer literal.
type IntLit struct {
	Pos   Pos
	Value int64
	Text  string // source text
}

// FloatLit is a decimal literal such as 1.5. Weave does not support them;
// they are parsed so that the analyser can reject them with a position.
type FloatLit struct {
	Pos   Pos
	Value float64
	Text  string
}

// StringLit is a string literal; Value is unescaped.
type StringLit struct {
	Pos   Pos
	Value string
}

// BoolLit is true or false.
type BoolLit struct {
	Pos   Pos
	Value bool
}

// NullLit is null.
type NullLit struct {
	Pos Pos
}

// BinaryExpr is a binary operation. Op is one of "+", "-", "*", "/", "%",
// "=", "<>", "<", "<=", ">", ">=", "and", "or", "like", "not like"
// (!= is canonicalised to <>). Pos is the position of the operator.
type BinaryExpr struct {
	Pos Pos
	Op  string
	L   Expr
	R   Expr
}

// UnaryExpr is "not X" or "-X". Pos is the position of the operator.
type UnaryExpr struct {
	Pos Pos
	Op  string // "not" or "-"
	X   Expr
}

// FuncCall is a function call such as count(*), sum(x) or count(distinct x).
type FuncCall struct {
	Pos      Pos
	Name     string // lower-case unless quoted
	Args     []Expr
	Star     bool // f(*)
	Distinct bool // f(distinct x)
}

// InExpr is "X [not] in (list)" or "X [not] in (select ...)"; exactly one of
// List and Query is set. Pos is the position of "not" or "in".
type InExpr struct {
	Pos   Pos
	X     Expr
	Not   bool
	List  []Expr
	Query *Select
}

// ExistsExpr is "[not] exists (select ...)".
type ExistsExpr struct {
	Pos   Pos
	Not   bool
	Query *Select
}

// SubqueryExpr is a scalar subquery "(select ...)". Pos is the position of "(".
type SubqueryExpr struct {
	Pos   Pos
	Query *Select
}

// CaseExpr is "case [operand] when ... then ... [else ...] end".
type CaseExpr struct {
	Pos     Pos
	Operand Expr // nil for a searched case
	Whens   []*When
	Else    Expr // nil if absent
}

// When is one "when Cond then Result" arm of a case expression.
type When struct {
	Pos    Pos
	Cond   Expr
	Result Expr
}

// IsNullExpr is "X is [not] null". Pos is the position of "is".
type IsNullExpr struct {
	Pos Pos
	X   Expr
	Not bool
}

// BetweenExpr is "X [not] between Lo and Hi". Pos is the position of "not"
// or "between".
type BetweenExpr struct {
	Pos Pos
	X   Expr
	Not bool
	Lo  Expr
	Hi  Expr
}

// ParenExpr is a parenthesised expression. Pos is the position of "(".
type ParenExpr struct {
	Pos Pos
	X   Expr
}

// Position implements Node; it returns the position of the first statement.
func (n *Schema) Position() Pos {
	if len(n.Stmts) == 0 {
		return Pos{}
	}
	return n.Stmts[0].Position()
}

// Position implements Node.
func (n *Annotation) Position() Pos { return n.Pos }

// Position implements Node.
func (n *CreateTable) Position() Pos { return n.Pos }

// Position implements Node.
func (n *ColumnDef) Position() Pos { return n.Pos }

// Position implements Node.
func (n *ForeignKey) Position() Pos { return n.Pos }

// Position implements Node.
func (n *CreateIndex) Position() Pos { return n.Pos }

// Position implements Node.
func (n *CreateView) Position() Pos { return n.Pos }

// Position implements Node.
func (n *Select) Position() Pos { return n.Pos }

// Position implements Node.
func (n *SelectItem) Position() Pos { return n.Pos }

// Position implements Node.
func (n *TableRef) Position() Pos { return n.Pos }

// Position implements Node.
func (n *DerivedTable) Position() Pos { return n.Pos }

// Position implements Node.
func (n *Join) Position() Pos { return n.Pos }

// Position implements Node.
func (n *ColumnRef) Position() Pos { return n.Pos }

// Position implements Node.
func (n *IntLit) Position() Pos { return n.Pos }

// Position implements Node.
func (n *FloatLit) Position() Pos { return n.Pos }

// Position implements Node.
func (n *StringLit) Position() Pos { return n.Pos }

// Position implements Node.
func (n *BoolLit) Position() Pos { return n.Pos }

// Position implements Node.
func (n *NullLit) Position() Pos { return n.Pos }

// Position implements Node.
func (n *BinaryExpr) Position() Pos { return n.Pos }

// Position implements Node.
func (n *UnaryExpr) Position() Pos { return n.Pos }

// Position implements Node.
func (n *FuncCall) Position() Pos { return n.Pos }

// Position implements Node.
func (n *InExpr) Position() Pos { return n.Pos }

// Position implements Node.
func (n *ExistsExpr) Position() Pos { return n.Pos }

// Position implements Node.
func (n *SubqueryExpr) Position() Pos { return n.Pos }

// Position implements Node.
func (n *CaseExpr) Position() Pos { return n.Pos }

// Position implements Node.
func (n *When) Position() Pos { return n.Pos }

// Position implements Node.
func (n *IsNullExpr) Position() Pos { return n.Pos }

// Position implements Node.
func (n *BetweenExpr) Position() Pos { return n.Pos }

// Position implements Node.
func (n *ParenExpr) Position() Pos { return n.Pos }

func (*Schema) node()       {}
func (*Annotation) node()   {}
func (*CreateTable) node()  {}
func (*ColumnDef) node()    {}
func (*ForeignKey) node()   {}
func (*CreateIndex) node()  {}
func (*CreateView) node()   {}
func (*Select) node()       {}
func (*SelectItem) node()   {}
func (*TableRef) node()     {}
func (*DerivedTable) node() {}
func (*Join) node()         {}
func (*When) node()         {}
func (*ColumnRef) node()    {}
func (*IntLit) node()       {}
func (*FloatLit) node()     {}
func (*StringLit) node()    {}
func (*BoolLit) node()      {}
func (*NullLit) node()      {}
func (*BinaryExpr) node()   {}
func (*UnaryExpr) node()    {}
func (*FuncCall) node()     {}
func (*InExpr) node()       {}
func (*ExistsExpr) node()   {}
func (*SubqueryExpr) node() {}
func (*CaseExpr) node()     {}
func (*IsNullExpr) node()   {}
func (*BetweenExpr) node()  {}
func (*ParenExpr) node()    {}

func (*CreateTable) stmtNode() {}
func (*CreateIndex) stmtNode() {}
func (*CreateView) stmtNode()  {}

func (*TableRef) fromNode()     {}
func (*DerivedTable) fromNode() {}
func (*Join) fromNode()         {}

func (*ColumnRef) exprNode()    {}
func (*IntLit) exprNode()       {}
func (*FloatLit) exprNode()     {}
func (*StringLit) exprNode()    {}
func (*BoolLit) exprNode()      {}
func (*NullLit) exprNode()      {}
func (*BinaryExpr) exprNode()   {}
func (*UnaryExpr) exprNode()    {}
func (*FuncCall) exprNode()     {}
func (*InExpr) exprNode()       {}
func (*ExistsExpr) exprNode()   {}
func (*SubqueryExpr) exprNode() {}
func (*CaseExpr) exprNode()     {}
func (*IsNullExpr) exprNode()   {}
func (*BetweenExpr) exprNode()  {}
func (*ParenExpr) exprNode()    {}
