package sqlfront

import (
	"reflect"
	"strings"
	"testing"
)

const paperPendingPod = `-- @variable_columns (node_name)
create table pending_pod
(
  pod_name varchar(100) not null primary key,
  status varchar(10) not null,
  namespace varchar(100) not null,
  node_name varchar(100),
  cpu_request bigint not null,
  has_requested_node_affinity boolean not null
);
`

const paperNodePredicates = `-- @hard_constraint
create view constraint_node_predicates as
select * from pending_pod
join node
  on pending_pod.node_name = node.name
where
  node.unschedulable = false and
  node.memory_pressure = false and
  node.disk_pressure = false and
  node.ready = true;
`

const paperLoadBalance = `create view spare_capacity_per_node as
select (node.available_cpu_capacity 
        - sum(pending_pod.cpu_request)) as cpu_spare
from node
join pending_pod
  on pending_pod.node_name = node.name
group by node.name;

-- @soft_constraint
create view constraint_load_balance_cpu as
select min(cpu_spare) from spare_capacity_per_node;
`

const paperNodeAffinity = `-- @hard_constraint
create view constraint_node_affinity as
select *
from pending_pod
where pending_pod.has_requested_node_affinity = false or
      pending_pod.node_name in
         (select node_name
          from candidate_nodes_for_pods
          where pending_pod.pod_name = 
                candidate_nodes_for_pods.pod_name);
`

// statementText returns the exact statement text expected for the i-th
// statement of src: from "create" up to (not including) the ";".
func statementText(src string, i int) string {
	start := 0
	for n := 0; ; n++ {
		c := strings.Index(src[start:], "create ")
		start += c
		end := start + strings.Index(src[start:], ";")
		if n == i {
			return src[start:end]
		}
		start = end
	}
}

func TestPaperPendingPodTable(t *testing.T) {
	s := mustParse(t, paperPendingPod)
	if len(s.Stmts) != 1 {
		t.Fatalf("got %d statements, want 1", len(s.Stmts))
	}
	ct, ok := s.Stmts[0].(*CreateTable)
	if !ok {
		t.Fatalf("got %T, want *CreateTable", s.Stmts[0])
	}
	if ct.Name != "pending_pod" || ct.Pos.String() != "2:1" || ct.NamePos.String() != "2:14" {
		t.Errorf("name/positions: got %q at %v (name at %v), want pending_pod at 2:1 (name at 2:14)", ct.Name, ct.Pos, ct.NamePos)
	}
	if want := statementText(paperPendingPod, 0); ct.Text != want {
		t.Errorf("Text:\n got %q\nwant %q", ct.Text, want)
	}
	if len(ct.Annotations) != 1 {
		t.Fatalf("got %d annotations, want 1", len(ct.Annotations))
	}
	a := ct.Annotations[0]
	wantItems := []AnnotationItem{{Pos: Pos{Offset: 22, Line: 1, Col: 23}, Name: "node_name"}}
	if a.Name != "variable_columns" || a.Pos.String() != "1:4" || !reflect.DeepEqual(a.Items, wantItems) {
		t.Errorf("annotation: got %+v, want @variable_columns at 1:4 with items %+v", a, wantItems)
	}
	type col struct {
		name    string
		typ     string
		args    []int
		notNull bool
		pk      bool
	}
	want := []col{
		{"pod_name", "varchar", []int{100}, true, true},
		{"status", "varchar", []int{10}, true, false},
		{"namespace", "varchar", []int{100}, true, false},
		{"node_name", "varchar", []int{100}, false, false},
		{"cpu_request", "bigint", nil, true, false},
		{"has_requested_node_affinity", "boolean", nil, true, false},
	}
	var got []col
	for _, c := range ct.Columns {
		got = append(got, col{c.Name, c.Type.Name, c.Type.Args, c.NotNull, c.PrimaryKey})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("columns:\n got %+v\nwant %+v", got, want)
	}
	if !reflect.DeepEqual(ct.PrimaryKey, []string{"pod_name"}) {
		t.Errorf("PrimaryKey: got %v, want [pod_name]", ct.PrimaryKey)
	}
}

