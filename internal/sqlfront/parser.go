package sqlfront

import (
	"fmt"
	"sort"
	"strconv"
)

// Parse parses a schema: a sequence of ";"-terminated create table, create
// index and create view statements, with their annotations attached.
//
// Parse reports every error it finds, as an ErrorList sorted by position:
// after an error it skips to the next ";" (or the next "create") and carries
// on. The returned Schema is never nil; it holds the statements that parsed
// cleanly, so callers may inspect it even when the error is non-nil.
func Parse(src string) (*Schema, error) {
	p := newParser(src, true)
	s := p.parseSchema()
	p.errs.Sort()
	return s, p.errs.Err()
}

// ParseExpr parses a single SQL expression, such as the output of Format.
// Comments in src are ignored, including ones that look like annotations.
func ParseExpr(src string) (Expr, error) {
	p := newParser(src, false)
	var e Expr
	func() {
		defer p.recoverBailout()
		e = p.parseExpr()
		if p.tok().kind != tEOF {
			p.expected("end of expression")
		}
	}()
	p.errs.Sort()
	if err := p.errs.Err(); err != nil {
		return nil, err
	}
	return e, nil
}

// bailout is panicked to abandon the current statement after an error.
type bailout struct{}

// maxDepth bounds the nesting of expressions and subqueries.
const maxDepth = 500

type pendingAnnotation struct {
	a    *Annotation
	next int // index in toks of the token following the annotation
}

type stmtInfo struct {
	kind string // "table", "view", "index", or "" if not a recognised create statement
	stmt Stmt   // nil if the statement had errors
	name string // name of the table, view or index, if known
}

type stmtSpan struct {
	start, end int
	name       string
}

type parser struct {
	src     string
	toks    []token
	i       int
	lastEnd int // end offset of the last consumed token
	errs    ErrorList
	stmt    string // name of the table or view being parsed
	depth   int
	// unionAt is the nesting depth at which "union" may follow a select
	// (a view's top level), 0 elsewhere.
	unionAt int
	annots  []pendingAnnotation
	starts  map[int]*stmtInfo // statement start token index -> statement
	spans   []stmtSpan
}

func newParser(src string, annotations bool) *parser {
	p := &parser{src: src, starts: map[int]*stmtInfo{}}
	s := newScanner(src, func(pos Pos, msg string) {
		p.errs = append(p.errs, &Error{Pos: pos, Msg: msg})
	})
	s.annotations = annotations
	for {
		t := s.next()
		if t.kind == tAnnot {
			if a := p.parseAnnotation(t); a != nil {
				p.annots = append(p.annots, pendingAnnotation{a, len(p.toks)})
			}
			continue
		}
		p.toks = append(p.toks, t)
		if t.kind == tEOF {
			return p
		}
	}
}

// ---- token helpers ----

func (p *parser) tok() token { return p.toks[p.i] }

func (p *parser) peek(k int) token {
	if j := p.i + k; j < len(p.toks) {
		return p.toks[j]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() {
	t := p.toks[p.i]
	if t.kind == tEOF {
		return
	}
	p.lastEnd = t.end
	p.i++
}

func isKw(t token, kw string) bool    { return t.kind == tIdent && t.val == kw }
func isPunct(t token, s string) bool  { return t.kind == tPunct && t.val == s }
func (p *parser) isKw(kw string) bool { return isKw(p.tok(), kw) }
func (p *parser) isPunct(s string) bool {
	return isPunct(p.tok(), s)
}

func (p *parser) acceptKw(kw string) bool {
	if p.isKw(kw) {
		p.next()
		return true
	}
	return false
}

func (p *parser) acceptPunct(s string) bool {
	if p.isPunct(s) {
		p.next()
		return true
	}
	return false
}

// expectKw consumes keyword kw or fails with `expected "kw" context, found X`.
func (p *parser) expectKw(kw, context string) Pos {
	t := p.tok()
	if !isKw(t, kw) {
		p.expected(join(strconv.Quote(kw), context))
	}
	p.next()
	return t.pos
}

// expectPunct consumes punctuation s or fails with `expected "s" context, found X`.
func (p *parser) expectPunct(s, context string) Pos {
	t := p.tok()
	if !isPunct(t, s) {
		p.expected(join(strconv.Quote(s), context))
	}
	p.next()
	return t.pos
}

func join(a, b string) string {
	if b == "" {
		return a
	}
	return a + " " + b
}

// describe says what a token is, for "found ..." in error messages.
func (p *parser) describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tQIdent:
		return "identifier " + p.src[t.pos.Offset:t.end]
	case tString:
		return "string " + quoteText(p.src[t.pos.Offset:t.end])
	}
	if t.kind == tIdent && reserved[t.val] {
		return "keyword " + quoteText(p.src[t.pos.Offset:t.end])
	}
	return quoteText(p.src[t.pos.Offset:t.end])
}

