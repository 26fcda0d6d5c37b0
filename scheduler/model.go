package scheduler

import "github.com/weavesql/weave"

func compileOptions() []weave.CompileOption { return nil }
