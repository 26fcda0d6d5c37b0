package differential

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/weavesql/weave/cmd/weave-scheduler/app"
	"github.com/weavesql/weave/e2e/internal/oracle"
	"github.com/weavesql/weave/e2e/internal/oracle/gen"
	"github.com/weavesql/weave/scheduler"
)

// Environment:
//
//	WEAVE_DIFF_CASES=n   the number of cases (default defaultCases), seeds 1..n
//	WEAVE_DIFF_SEED=s    only the case of seed s, every finding printed in full
//	WEAVE_DIFF_WORKERS=w cases decided at once (default: one per CPU)
//	WEAVE_DIFF_ATTRIBUTE=m explain up to m missed placements (which weave policy keeps the pod off: many
//	                     app.Decide runs each)
const defaultCases = 250

func seeds(t *testing.T) []int64 {
	if s := os.Getenv("WEAVE_DIFF_SEED"); s != "" {
		seed, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("WEAVE_DIFF_SEED: %v", err)
		}
		return []int64{seed}
	}
	n := defaultCases
	if s := os.Getenv("WEAVE_DIFF_CASES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatalf("WEAVE_DIFF_CASES: %v", err)
		}
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i + 1)
	}
	return out
}

func workers(t *testing.T) int { return envInt(t, "WEAVE_DIFF_WORKERS", runtime.GOMAXPROCS(0)) }

func envInt(t *testing.T, name string, def int) int {
	if s := os.Getenv(name); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return n
	}
	return def
}

func newOracle(t *testing.T) *oracle.Oracle {
	t.Helper()
	o, err := oracle.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	return o
}

// TestDifferential: on random cluster states, weave-scheduler binds a pod only where kube-scheduler v1.37.2's
// Filter plugins allow it, calls unschedulable only pods that fit no node once its bindings are made, names
// the field of every refusal, and leaves gated pods alone.
func TestDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("differential run: hundreds of cases")
	}
	ss := seeds(t)
	s := Run(t.Context(), newOracle(t), Options{App: app.DefaultConfig(), Workers: workers(t), Attribute: envInt(t, "WEAVE_DIFF_ATTRIBUTE", 0)}, ss)
	t.Log("\n" + s.Report())
	for _, err := range s.Errors {
		t.Error(err)
	}
	if s.Cases != len(ss) && len(s.Errors) == 0 {
		t.Fatalf("%d cases judged of %d", s.Cases, len(ss))
	}
	if len(ss) == 1 {
		// One case: the whole state and every finding in full.
		c := gen.Generate(ss[0], gen.Options{})
		d, err := app.Decide(t.Context(), app.DefaultConfig(), app.Snapshot{Nodes: c.Nodes, Pods: c.Pods(), Namespaces: c.Namespaces})
		if err != nil {
			t.Fatalf("%s\n%v", DescribeCase(c, d), err)
		}
		r, err := Judge(t.Context(), newOracle(t), c, d)
		if err != nil {
			t.Fatal(err)
		}
		t.Log("\n" + DescribeCase(c, d))
		for _, f := range r.Findings {
			if f.Kind == MissedPlacement {
				if f.Why, err = Attribute(t.Context(), app.DefaultConfig(), r, f); err != nil {
					t.Error(err)
				}
			}
			t.Log("\n" + r.Describe(f))
		}
	}
	if n := s.Findings(); n > 0 {
		var b strings.Builder
		for _, c := range s.SortedCategories() {
			fmt.Fprintf(&b, "  %5d × %s (%d cases, e.g. WEAVE_DIFF_SEED=%d)\n", c.Findings, c.Name, len(c.Seeds), c.ExampleCase.Case.Seed)
		}
		t.Errorf("%d findings over %d cases (wrong bindings %d, missed placements %d); details above:\n%s",
			n, s.Cases, s.Findings(WrongBinding), s.Findings(MissedPlacement), b.String())
	}
}

// TestDifferentialCatchesDisabledCapacity: with weave's resource-capacity policy (H5) disabled, the oracle
// finds pods bound to nodes they do not fit. The states are plain (CPU, memory and pod counts only), so that
// nothing but the mutation can make NodeResourcesFit reject a binding.
func TestDifferentialCatchesDisabledCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("differential run")
	}
	found := false
	for _, id := range scheduler.PolicyIDs() {
		found = found || id == "H5"
	}
	if !found {
		t.Fatalf("no policy H5 among %v", scheduler.PolicyIDs())
	}
	cfg := app.DefaultConfig()
	cfg.DisabledPolicies = []string{"H5"}
	o := newOracle(t)
	ss := make([]int64, 12)
	for i := range ss {
		ss[i] = int64(i + 1)
	}
	s := Run(t.Context(), o, Options{App: cfg, Gen: gen.Options{Plain: true}, Workers: workers(t)}, ss)
	for _, err := range s.Errors {
		t.Error(err)
	}
	fit := 0
	for _, c := range s.Categories {
		if strings.HasPrefix(c.Name, string(WrongBinding)+": NodeResourcesFit: Insufficient") {
			fit += c.Findings
		}
	}
	t.Logf("H5 disabled: %d wrong bindings rejected by NodeResourcesFit over %d cases\n%s", fit, s.Cases, s.Report())
	if fit == 0 {
		t.Fatalf("with H5 disabled the oracle found no binding rejected by NodeResourcesFit over %d cases", s.Cases)
	}
}

// TestDifferentialPlainCasesAgree is the control of the mutation check: on the same plain states, with every
// policy on, the oracle rejects no binding.
func TestDifferentialPlainCasesAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("differential run")
	}
	ss := make([]int64, 12)
	for i := range ss {
		ss[i] = int64(i + 1)
	}
	s := Run(t.Context(), newOracle(t), Options{App: app.DefaultConfig(), Gen: gen.Options{Plain: true}, Workers: workers(t)}, ss)
	for _, err := range s.Errors {
		t.Error(err)
	}
	t.Logf("plain cases, every policy on:\n%s", s.Report())
	if n := s.Findings(WrongBinding, DecideError); n > 0 {
		t.Errorf("%d wrong bindings or failures on plain cases", n)
	}
}