// ---- errors ----

func (p *parser) errorAt(pos Pos, format string, args ...any) {
	p.errs = append(p.errs, &Error{Pos: pos, Stmt: p.stmt, Msg: fmt.Sprintf(format, args...)})
}

// failAt records an error and abandons the current statement.
func (p *parser) failAt(pos Pos, format string, args ...any) {
	p.errorAt(pos, format, args...)
	panic(bailout{})
}

// expected fails with "expected what, found <current token>". If the current
// token is malformed, the scanner has already said so and nothing is added.
func (p *parser) expected(what string) {
	t := p.tok()
	if t.kind == tIllegal {
		panic(bailout{})
	}
	pos := t.pos
	if t.kind == tEOF {
		pos = p.posOf(p.lastEnd) // just after the last token, not past trailing comments
	}
	p.failAt(pos, "expected %s, found %s", what, p.describe(t))
}

// posOf computes the position of a byte offset.
func (p *parser) posOf(off int) Pos {
	line, lineStart := 1, 0
	for i := 0; i < off; i++ {
		if p.src[i] == '\n' {
			line++
			lineStart = i + 1
		}
	}
	return Pos{Offset: off, Line: line, Col: off - lineStart + 1}
}

func (p *parser) recoverBailout() {
	if r := recover(); r != nil {
		if _, ok := r.(bailout); !ok {
			panic(r)
		}
	}
}

func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.failAt(p.tok().pos, "expression nested too deeply")
	}
}

func (p *parser) leave() { p.depth-- }

// reserved lists the words that cannot be used as unquoted names.
var reserved = map[string]bool{
	"all": true, "and": true, "as": true, "between": true, "by": false, "case": true,
	"check": true, "constraint": true, "create": true, "cross": true, "default": true,
	"distinct": true, "else": true, "end": true, "except": true, "exists": true,
	"false": true, "fetch": true, "foreign": true, "from": true, "full": true,
	"group": true, "having": true, "in": true, "inner": true, "intersect": true,
	"is": true, "join": true, "left": true, "like": true, "limit": true,
	"natural": true, "not": true, "null": true, "offset": true, "on": true,
	"or": true, "order": true, "outer": true, "primary": true, "references": true,
	"right": true, "select": true, "table": true, "then": true, "true": true,
	"union": true, "unique": true, "using": true, "when": true, "where": true,
	"window": true, "with": true,
}

// isName reports whether t can be used as a name (identifier).
func isName(t token) bool {
	return t.kind == tQIdent || t.kind == tIdent && !reserved[t.val]
}

// ident consumes a name; what describes it for the error message.
func (p *parser) ident(what string) (string, Pos) {
	t := p.tok()
	if isName(t) {
		p.next()
		return t.val, t.pos
	}
	if t.kind == tIdent {
		p.failAt(t.pos, "expected %s, found keyword %s (quote it as \"%s\" to use it as a name)",
			what, quoteText(p.src[t.pos.Offset:t.end]), t.val)
	}
	p.expected(what)
	panic("unreachable")
}

// qualifiedName consumes a table or view name, possibly qualified by a
// schema ("s.t"); what describes it for the error message.
func (p *parser) qualifiedName(what string) (schema, name string, pos Pos) {
	name, pos = p.ident(what)
	if p.isPunct(".") && isName(p.peek(1)) {
		p.next()
		schema = name
		name, _ = p.ident(what)
	}
	return schema, name, pos
}

// identList parses "(a, b, ...)"; what names the list in error messages.
func (p *parser) identList(what string) []string {
	p.expectPunct("(", "to start "+what)
	var names []string
	for {
		n, _ := p.ident("column name")
		names = append(names, n)
		if p.acceptPunct(",") {
			continue
		}
		if p.acceptPunct(")") {
			return names
		}
		p.expected(`"," or ")" in ` + what)
	}
}

