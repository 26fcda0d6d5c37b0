package analyze

import (
	"errors"
	"testing"

	"github.com/weavesql/weave/internal/sqlfront"
)

// FuzzAnalyzeView analyses the base schema plus one fuzzed view body
// ("select ..." after "create view v as"), under each annotation. Analyze
// must not panic; an error must be a sorted, positioned ErrorList; a
// success must satisfy checkProgram's invariants.
func FuzzAnalyzeView(f *testing.F) {
	for _, s := range []string{
		"select * from pod join node on pod.node_name = node.name where node.ready",
		"select node_name, count(*) as n from pod group by node_name having count(*) < 3",
		"select node_name, all_different(cpu) from pod group by node_name",
		"select sum(case when node_name is null then 1 else 0 end) from pod",
		"select name from node where exists (select 1 from pod where pod.node_name = node.name and pod.cpu > (select min(cpu) from pod p2 where p2.node_name = node.name))",
		"select name from node n where n.name not in (select node_name from pod) and n.cpu between 1 and 10",
		"select d.x from (select cpu * 2 as x from node) d where d.x in (1, 2, 3)",
		"select coalesce(node_name, 'none') as c from pod where node_name = 'a' or cpu / 2 > 1",
		"select node.name, node.cpu - sum(pod.cpu) as spare from node join pod on pod.node_name = node.name group by node.name having sum(pod.cpu) <= node.cpu",
		"select count(*) from pod where node_name in (select name from node where name like 'a%')",
		"select node_name, (select count(*) from node where node.cpu = pod.cpu) as c from pod group by node_name",
	} {
		for k := byte(0); k < 3; k++ {
			f.Add(k, s)
		}
	}
	annotations := []string{"", "-- @hard_constraint\n", "-- @soft_constraint\n"}
	f.Fuzz(func(t *testing.T, kind byte, body string) {
		src := base + "create view w as select name, cpu from node where ready;\n" +
			annotations[int(kind)%len(annotations)] + "create view v as " + body + ";"
		s, err := sqlfront.Parse(src)
		if err != nil {
			return
		}
		p, err := Analyze(s, testOptions)
		if err != nil {
			var list sqlfront.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is not a non-empty ErrorList: %T %v", err, err)
			}
			for i, e := range list {
				if !e.Pos.IsValid() || e.Pos.Col < 1 || e.Pos.Offset < 0 || e.Pos.Offset > len(src) {
					t.Fatalf("error with an invalid position: %v (%+v)", e, e.Pos)
				}
				if i > 0 && list[i-1].Pos.Offset > e.Pos.Offset {
					t.Fatalf("errors not sorted: %v before %v", list[i-1], e)
				}
			}
			return
		}
		if err := checkProgram(p); err != nil {
			t.Fatalf("invariant: %v\n%s\n%s", err, src, p)
		}
		_ = p.String()
	})
}
