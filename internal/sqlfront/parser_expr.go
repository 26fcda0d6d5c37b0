package sqlfront

import (
	"strconv"
)

// ---- select ----

// parseSelect parses a select block; context describes where it appears,
// for the error message when "select" is missing.
func (p *parser) parseSelect(context string) *Select {
	p.enter()
	defer p.leave()
	t := p.tok()
	if isKw(t, "with") {
		p.failAt(t.pos, "with (common table expressions) is not supported in views")
	}
	if !isKw(t, "select") {
		p.expected(join(`"select"`, context))
	}
	p.next()
	s := &Select{Pos: t.pos}
	if p.acceptKw("distinct") {
		s.Distinct = true
	} else {
		p.acceptKw("all")
	}
	for {
		s.Items = append(s.Items, p.parseSelectItem())
		if !p.acceptPunct(",") {
			break
		}
	}
	if !p.isKw("from") {
		p.checkUnsupportedClause()
		p.expected(`"," or "from" after select item`)
	}
	p.next()
	for {
		s.From = append(s.From, p.parseFromItem())
		if !p.acceptPunct(",") {
			break
		}
	}
	if p.acceptKw("where") {
		s.Where = p.parseExpr()
	}
	if p.isKw("group") {
		p.next()
		p.expectKw("by", `after "group"`)
		for {
			s.GroupBy = append(s.GroupBy, p.parseExpr())
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	if p.acceptKw("having") {
		s.Having = p.parseExpr()
	}
	p.checkUnsupportedClause()
	return s
}

// checkUnsupportedClause fails with a specific message if the current token
// starts a clause that Weave does not support in views.
func (p *parser) checkUnsupportedClause() {
	t := p.tok()
	if t.kind != tIdent {
		return
	}
	switch t.val {
	case "order", "limit":
		if p.depth == p.unionAt {
			return // the end of a view's query (parseCreateView)
		}
		what := "order by"
		if t.val == "limit" {
			what = "limit"
		}
		p.failAt(t.pos, "%s is supported only at the end of a view's query, not in a subquery", what)
	case "offset", "fetch":
		p.failAt(t.pos, "%s is not supported in views", t.val)
	case "union":
		if p.depth == p.unionAt {
			return // a view's next arm (parseCreateView)
		}
		p.failAt(t.pos, "union is supported only between the selects of a view, not in a subquery")
	case "intersect", "except":
		p.failAt(t.pos, "%s is not supported in views", t.val)
	case "window":
		p.failAt(t.pos, "window clauses are not supported in views")
	case "with":
		p.failAt(t.pos, "with (common table expressions) is not supported in views")
	}
}

func (p *parser) parseSelectItem() *SelectItem {
	t := p.tok()
	if isPunct(t, "*") {
		p.next()
		return &SelectItem{Pos: t.pos, Star: true}
	}
	if isName(t) && isPunct(p.peek(1), ".") && isPunct(p.peek(2), "*") {
		p.next()
		p.next()
		p.next()
		return &SelectItem{Pos: t.pos, Star: true, StarTable: t.val}
	}
	item := &SelectItem{Pos: t.pos, Expr: p.parseExpr()}
	item.Alias = p.parseAlias()
	return item
}

// parseAlias parses an optional "[as] alias".
func (p *parser) parseAlias() string {
	if p.acceptKw("as") {
		name, _ := p.ident(`alias after "as"`)
		return name
	}
	if isName(p.tok()) {
		name, _ := p.ident("alias")
		return name
	}
	return ""
}

func (p *parser) parseFromItem() FromItem {
	left := p.parseFromPrimary()
	for {
		t := p.tok()
		if t.kind != tIdent {
			return left
		}
		switch t.val {
		case "join", "inner", "left":
			// A left join keeps the rows of the left side without a match
			// (the right side's columns NULL there). Only the database
			// evaluates it: the analyser rejects it in a view it compiles.
			outer := t.val == "left"
			p.next()
			switch {
			case outer:
				p.acceptKw("outer")
				p.expectKw("join", `after "left"`)
			case t.val == "inner":
				p.expectKw("join", `after "inner"`)
			}
			right := p.parseFromPrimary()
			if u := p.tok(); isKw(u, "using") {
				p.failAt(u.pos, "join ... using is not supported; write the join condition with on")
			}
			p.expectKw("on", "after joined table")
			left = &Join{Pos: t.pos, Left: left, Right: right, On: p.parseExpr(), Outer: outer}
		case "right", "full", "cross", "natural", "outer":
			p.failAt(t.pos, "only inner and left joins are supported")
		default:
			return left
		}
	}
}

func (p *parser) parseFromPrimary() FromItem {
	t := p.tok()
	if isPunct(t, "(") {
		p.next()
		q := p.parseSelect(`after "(" in from clause`)
		p.expectPunct(")", "after subquery")
		d := &DerivedTable{Pos: t.pos, Query: q, Alias: p.parseAlias()}
		if d.Alias == "" {
			p.expected("alias for subquery in from clause")
		}
		return d
	}
	ref := &TableRef{}
	ref.Schema, ref.Name, ref.Pos = p.qualifiedName("table name")
	ref.Alias = p.parseAlias()
	return ref
}

// ---- expressions ----

// parseExpr parses an expression: or < and < not < comparison, is, in,
// between, like < + - < * / % < unary -.
func (p *parser) parseExpr() Expr {
	p.enter()
	defer p.leave()
	x := p.parseAnd()
	for p.isKw("or") {
		t := p.tok()
		p.next()
		x = &BinaryExpr{Pos: t.pos, Op: "or", L: x, R: p.parseAnd()}
	}
	return x
}

func (p *parser) parseAnd() Expr {
	x := p.parseNot()
	for p.isKw("and") {
		t := p.tok()
		p.next()
		x = &BinaryExpr{Pos: t.pos, Op: "and", L: x, R: p.parseNot()}
	}
	return x
}

func (p *parser) parseNot() Expr {
	t := p.tok()
	if isKw(t, "not") && !isKw(p.peek(1), "exists") {
		p.enter()
		defer p.leave()
		p.next()
		return &UnaryExpr{Pos: t.pos, Op: "not", X: p.parseNot()}
	}
	return p.parseComparison()
}

var comparisonOps = map[string]bool{"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true}

func (p *parser) parseComparison() Expr {
	x := p.parseAdditive()
	for {
		t := p.tok()
		if t.kind == tPunct && comparisonOps[t.val] {
			p.next()
			x = &BinaryExpr{Pos: t.pos, Op: t.val, L: x, R: p.parseAdditive()}
			continue
		}
		if t.kind != tIdent {
			return x
		}
		switch t.val {
		case "is":
			p.next()
			not := p.acceptKw("not")
			context := `after "is"`
			if not {
				context = `after "is not"`
			}
			p.expectKw("null", context)
			x = &IsNullExpr{Pos: t.pos, X: x, Not: not}
			continue
		case "not":
			if u := p.peek(1); !isKw(u, "in") && !isKw(u, "between") && !isKw(u, "like") {
				p.next()
				p.expected(`"in", "between" or "like" after "not"`)
			}
			p.next()
			x = p.parsePostfix(x, t.pos, true)
		case "in", "between", "like":
			x = p.parsePostfix(x, t.pos, false)
		default:
			return x
		}
	}
}

// parsePostfix parses the in, between or like operator at the current token
// (after any "not").
func (p *parser) parsePostfix(x Expr, pos Pos, not bool) Expr {
	t := p.tok()
	p.next()
	switch t.val {
	case "in":
		p.expectPunct("(", `after "in"`)
		in := &InExpr{Pos: pos, X: x, Not: not}
		if p.isKw("select") || p.isKw("with") {
			in.Query = p.parseSelect("")
			p.expectPunct(")", "after subquery")
			return in
		}
		for {
			in.List = append(in.List, p.parseExpr())
			if p.acceptPunct(",") {
				continue
			}
			if p.acceptPunct(")") {
				return in
			}
			p.expected(`"," or ")" in "in" list`)
		}
	case "between":
		b := &BetweenExpr{Pos: pos, X: x, Not: not}
		b.Lo = p.parseAdditive()
		p.expectKw("and", `after lower bound of "between"`)
		b.Hi = p.parseAdditive()
		return b
	default: // like
		op := "like"
		if not {
			op = "not like"
		}
		return &BinaryExpr{Pos: pos, Op: op, L: x, R: p.parseAdditive()}
	}
}

func (p *parser) parseAdditive() Expr {
	x := p.parseMultiplicative()
	for {
		t := p.tok()
		if !isPunct(t, "+") && !isPunct(t, "-") {
			return x
		}
		p.next()
		x = &BinaryExpr{Pos: t.pos, Op: t.val, L: x, R: p.parseMultiplicative()}
	}
}

func (p *parser) parseMultiplicative() Expr {
	x := p.parseUnary()
	for {
		t := p.tok()
		if !isPunct(t, "*") && !isPunct(t, "/") && !isPunct(t, "%") {
			return x
		}
		p.next()
		x = &BinaryExpr{Pos: t.pos, Op: t.val, L: x, R: p.parseUnary()}
	}
}

func (p *parser) parseUnary() Expr {
	t := p.tok()
	if isPunct(t, "-") || isPunct(t, "+") {
		p.enter()
		defer p.leave()
		p.next()
		x := p.parseUnary()
		if t.val == "+" {
			return x
		}
		return &UnaryExpr{Pos: t.pos, Op: "-", X: x}
	}
	return p.parsePrimary()
}

func (p *parser) parsePrimary() Expr {
	t := p.tok()
	switch t.kind {
	case tInt:
		v, err := strconv.ParseInt(t.val, 10, 64)
		if err != nil {
			p.failAt(t.pos, "integer literal %s is out of range", t.val)
		}
		p.next()
		return &IntLit{Pos: t.pos, Value: v, Text: t.val}
	case tFloat:
		v, _ := strconv.ParseFloat(t.val, 64)
		p.next()
		return &FloatLit{Pos: t.pos, Value: v, Text: t.val}
	case tString:
		p.next()
		return &StringLit{Pos: t.pos, Value: t.val}
	case tPunct:
		if t.val != "(" {
			break
		}
		p.enter()
		defer p.leave()
		p.next()
		if p.isKw("select") || p.isKw("with") {
			q := p.parseSelect("")
			p.expectPunct(")", "after subquery")
			return &SubqueryExpr{Pos: t.pos, Query: q}
		}
		x := p.parseExpr()
		p.expectPunct(")", "after parenthesised expression")
		return &ParenExpr{Pos: t.pos, X: x}
	case tIdent:
		switch t.val {
		case "true", "false":
			p.next()
			return &BoolLit{Pos: t.pos, Value: t.val == "true"}
		case "null":
			p.next()
			return &NullLit{Pos: t.pos}
		case "case":
			return p.parseCase()
		case "exists":
			p.next()
			return p.parseExists(t.pos, false)
		case "not":
			if isKw(p.peek(1), "exists") {
				p.next()
				p.next()
				return p.parseExists(t.pos, true)
			}
		case "select":
			p.failAt(t.pos, "a subquery must be enclosed in parentheses")
		}
		if reserved[t.val] {
			break
		}
		return p.parseName()
	case tQIdent:
		return p.parseName()
	}
	p.expected("expression")
	panic("unreachable")
}

// parseName parses a column reference or function call.
func (p *parser) parseName() Expr {
	t := p.tok()
	p.next()
	if p.isPunct("(") {
		return p.parseCall(t)
	}
	if p.acceptPunct(".") {
		col, _ := p.ident(`column name after "` + t.val + `."`)
		return &ColumnRef{Pos: t.pos, Table: t.val, Column: col}
	}
	return &ColumnRef{Pos: t.pos, Column: t.val}
}

func (p *parser) parseCall(name token) Expr {
	p.next() // (
	f := &FuncCall{Pos: name.pos, Name: name.val}
	if p.acceptPunct("*") {
		f.Star = true
		p.expectPunct(")", "after "+f.Name+"(*")
		return f
	}
	if p.acceptPunct(")") {
		return f
	}
	f.Distinct = p.acceptKw("distinct")
	for {
		f.Args = append(f.Args, p.parseExpr())
		if p.acceptPunct(",") {
			continue
		}
		if p.acceptPunct(")") {
			return f
		}
		p.expected(`"," or ")" in arguments of ` + f.Name)
	}
}

func (p *parser) parseExists(pos Pos, not bool) Expr {
	p.expectPunct("(", `after "exists"`)
	q := p.parseSelect(`after "exists ("`)
	p.expectPunct(")", "after subquery")
	return &ExistsExpr{Pos: pos, Not: not, Query: q}
}

func (p *parser) parseCase() Expr {
	t := p.tok()
	p.next()
	c := &CaseExpr{Pos: t.pos}
	if !p.isKw("when") {
		c.Operand = p.parseExpr()
	}
	for p.isKw("when") {
		w := &When{Pos: p.tok().pos}
		p.next()
		w.Cond = p.parseExpr()
		p.expectKw("then", "after when condition")
		w.Result = p.parseExpr()
		c.Whens = append(c.Whens, w)
	}
	if len(c.Whens) == 0 {
		p.expected(`"when" in case expression`)
	}
	if p.acceptKw("else") {
		c.Else = p.parseExpr()
		p.expectKw("end", "to close case expression")
		return c
	}
	if !p.acceptKw("end") {
		p.expected(`"when", "else" or "end" in case expression`)
	}
	return c
}