func TestPaperViews(t *testing.T) {
	tests := []struct {
		name        string
		src         string
		view        int // index of the statement to check
		wantName    string
		annotations []string
		wantQuery   string
	}{
		{
			name:        "the node predicates hard constraint is a join with a conjunction of comparisons",
			src:         paperNodePredicates,
			wantName:    "constraint_node_predicates",
			annotations: []string{"hard_constraint"},
			wantQuery: "(select [*] (from (join pending_pod node (= pending_pod.node_name node.name))) " +
				"(where (and (and (and (= node.unschedulable false) (= node.memory_pressure false)) " +
				"(= node.disk_pressure false)) (= node.ready true))))",
		},
		{
			name:      "the spare capacity view groups a parenthesised difference with an aggregate",
			src:       paperLoadBalance,
			wantName:  "spare_capacity_per_node",
			wantQuery: "(select [(as (paren (- node.available_cpu_capacity (call sum pending_pod.cpu_request))) cpu_spare)] (from (join node pending_pod (= pending_pod.node_name node.name))) (group node.name))",
		},
		{
			name:        "the load balancing soft constraint takes the minimum over a view",
			src:         paperLoadBalance,
			view:        1,
			wantName:    "constraint_load_balance_cpu",
			annotations: []string{"soft_constraint"},
			wantQuery:   "(select [(call min cpu_spare)] (from spare_capacity_per_node))",
		},
		{
			name:        "the node affinity constraint has a correlated in-subquery",
			src:         paperNodeAffinity,
			wantName:    "constraint_node_affinity",
			annotations: []string{"hard_constraint"},
			wantQuery: "(select [*] (from pending_pod) (where (or (= pending_pod.has_requested_node_affinity false) " +
				"(in pending_pod.node_name (select [node_name] (from candidate_nodes_for_pods) " +
				"(where (= pending_pod.pod_name candidate_nodes_for_pods.pod_name)))))))",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustParse(t, tt.src)
			v, ok := s.Stmts[tt.view].(*CreateView)
			if !ok {
				t.Fatalf("statement %d: got %T, want *CreateView", tt.view, s.Stmts[tt.view])
			}
			if v.Name != tt.wantName {
				t.Errorf("Name: got %q, want %q", v.Name, tt.wantName)
			}
			var names []string
			for _, a := range v.Annotations {
				names = append(names, a.Name)
				if len(a.Items) != 0 {
					t.Errorf("annotation @%s: got items %v, want none", a.Name, a.Items)
				}
			}
			if !reflect.DeepEqual(names, tt.annotations) {
				t.Errorf("annotations: got %v, want %v", names, tt.annotations)
			}
			if got := sexpr(v.Query); got != tt.wantQuery {
				t.Errorf("query:\n got %s\nwant %s", got, tt.wantQuery)
			}
			if want := statementText(tt.src, tt.view); v.Text != want {
				t.Errorf("Text:\n got %q\nwant %q", v.Text, want)
			}
		})
	}
}

func TestPaperSchemaAsOneFile(t *testing.T) {
	src := paperPendingPod + "\n" + paperNodePredicates + "\n" + paperLoadBalance + "\n" + paperNodeAffinity
	s := mustParse(t, src)
	var got []string
	for _, st := range s.Stmts {
		switch st := st.(type) {
		case *CreateTable:
			got = append(got, "table "+st.Name+annotationNames(st.Annotations))
		case *CreateView:
			got = append(got, "view "+st.Name+annotationNames(st.Annotations))
		}
	}
	want := []string{
		"table pending_pod @variable_columns",
		"view constraint_node_predicates @hard_constraint",
		"view spare_capacity_per_node",
		"view constraint_load_balance_cpu @soft_constraint",
		"view constraint_node_affinity @hard_constraint",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("statements:\n got %q\nwant %q", got, want)
	}
	// Each statement's Text must be exactly the source between "create" and ";".
	for i, st := range s.Stmts {
		var text string
		switch st := st.(type) {
		case *CreateTable:
			text = st.Text
		case *CreateView:
			text = st.Text
		}
		if want := statementText(src, i); text != want {
			t.Errorf("statement %d Text:\n got %q\nwant %q", i, text, want)
		}
	}
}

func annotationNames(as []*Annotation) string {
	s := ""
	for _, a := range as {
		s += " @" + a.Name
	}
	return s
}