// ---- statements ----

func (p *parser) parseSchema() *Schema {
	sch := &Schema{}
	for p.tok().kind != tEOF {
		if p.acceptPunct(";") {
			continue
		}
		start := p.i
		info := &stmtInfo{}
		p.starts[start] = info
		p.parseStmt(info)
		if info.stmt != nil {
			sch.Stmts = append(sch.Stmts, info.stmt)
		}
		if p.i == start {
			p.next()
		}
		info.name = p.stmt
		p.spans = append(p.spans, stmtSpan{p.toks[start].pos.Offset, p.lastEnd, p.stmt})
		p.stmt = ""
	}
	p.attachAnnotations()
	// Name the statement in errors the scanner reported inside it.
	for _, e := range p.errs {
		if e.Stmt != "" {
			continue
		}
		// Spans are in source order; find the last one starting at or before e.
		i := sort.Search(len(p.spans), func(i int) bool { return p.spans[i].start > e.Pos.Offset }) - 1
		if i >= 0 && e.Pos.Offset < p.spans[i].end {
			e.Stmt = p.spans[i].name
		}
	}
	return sch
}

// parseStmt parses one statement, recovering from errors by skipping to the
// end of the statement.
func (p *parser) parseStmt(info *stmtInfo) {
	start := p.i
	p.stmt = ""
	p.depth = 0
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			info.stmt = nil
			p.sync(start)
		}
	}()
	t := p.tok()
	if !isKw(t, "create") {
		if t.kind == tIdent {
			p.failAt(t.pos, "unsupported statement %s: a schema may contain only create table, create index and create view statements",
				quoteText(p.src[t.pos.Offset:t.end]))
		}
		p.expected("create table, create index or create view statement")
	}
	p.next()
	k := p.tok()
	switch {
	case isKw(k, "table"):
		info.kind = "table"
		p.next()
		info.stmt = p.parseCreateTable(t)
	case isKw(k, "view"):
		info.kind = "view"
		p.next()
		info.stmt = p.parseCreateView(t)
	case isKw(k, "index"):
		info.kind = "index"
		p.next()
		info.stmt = p.parseCreateIndex(t, false)
	case isKw(k, "unique") && isKw(p.peek(1), "index"):
		info.kind = "index"
		p.next()
		p.next()
		info.stmt = p.parseCreateIndex(t, true)
	case k.kind == tIdent:
		p.failAt(t.pos, "unsupported statement \"create %s ...\": a schema may contain only create table, create index and create view statements", k.val)
	default:
		p.expected(`"table", "index" or "view" after "create"`)
	}
}

// sync skips to just after the next ";", or to the next "create" keyword,
// whichever comes first.
func (p *parser) sync(start int) {
	for {
		t := p.tok()
		switch {
		case t.kind == tEOF:
			return
		case isPunct(t, ";"):
			p.next()
			return
		case isKw(t, "create") && p.i > start:
			return
		}
		p.next()
	}
}

// text returns the source of the statement starting at create, up to the
// last consumed token.
func (p *parser) text(create token) string {
	return p.src[create.pos.Offset:p.lastEnd]
}

// endStmt consumes the ";" that ends a statement.
func (p *parser) endStmt(kind string) {
	if !p.acceptPunct(";") {
		p.expected(`";" at end of ` + kind)
	}
}

func (p *parser) parseCreateTable(create token) *CreateTable {
	ct := &CreateTable{Pos: create.pos}
	if p.acceptKw("if") {
		p.expectKw("not", `after "if"`)
		p.expectKw("exists", `after "if not"`)
		ct.IfNotExists = true
	}
	ct.Schema, ct.Name, ct.NamePos = p.qualifiedName("table name")
	p.stmt = ct.Name
	p.expectPunct("(", "after table name")
	for {
		what := p.parseTableElement(ct)
		if p.acceptPunct(",") {
			continue
		}
		if p.isPunct(")") {
			break
		}
		p.expected(`"," or ")" after ` + what)
	}
	p.next()
	if len(ct.Columns) == 0 {
		p.errorAt(ct.NamePos, "table has no columns")
	}
	ct.Text = p.text(create)
	p.endStmt("create table")
	return ct
}

