// Package minizinc solves cp models with MiniZinc (Gecode by default): Emit
// translates a model to MiniZinc, Backend runs minizinc on it and maps the
// solution back (it implements weave.Backend), Flatten reports the size of
// the FlatZinc a model compiles to.
//
// The package's tests compare the native engine with Gecode on thousands
// of random models; they need minizinc on PATH and skip without it, unless
// WEAVE_REQUIRE_MINIZINC=1 (see package mzntest).
package minizinc
