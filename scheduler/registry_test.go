package scheduler

import (
	"testing"

	"github.com/weavesql/weave"
)

func TestModelsCompile(t *testing.T) {
	for _, k := range []ModelKind{Placement, Preemption} {
		m, err := weave.Compile(SchemaSQL(k), CompileOptions()...)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		for _, v := range m.Views() {
			t.Logf("%s: %s %s", k, v.Name, v.Role)
		}
	}
}
