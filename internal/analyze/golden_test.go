package analyze

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected IR of the golden files in ../ir/testdata")

// goldenSep separates a golden file's SQL from its expected IR.
const goldenSep = "\n----\n"

// TestGoldenIR compiles each ../ir/testdata/*.txt (SQL, a line "----",
// then the expected Program.String()) and compares the printed IR. Run
// with -rewrite to regenerate the expected parts after an intended change.
func TestGoldenIR(t *testing.T) {
	files, err := filepath.Glob("../ir/testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 8 {
		t.Fatalf("only %d golden files", len(files))
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			src, want, ok := strings.Cut(string(b), goldenSep)
			if !ok {
				t.Fatalf("%s: no %q line", file, strings.TrimSpace(goldenSep))
			}
			p, err := analyzeSQL(t, src)
			if err != nil {
				t.Fatalf("%s: %s", file, errorText(t, err))
			}
			got := p.String()
			if *rewrite {
				if got != want {
					if err := os.WriteFile(file, []byte(src+goldenSep+got), 0o644); err != nil {
						t.Fatal(err)
					}
					t.Logf("rewrote %s", file)
				}
				return
			}
			if got != want {
				t.Errorf("%s: IR differs (run go test ./internal/analyze -run TestGoldenIR -rewrite and review the diff)\ngot:\n%s\nwant:\n%s", file, got, want)
			}
		})
	}
}