func (p *parser) setPrimaryKey(ct *CreateTable, cols []string, pos Pos) {
	if ct.PrimaryKey != nil {
		p.failAt(pos, "multiple primary keys for table %s are not allowed", ct.Name)
	}
	ct.PrimaryKey = cols
}

// parseTableElement parses a column definition or table constraint and says
// which it was.
func (p *parser) parseTableElement(ct *CreateTable) string {
	t := p.tok()
	if isKw(t, "constraint") {
		p.next()
		p.ident("constraint name")
		if !p.isKw("primary") && !p.isKw("unique") && !p.isKw("foreign") {
			if p.isKw("check") {
				p.failAt(p.tok().pos, "check constraints are not supported")
			}
			p.expected(`"primary key", "unique" or "foreign key" after constraint name`)
		}
	}
	k := p.tok()
	switch {
	case isKw(k, "primary"):
		p.next()
		p.expectKw("key", `after "primary"`)
		p.setPrimaryKey(ct, p.identList("primary key column list"), t.pos)
		return "table constraint"
	case isKw(k, "unique"):
		p.next()
		ct.Unique = append(ct.Unique, p.identList("unique column list"))
		return "table constraint"
	case isKw(k, "foreign"):
		p.next()
		p.expectKw("key", `after "foreign"`)
		fk := &ForeignKey{Pos: t.pos}
		fk.Columns = p.identList("foreign key column list")
		p.expectKw("references", "after foreign key column list")
		fk.RefSchema, fk.RefTable, _ = p.qualifiedName("referenced table name")
		if p.isPunct("(") {
			refPos := p.tok().pos
			fk.RefColumns = p.identList("referenced column list")
			if len(fk.RefColumns) != len(fk.Columns) {
				p.failAt(refPos, "foreign key has %s but references %d", plural(len(fk.Columns), "column"), len(fk.RefColumns))
			}
		}
		ct.ForeignKeys = append(ct.ForeignKeys, fk)
		return "table constraint"
	case isKw(k, "check"):
		p.failAt(k.pos, "check constraints are not supported")
	}
	p.parseColumnDef(ct)
	return "column definition"
}

var noArgTypes = map[string]bool{
	"int": true, "integer": true, "bigint": true, "smallint": true,
	"boolean": true, "bool": true, "text": true,
}

func (p *parser) parseColumnDef(ct *CreateTable) {
	cd := &ColumnDef{}
	cd.Name, cd.Pos = p.ident("column name")
	ct.Columns = append(ct.Columns, cd)

	t := p.tok()
	if t.kind != tIdent && t.kind != tQIdent {
		p.expected("type for column " + cd.Name)
	}
	cd.Type.Name = t.val
	switch {
	case t.kind == tIdent && noArgTypes[t.val]:
		p.next()
		if p.isPunct("(") {
			p.failAt(p.tok().pos, "type %s takes no length", t.val)
		}
	case t.kind == tIdent && (t.val == "varchar" || t.val == "char"):
		p.next()
		if p.acceptPunct("(") {
			n := p.tok()
			v, err := strconv.Atoi(n.val)
			if n.kind != tInt || err != nil || v <= 0 {
				if n.kind == tInt {
					p.failAt(n.pos, "invalid length %s for type %s", n.val, t.val)
				}
				p.expected("length of type " + t.val)
			}
			p.next()
			cd.Type.Args = []int{v}
			p.expectPunct(")", "after type length")
		}
	default:
		p.failAt(t.pos, "unsupported column type %s (supported: int, integer, bigint, smallint, boolean, bool, varchar(n), char(n), text)",
			quoteText(p.src[t.pos.Offset:t.end]))
	}

	for {
		t := p.tok()
		switch {
		case isKw(t, "not"):
			p.next()
			p.expectKw("null", `after "not"`)
			cd.NotNull = true
		case isKw(t, "null"):
			p.next()
		case isKw(t, "primary"):
			p.next()
			p.expectKw("key", `after "primary"`)
			cd.PrimaryKey = true
			p.setPrimaryKey(ct, []string{cd.Name}, t.pos)
		case isKw(t, "unique"):
			p.next()
			cd.Unique = true
			ct.Unique = append(ct.Unique, []string{cd.Name})
		case isKw(t, "references"):
			p.next()
			fk := &ForeignKey{Pos: t.pos, Columns: []string{cd.Name}}
			fk.RefSchema, fk.RefTable, _ = p.qualifiedName("referenced table name")
			if p.isPunct("(") {
				refPos := p.tok().pos
				fk.RefColumns = p.identList("referenced column list")
				if len(fk.RefColumns) != 1 {
					p.failAt(refPos, "a column's references clause must name exactly one column, not %d", len(fk.RefColumns))
				}
			}
			cd.References = fk
			ct.ForeignKeys = append(ct.ForeignKeys, fk)
		case isKw(t, "default"):
			p.next()
			cd.Default = p.parseLiteral(`after "default"`)
		case isKw(t, "constraint"):
			p.next()
			p.ident("constraint name")
		case isKw(t, "check"):
			p.failAt(t.pos, "check constraints are not supported")
		default:
			return
		}
	}
}

