package cp

import (
	"context"
	"testing"
)

// FuzzModel builds random models from bytes and checks that building and
// solving never panic and that any returned solution verifies.
func FuzzModel(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{255, 0, 255, 0, 17, 33, 91, 200, 3, 3, 3})
	f.Add([]byte("weave placement model"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m := genModel(&byteChooser{b: data})
		r, err := m.Solve(context.Background(), Params{NodeLimit: 2000})
		if r == nil {
			t.Fatal("nil response")
		}
		if err != nil {
			if r.Status != ModelInvalid {
				t.Fatalf("error %v with status %v", err, r.Status)
			}
			return
		}
		if r.HasSolution() {
			if err := m.Verify(r); err != nil {
				t.Fatal(err)
			}
		}
	})
}
