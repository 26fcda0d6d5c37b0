package main

import (
	"fmt"

	"github.com/weavesql/weave"
	"github.com/weavesql/weave/backend/minizinc"
)

// backendFor maps --backend to a weave.Backend (nil: the native engine).
func backendFor(name string) (weave.Backend, error) {
	switch name {
	case "", "native", "cp":
		return nil, nil
	case "minizinc", "gecode":
		if !minizinc.Available() {
			return nil, fmt.Errorf("--backend minizinc: the minizinc command is not installed (Debian package minizinc)")
		}
		return minizinc.Backend{Solver: "gecode", Path: "minizinc"}, nil
	}
	return nil, fmt.Errorf("unknown --backend %q (native or minizinc)", name)
}