// parseLiteral parses a literal, optionally signed.
func (p *parser) parseLiteral(context string) Expr {
	t := p.tok()
	if isPunct(t, "-") || isPunct(t, "+") {
		p.next()
		if k := p.tok().kind; k != tInt && k != tFloat {
			p.expected("number after " + strconv.Quote(t.val))
		}
		x := p.parsePrimary()
		if t.val == "-" {
			return &UnaryExpr{Pos: t.pos, Op: "-", X: x}
		}
		return x
	}
	switch {
	case t.kind == tInt, t.kind == tFloat, t.kind == tString,
		isKw(t, "true"), isKw(t, "false"), isKw(t, "null"):
		return p.parsePrimary()
	}
	p.expected("literal " + context)
	panic("unreachable")
}

func (p *parser) parseCreateIndex(create token, unique bool) *CreateIndex {
	ci := &CreateIndex{Pos: create.pos, Unique: unique}
	ci.Name, _ = p.ident("index name")
	p.stmt = ci.Name
	p.expectKw("on", "after index name")
	ci.TableSchema, ci.Table, _ = p.qualifiedName("table name")
	ci.Columns = p.identList("index column list")
	ci.Text = p.text(create)
	p.endStmt("create index")
	return ci
}

func (p *parser) parseCreateView(create token) *CreateView {
	cv := &CreateView{Pos: create.pos}
	cv.Schema, cv.Name, cv.NamePos = p.qualifiedName("view name")
	p.stmt = cv.Name
	context := "after view name"
	if p.isPunct("(") {
		cv.Columns = p.identList("view column list")
		context = "after view column list"
	}
	p.expectKw("as", context)
	p.unionAt = p.depth + 1
	cv.Query = p.parseSelect(`after "as"`)
	for p.isKw("union") {
		t := p.tok()
		p.next()
		arm := &UnionArm{Pos: t.pos, All: p.acceptKw("all")}
		arm.Select = p.parseSelect(`after "union"`)
		cv.Query.Union = append(cv.Query.Union, arm)
	}
	p.unionAt = 0
	p.parseOrderLimit(cv.Query)
	cv.Text = p.text(create)
	p.endStmt("create view")
	return cv
}

