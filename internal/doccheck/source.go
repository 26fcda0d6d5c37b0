package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// goFiles returns the .go files under dir (recursively when deep), test
// files or the others, skipping testdata.
func goFiles(dir string, deep, tests bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && (!deep || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") && strings.HasSuffix(p, "_test.go") == tests {
			files = append(files, p)
		}
		return nil
	})
	return files, err
}

// flagDefiners are the methods of package flag (and pflag) that define a
// flag, with the index of the argument that names it.
var flagDefiners = map[string]int{
	"String": 0, "Bool": 0, "Int": 0, "Int64": 0, "Uint": 0, "Uint64": 0, "Float64": 0, "Duration": 0, "Func": 0, "BoolFunc": 0,
	"StringVar": 1, "BoolVar": 1, "IntVar": 1, "Int64Var": 1, "UintVar": 1, "Uint64Var": 1, "Float64Var": 1, "DurationVar": 1, "Var": 1, "TextVar": 1,
}

// FlagNames returns the flags that the Go sources under dir (recursively,
// test files left out) define with package flag's methods and a literal
// name: a static view of a program's flags, for programs the tests cannot
// link (another module's) or run. Flags defined by other libraries are
// not seen.
func FlagNames(dir string) (map[string]bool, error) {
	files, err := goFiles(dir, true, false)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			i, ok := flagDefiners[sel.Sel.Name]
			if !ok || len(call.Args) <= i {
				return true
			}
			if lit, ok := call.Args[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					names[s] = true
				}
			}
			return true
		})
	}
	return names, nil
}

// TestFuncs returns the names of the Test, Benchmark, Example and Fuzz
// functions of the test files in dir (under it, when deep).
func TestFuncs(dir string, deep bool) ([]string, error) {
	files, err := goFiles(dir, deep, true)
	if err != nil {
		return nil, err
	}
	var names []string
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil {
				continue
			}
			for _, p := range []string{"Test", "Benchmark", "Example", "Fuzz"} {
				if strings.HasPrefix(fn.Name.Name, p) {
					names = append(names, fn.Name.Name)
				}
			}
		}
	}
	return names, nil
}

// IsMainPackage reports whether dir holds a Go main package.
func IsMainPackage(dir string) bool {
	files, err := goFiles(dir, false, false)
	if err != nil {
		return false
	}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.PackageClauseOnly)
		if err == nil && file.Name.Name == "main" {
			return true
		}
	}
	return false
}

// Unmentioned returns those of the strings that no Go file under root
// (both modules' sources and tests) holds as a string literal: an
// environment variable the docs set must be one the code reads.
func Unmentioned(root string, strs []string) ([]string, error) {
	files, err := goFiles(root, true, false)
	if err != nil {
		return nil, err
	}
	tests, err := goFiles(root, true, true)
	if err != nil {
		return nil, err
	}
	found := map[string]bool{}
	for _, f := range append(files, tests...) {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, s := range strs {
			if !found[s] && strings.Contains(string(data), strconv.Quote(s)) {
				found[s] = true
			}
		}
	}
	var missing []string
	for _, s := range strs {
		if !found[s] {
			missing = append(missing, s)
		}
	}
	return missing, nil
}
