package scheduler

import (
	"sync"

	"github.com/weavesql/weave"
)

// compiledModels holds each model SQL the process has compiled (a policy
// set: ModelSQL of a kind and the disabled policies), compiled once: New
// connects a Clone of it. Compiling both models took about a tenth of a
// scheduler's start; a process starting several schedulers (the tests
// start hundreds) paid it each time. The compiled program is immutable,
// so the schedulers share it; each clone has its own database and
// prepared statements. There are as many entries as distinct policy sets
// the process runs, a handful.
var compiledModels sync.Map // model SQL -> *compiledModel

type compiledModel struct {
	once  sync.Once
	model *weave.Model // never connected: only cloned
	err   error
}

// compileModel returns an unconnected model of src (compiled with
// CompileOptions), compiling src the first time it is asked for.
func compileModel(src string) (*weave.Model, error) {
	e, _ := compiledModels.LoadOrStore(src, &compiledModel{})
	c := e.(*compiledModel)
	c.once.Do(func() { c.model, c.err = weave.Compile(src, CompileOptions()...) })
	if c.err != nil {
		return nil, c.err
	}
	return c.model.Clone(), nil
}