// parseOrderLimit parses the "order by ... limit n" that may end a view's
// query into q.
func (p *parser) parseOrderLimit(q *Select) {
	if p.isKw("order") {
		p.next()
		p.expectKw("by", `after "order"`)
		for {
			it := &OrderItem{Pos: p.tok().pos, Expr: p.parseExpr()}
			if p.acceptKw("desc") {
				it.Desc = true
			} else {
				p.acceptKw("asc")
			}
			q.OrderBy = append(q.OrderBy, it)
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	if p.isKw("limit") {
		t := p.tok()
		p.next()
		n := p.tok()
		v, err := strconv.ParseInt(n.val, 10, 64)
		if n.kind != tInt || err != nil {
			p.expected(`a whole number after "limit"`)
		}
		p.next()
		q.Limit = &Limit{Pos: t.pos, N: v}
	}
	if t := p.tok(); t.kind == tIdent && (t.val == "offset" || t.val == "fetch" || t.val == "order" || t.val == "limit") {
		p.failAt(t.pos, "%s is not supported here: a view may end with order by, then limit", t.val)
	}
}

// ---- annotations ----

// parseAnnotation parses the text of a "-- @name (items)" comment; at is the
// annotation token. It reports errors itself and returns nil on error.
func (p *parser) parseAnnotation(at token) *Annotation {
	s := &scanner{
		src: p.src, off: at.pos.Offset + 1, limit: at.end,
		line: at.pos.Line, lineStart: at.pos.Offset - at.pos.Col + 1,
		errh: func(pos Pos, msg string) { p.errorAt(pos, "%s", msg) },
	}
	a := &Annotation{Pos: at.pos}
	name := s.next()
	if name.kind != tIdent || name.pos.Offset != at.pos.Offset+1 {
		p.errorAt(at.pos, `expected annotation name after "@"`)
		return nil
	}
	a.Name = name.val
	switch a.Name {
	case "variable_columns", "hard_constraint", "soft_constraint":
	default:
		p.errorAt(at.pos, "unknown annotation @%s (known: @variable_columns, @hard_constraint, @soft_constraint)",
			p.src[name.pos.Offset:name.end])
		return nil
	}
	bad := func(t token, what string) *Annotation {
		if t.kind != tIllegal {
			desc := "end of line"
			if t.kind != tEOF {
				desc = p.describe(t)
			}
			p.errorAt(t.pos, "expected %s in @%s, found %s", what, a.Name, desc)
		}
		return nil
	}
	t := s.next()
	if isPunct(t, "(") {
		if a.Name != "variable_columns" {
			p.errorAt(t.pos, "@%s takes no arguments", a.Name)
			return nil
		}
		for {
			t = s.next()
			if t.kind != tIdent && t.kind != tQIdent {
				return bad(t, "column name")
			}
			item := AnnotationItem{Pos: t.pos, Name: t.val}
			for t = s.next(); t.kind == tIdent; t = s.next() {
				item.Options = append(item.Options, t.val)
			}
			a.Items = append(a.Items, item)
			if isPunct(t, ",") {
				continue
			}
			if isPunct(t, ")") {
				break
			}
			return bad(t, `"," or ")"`)
		}
		t = s.next()
	} else if a.Name == "variable_columns" {
		p.errorAt(at.pos, "@variable_columns needs a column list, as in -- @variable_columns (node_name)")
		return nil
	}
	if t.kind != tEOF {
		return bad(t, "end of line")
	}
	return a
}

// attachAnnotations attaches each annotation to the statement that follows
// it, checking that it is allowed there.
func (p *parser) attachAnnotations() {
	defer func() { p.stmt = "" }()
	seen := map[int]map[string]bool{}
	for _, pa := range p.annots {
		a := pa.a
		p.stmt = ""
		info, ok := p.starts[pa.next]
		if !ok {
			t := p.toks[pa.next]
			if t.kind == tEOF || isPunct(t, ";") {
				p.errorAt(a.Pos, "annotation @%s is not followed by a statement", a.Name)
			} else {
				p.errorAt(a.Pos, "annotation @%s inside a statement; annotations go on the lines immediately before create table or create view", a.Name)
			}
			continue
		}
		p.stmt = info.name
		switch info.kind {
		case "":
			continue // the statement itself is in error
		case "index":
			p.errorAt(a.Pos, "annotation @%s cannot be applied to create index", a.Name)
			continue
		case "table":
			if a.Name != "variable_columns" {
				p.errorAt(a.Pos, "@%s applies only to create view, not create table", a.Name)
				continue
			}
		case "view":
			if a.Name == "variable_columns" {
				p.errorAt(a.Pos, "@%s applies only to create table, not create view", a.Name)
				continue
			}
		}
		if seen[pa.next] == nil {
			seen[pa.next] = map[string]bool{}
		}
		s := seen[pa.next]
		switch {
		case s[a.Name]:
			p.errorAt(a.Pos, "duplicate annotation @%s", a.Name)
			continue
		case a.Name == "hard_constraint" && s["soft_constraint"], a.Name == "soft_constraint" && s["hard_constraint"]:
			p.errorAt(a.Pos, "a view cannot be both @hard_constraint and @soft_constraint")
			continue
		}
		s[a.Name] = true
		switch st := info.stmt.(type) {
		case *CreateTable:
			st.Annotations = append(st.Annotations, a)
		case *CreateView:
			st.Annotations = append(st.Annotations, a)
		}
	}
}

// plural returns "1 column", "2 columns", ...
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
