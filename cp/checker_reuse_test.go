package cp

import (
	"context"
	"testing"
	"time"
)

// A question without assumptions that search refutes must not leave the
// checker's root changed: exactly_one(v, v) is infeasible however often
// it is asked (the search's refutation of v = 1 used to be applied at
// level 0, and the next question started from that inconsistent root).
func TestCheckerRepeatsARootRefutation(t *testing.T) {
	m := NewModel()
	v := m.NewBoolVar("v")
	m.AddExactlyOne(v, v)
	ch := m.NewChecker()
	for q := 0; q < 3; q++ {
		if st := ch.Check(context.Background(), nil, time.Now().Add(5*time.Second), 100); st != Infeasible {
			t.Fatalf("question %d: %s, want INFEASIBLE", q, st)
		}
	}
}