func TestCreateTable(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		check func(t *testing.T, ct *CreateTable)
	}{
		{
			name: "table constraints with names are collected with column-level keys",
			src: `create table if not exists pod_labels (
				pod_name varchar(100) references pending_pod(pod_name),
				label_key varchar(100) not null,
				label_value varchar(100) default 'none',
				idx int unique,
				constraint pk primary key (pod_name, label_key),
				unique (label_key, label_value),
				constraint fk foreign key (label_key, label_value) references labels (k, v)
			);`,
			check: func(t *testing.T, ct *CreateTable) {
				if !ct.IfNotExists {
					t.Error("IfNotExists: got false, want true")
				}
				if !reflect.DeepEqual(ct.PrimaryKey, []string{"pod_name", "label_key"}) {
					t.Errorf("PrimaryKey: got %v", ct.PrimaryKey)
				}
				if want := [][]string{{"idx"}, {"label_key", "label_value"}}; !reflect.DeepEqual(ct.Unique, want) {
					t.Errorf("Unique: got %v, want %v", ct.Unique, want)
				}
				if len(ct.ForeignKeys) != 2 {
					t.Fatalf("got %d foreign keys, want 2", len(ct.ForeignKeys))
				}
				if ct.ForeignKeys[0] != ct.Columns[0].References {
					t.Error("column-level references clause is not the first entry of ForeignKeys")
				}
				fk := ct.ForeignKeys[0]
				if fk.RefTable != "pending_pod" || !reflect.DeepEqual(fk.Columns, []string{"pod_name"}) || !reflect.DeepEqual(fk.RefColumns, []string{"pod_name"}) {
					t.Errorf("column foreign key: got %+v", fk)
				}
				fk = ct.ForeignKeys[1]
				if fk.RefTable != "labels" || !reflect.DeepEqual(fk.Columns, []string{"label_key", "label_value"}) || !reflect.DeepEqual(fk.RefColumns, []string{"k", "v"}) {
					t.Errorf("table foreign key: got %+v", fk)
				}
				if d := ct.Columns[2].Default; sexpr(d) != `"none"` {
					t.Errorf("Default: got %s, want \"none\"", sexpr(d))
				}
				if !ct.Columns[3].Unique {
					t.Error("idx: Unique is false")
				}
			},
		},
		{
			name: "every supported column type is recorded with its arguments",
			src:  `create table t (a int, b integer, c bigint, d smallint, e boolean, f bool, g varchar(5), h char(2), i text, j varchar);`,
			check: func(t *testing.T, ct *CreateTable) {
				var got []string
				for _, c := range ct.Columns {
					s := c.Type.Name
					for _, a := range c.Type.Args {
						s += "(" + string(rune('0'+a)) + ")"
					}
					got = append(got, s)
				}
				want := []string{"int", "integer", "bigint", "smallint", "boolean", "bool", "varchar(5)", "char(2)", "text", "varchar"}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("types: got %v, want %v", got, want)
				}
			},
		},
		{
			name: "keywords are case-insensitive, names fold to lower case and quoted names keep case",
			src:  `CREATE TABLE Pods ("PodName" VARCHAR(10) NOT NULL, Cpu INT DEFAULT -1, "we""ird" bool null);`,
			check: func(t *testing.T, ct *CreateTable) {
				if ct.Name != "pods" {
					t.Errorf("Name: got %q, want pods", ct.Name)
				}
				var got []string
				for _, c := range ct.Columns {
					got = append(got, c.Name)
				}
				if want := []string{"PodName", "cpu", `we"ird`}; !reflect.DeepEqual(got, want) {
					t.Errorf("columns: got %q, want %q", got, want)
				}
				if d := sexpr(ct.Columns[1].Default); d != "(- 1)" {
					t.Errorf("Default: got %s, want (- 1)", d)
				}
				if ct.Columns[2].NotNull {
					t.Error("explicit null column is NotNull")
				}
			},
		},
		{
			name: "comments inside a statement are kept in Text verbatim",
			src:  "create table t ( -- the key\n a int /* note; not the end */ primary key\n)  ;",
			check: func(t *testing.T, ct *CreateTable) {
				if want := "create table t ( -- the key\n a int /* note; not the end */ primary key\n)"; ct.Text != want {
					t.Errorf("Text:\n got %q\nwant %q", ct.Text, want)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustParse(t, tt.src)
			ct, ok := s.Stmts[0].(*CreateTable)
			if !ok {
				t.Fatalf("got %T, want *CreateTable", s.Stmts[0])
			}
			tt.check(t, ct)
		})
	}
}

