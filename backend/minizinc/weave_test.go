package minizinc_test

import (
	"github.com/weavesql/weave"
	"github.com/weavesql/weave/backend/minizinc"
)

var _ weave.Backend = minizinc.Backend{}