func TestCreateIndex(t *testing.T) {
	s := mustParse(t, "create index i1 on pod (node_name);\ncreate UNIQUE index i2 on pod (a, b);")
	want := []*CreateIndex{
		{Pos: Pos{0, 1, 1}, Name: "i1", Table: "pod", Columns: []string{"node_name"}, Text: "create index i1 on pod (node_name)"},
		{Pos: Pos{36, 2, 1}, Name: "i2", Table: "pod", Columns: []string{"a", "b"}, Unique: true, Text: "create UNIQUE index i2 on pod (a, b)"},
	}
	for i, w := range want {
		if got := s.Stmts[i]; !reflect.DeepEqual(got, w) {
			t.Errorf("statement %d:\n got %+v\nwant %+v", i, got, w)
		}
	}
}

func TestSelectShapes(t *testing.T) {
	tests := []struct {
		name string
		sql  string // the query of a view
		want string
	}{
		{"select distinct with aliases, qualified stars and a having clause",
			"select distinct t.*, a x, b as y, count(*) from t group by a, b having count(*) > 1",
			"(select-distinct [t.* (as a x) (as b y) (call count *)] (from t) (group a b) (having (> (call count *) 1)))"},
		{"joins are left-deep and bind tighter than commas",
			"select * from a, b inner join c on b.x = c.x join d as dd on dd.y = c.y",
			"(select [*] (from a (join (join b c (= b.x c.x)) (table d dd) (= dd.y c.y))))"},
		{"a derived table needs an alias, with or without as",
			"select s.n from (select count(*) as n from t) s, (select 1 from u) as v",
			"(select [s.n] (from (derived (select [(as (call count *) n)] (from t)) s) (derived (select [1] (from u)) v)))"},
		{"and binds tighter than or, and not tighter than and",
			"select * from t where a = 1 or not b = 2 and c",
			"(select [*] (from t) (where (or (= a 1) (and (not (= b 2)) c))))"},
		{"arithmetic follows the usual precedence and is left-associative",
			"select a - b - c * d % e + -f from t",
			"(select [(+ (- (- a b) (% (* c d) e)) (- f))] (from t))"},
		{"is, in, between and like are comparisons, and != becomes <>",
			"select * from t where a is not null and b not in (1, 2) and c between 1 + 1 and 3 and d not like 'x%' and e != f and g is null",
			"(select [*] (from t) (where (and (and (and (and (and (is-not-null a) (not-in b [1 2])) (between c (+ 1 1) 3)) (not like d \"x%\")) (<> e f)) (is-null g))))"},
		{"exists, not exists and scalar subqueries",
			"select (select max(x) from u) from t where exists (select 1 from u) and not exists (select 1 from v)",
			"(select [(scalar (select [(call max x)] (from u)))] (from t) (where (and (exists (select [1] (from u))) (not-exists (select [1] (from v))))))"},
		{"simple and searched case expressions",
			"select case a when 1 then 'one' else 'many' end, case when b then 1 end from t",
			"(select [(case a (when 1 \"one\") (else \"many\")) (case (when b 1))] (from t))"},
		{"function calls with distinct, several or no arguments",
			"select count(distinct a), coalesce(a, b, 0), now() from t",
			"(select [(call count distinct a) (call coalesce a b 0) (call now)] (from t))"},
		{"decimal literals, strings with quotes and null",
			"select 1.5, 'it''s', null, .5e3 from t",
			"(select [float:1.5 \"it's\" null float:.5e3] (from t))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustParse(t, "create view v as "+tt.sql+";")
			v := s.Stmts[0].(*CreateView)
			if got := sexpr(v.Query); got != tt.want {
				t.Errorf("query:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestExpressionPositions(t *testing.T) {
	src := "create view v as\nselect a.b + 1\nfrom t\nwhere x not in (select y from u) and z is null;"
	s := mustParse(t, src)
	q := s.Stmts[0].(*CreateView).Query
	var got []string
	Inspect(q, func(n Node) bool {
		if n != nil {
			got = append(got, strings.TrimPrefix(reflect.TypeOf(n).String(), "*sqlfront.")+"@"+n.Position().String())
		}
		return true
	})
	want := []string{
		"Select@2:1", "SelectItem@2:8", "BinaryExpr@2:12", "ColumnRef@2:8", "IntLit@2:14",
		"TableRef@3:6", "BinaryExpr@4:34", "InExpr@4:9", "ColumnRef@4:7",
		"Select@4:17", "SelectItem@4:24", "ColumnRef@4:24", "TableRef@4:31",
		"IsNullExpr@4:40", "ColumnRef@4:38",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("nodes in walk order:\n got %v\nwant %v", got, want)
	}
	// Offsets agree with line and column.
	Inspect(q, func(n Node) bool {
		if n == nil {
			return false
		}
		p := n.Position()
		lineStart := strings.LastIndex(src[:p.Offset], "\n") + 1
		if p.Line != strings.Count(src[:p.Offset], "\n")+1 || p.Col != p.Offset-lineStart+1 {
			t.Errorf("%T: offset %d does not match %v", n, p.Offset, p)
		}
		return true
	})
}

func TestWalkDescendsIntoEverySubquery(t *testing.T) {
	src := `create view v as
	select (select 1 from s1) from (select 2 from s2) d
	where a in (select 3 from s3) and exists (select 4 from s4) and not exists (select 5 from s5)
	  and b = case when c in (select 6 from s6) then 1 end;`
	s := mustParse(t, src)
	var tables []string
	Inspect(s, func(n Node) bool {
		if r, ok := n.(*TableRef); ok {
			tables = append(tables, r.Name)
		}
		return true
	})
	want := []string{"s1", "s2", "s3", "s4", "s5", "s6"}
	if !reflect.DeepEqual(tables, want) {
		t.Errorf("tables seen by Inspect: got %v, want %v", tables, want)
	}
	// Returning false prunes the subtree.
	count := 0
	Inspect(s, func(n Node) bool {
		if n == nil {
			return false
		}
		count++
		_, isSelect := n.(*Select)
		return !isSelect
	})
	if count != 3 { // Schema, CreateView, Select
		t.Errorf("pruned walk visited %d nodes, want 3", count)
	}
}

func TestAnnotations(t *testing.T) {
	src := `-- an ordinary comment
-- @variable_columns (node_name nullable, "CPU", mem)

/* a block comment */
-- another ordinary comment mentioning @hard_constraint in passing
create table t (node_name int, "CPU" int, mem int);
create view plain as select * from t;
--@HARD_CONSTRAINT
create view h as select * from t;`
	s := mustParse(t, src)
	ct := s.Stmts[0].(*CreateTable)
	want := []AnnotationItem{
		{Pos: Pos{45, 2, 23}, Name: "node_name", Options: []string{"nullable"}},
		{Pos: Pos{65, 2, 43}, Name: "CPU"},
		{Pos: Pos{72, 2, 50}, Name: "mem"},
	}
	if len(ct.Annotations) != 1 || !reflect.DeepEqual(ct.Annotations[0].Items, want) {
		t.Errorf("variable_columns items:\n got %+v\nwant %+v", ct.Annotations[0].Items, want)
	}
	if n := len(s.Stmts[1].(*CreateView).Annotations); n != 0 {
		t.Errorf("unannotated view has %d annotations", n)
	}
	if as := s.Stmts[2].(*CreateView).Annotations; len(as) != 1 || as[0].Name != "hard_constraint" {
		t.Errorf("view h: got annotations %v, want [@hard_constraint]", as)
	}
}

func TestParseExpr(t *testing.T) {
	e, err := ParseExpr("a.b  +  2 -- trailing comment")
	if err != nil {
		t.Fatal(err)
	}
	if got := sexpr(e); got != "(+ a.b 2)" {
		t.Errorf("got %s, want (+ a.b 2)", got)
	}
	if _, err := ParseExpr("a b"); err == nil || err.Error() != `1:3: expected end of expression, found "b"` {
		t.Errorf("got error %v, want 1:3: expected end of expression, found \"b\"", err)
	}
}

// A view's query may end with order by (terms ascending or descending) and
// then limit; both are kept on its top select and printed back.
func TestParseViewOrderByLimit(t *testing.T) {
	s, err := Parse("create view v as select a, b from t union select c, d from u order by a desc, b asc, a + b limit 3;")
	if err != nil {
		t.Fatal(err)
	}
	q := s.Stmts[0].(*CreateView).Query
	if len(q.OrderBy) != 3 || !q.OrderBy[0].Desc || q.OrderBy[1].Desc || q.OrderBy[2].Desc || q.Limit == nil || q.Limit.N != 3 {
		t.Fatalf("order by %v, limit %v", q.OrderBy, q.Limit)
	}
	if q.Union[0].Select.OrderBy != nil || q.Union[0].Select.Limit != nil {
		t.Error("the order by and limit went to the last arm, not the view's query")
	}
	want := "select a, b from t union select c, d from u order by a desc, b, a + b limit 3"
	if got := FormatSelect(q); got != want {
		t.Errorf("FormatSelect = %q, want %q", got, want)
	}
	if q.Limit.Pos.Col != 92 {
		t.Errorf("limit at column %d, want 92", q.Limit.Pos.Col)
	}
}
