package minizinc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/weavesql/weave/cp"
)

// Backend solves cp models with MiniZinc and one of its solvers. The zero
// value uses Gecode through the minizinc found on PATH. It implements
// weave.Backend (pass it as weave.SolveOptions.Backend); the package does
// not import weave, so that it depends on cp only and not on the SQL
// engine (weave_test.go checks the interface).
type Backend struct {
	// Solver is the MiniZinc solver id or tag; "" means "gecode".
	Solver string
	// Path is the minizinc executable; "" means "minizinc" on PATH.
	Path string
	// ExtraArgs are appended to the minizinc command line.
	ExtraArgs []string
	// Style is the emission style; the zero value is Optimized. Naive
	// reproduces the paper's unoptimised MiniZinc (see Style).
	Style Style
}

// ErrOutOfRange is returned when a model holds values that Gecode's 32-bit
// integers cannot represent.
var ErrOutOfRange = errors.New("minizinc: value out of the solver's integer range")

// ErrMiniZinc marks a failure reported by minizinc itself (=====ERROR=====,
// a crash, unparsable output).
var ErrMiniZinc = errors.New("minizinc: solver failure")

// gecodeMax is Gecode's Int::Limits::max (and -gecodeMax its min).
const gecodeMax = 1<<31 - 2

func (b Backend) solver() string {
	if b.Solver == "" {
		return "gecode"
	}
	return b.Solver
}

func (b Backend) path() string {
	if b.Path == "" {
		return "minizinc"
	}
	return b.Path
}

// Name returns "minizinc/<solver>".
func (b Backend) Name() string { return "minizinc/" + b.solver() }

// Available reports whether the default minizinc is on PATH and runs.
func Available() bool { return Backend{}.Available() }

// Available reports whether b's minizinc executable runs.
func (b Backend) Available() bool {
	p, err := exec.LookPath(b.path())
	if err != nil {
		return false
	}
	return exec.Command(p, "--version").Run() == nil
}

// Solve emits m, runs minizinc on it and maps the last solution printed
// back to m's variables. Status: Optimal when minizinc reports the search
// complete (==========) or, without an objective, on any solution (cp's
// convention); Feasible for a solution of an optimisation problem whose
// search was cut by the time limit or ctx; Infeasible on
// =====UNSATISFIABLE=====; Unknown otherwise. Params.TimeLimit becomes
// --time-limit, Seed -r, Workers -p; NodeLimit and
// StopAfterFirstSolution are not supported by this backend and ignored.
// Assumptions are solved as hard constraints: Response.Core stays empty.
// When ctx ends the process group is killed and the best solution so far
// is returned, as the native engine does.
func (b Backend) Solve(ctx context.Context, m *cp.Model, p cp.Params) (*cp.Response, error) {
	start := time.Now()
	if err := m.Err(); err != nil {
		return &cp.Response{Status: cp.ModelInvalid}, err
	}
	if b.solver() == "gecode" {
		if err := checkGecodeRange(m); err != nil {
			return &cp.Response{Status: cp.ModelInvalid}, err
		}
	}
	e, src, err := emit(m, b.Style)
	if err != nil {
		return &cp.Response{Status: cp.ModelInvalid}, err
	}
	// A constant objective is emitted as "solve satisfy" (see emit): any
	// solution is optimal, and minizinc prints no "==========" for it.
	obj, hasObj := m.Objective()
	hasObj = hasObj && len(obj.Expr.Vars) > 0
	args := []string{"--solver", b.solver(), "--output-mode", "dzn"}
	if hasObj {
		args = append(args, "--intermediate-solutions")
	}
	if p.TimeLimit > 0 {
		args = append(args, "--time-limit", strconv.FormatInt(max(1, p.TimeLimit.Milliseconds()), 10))
	}
	args = append(args, "-r", strconv.FormatInt(p.Seed, 10))
	if w := p.Workers; w > 1 || w < 0 {
		if w < 0 {
			w = runtime.GOMAXPROCS(0)
		}
		args = append(args, "-p", strconv.Itoa(w))
	}
	args = append(args, b.ExtraArgs...)
	out, runErr := b.run(ctx, src, args)
	res, perr := parseOutput(out, "", m.NumVars(), e.skip)
	resp := &cp.Response{Status: cp.Unknown}
	if res.values != nil {
		e.complete(res.values)
		resp = m.NewResponseFromValues(res.values)
		resp.Status = cp.Feasible
		if res.complete || !hasObj {
			resp.Status = cp.Optimal
		}
		resp.Bound = resp.Objective
		if resp.Status != cp.Optimal {
			resp.Bound = 0
		}
	} else if res.unsat {
		resp.Status = cp.Infeasible
	}
	resp.Stats.Variables, resp.Stats.Constraints = m.NumVars(), m.NumConstraints()
	resp.Stats.Solutions = int64(res.solutions)
	resp.Stats.Search = time.Since(start)
	switch {
	case ctx.Err() != nil:
		return resp, nil // cut by the caller: best so far, as cp.Model.Solve
	case res.errored || perr != nil:
		return resp, fmt.Errorf("%w: %v\n%s", ErrMiniZinc, errors.Join(perr, runErr), tail(out.stderr))
	case runErr != nil && res.values == nil && !res.unsat:
		return resp, fmt.Errorf("%w: %v\n%s", ErrMiniZinc, runErr, tail(out.stderr))
	}
	return resp, nil
}

// checkGecodeRange rejects models with domain values beyond Gecode's
// integer limits, which Gecode would report as a parse error.
func checkGecodeRange(m *cp.Model) error {
	for i := 0; i < m.NumVars(); i++ {
		d := m.VarDomain(i)
		if d.Min() < -gecodeMax || d.Max() > gecodeMax {
			return fmt.Errorf("%w: variable %v has domain [%d, %d], Gecode handles ±%d", ErrOutOfRange, m.Var(i), d.Min(), d.Max(), int64(gecodeMax))
		}
	}
	return nil
}

func tail(s []byte) string {
	const n = 2000
	s = bytes.TrimSpace(s)
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return string(s)
}

type procOutput struct {
	stdout, stderr []byte
}

// run writes src to a temporary .mzn file and runs minizinc on it with
// args; ctx kills the whole process group (minizinc and its solver).
func (b Backend) run(ctx context.Context, src string, args []string) (procOutput, error) {
	dir, err := os.MkdirTemp("", "weave-mzn-")
	if err != nil {
		return procOutput{}, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "model.mzn")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		return procOutput{}, err
	}
	cmd := exec.CommandContext(ctx, b.path(), append(args, file)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Dir = dir
	setProcessGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Run()
	return procOutput{stdout.Bytes(), stderr.Bytes()}, err
}

// result is what parseOutput extracts from minizinc's output.
type result struct {
	values    []int64 // last complete solution, nil if none
	solutions int
	complete  bool // ==========
	unsat     bool // =====UNSATISFIABLE=====
	errored   bool // =====ERROR=====
}

var assignRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_]*) = (-?[0-9]+);$`)

// parseOutput reads dzn output: assignments "x<i> = v;" (the variable
// names carrying prefix), solution separators and status lines. A
// solution counts only once its separator ---------- is read, and must
// assign all n variables but those marked in skip (nil: none), which
// were not declared.
func parseOutput(out procOutput, prefix string, n int, skip []bool) (result, error) {
	var r result
	want := n
	for _, s := range skip {
		if s {
			want--
		}
	}
	cur := make([]int64, n)
	seen := make([]bool, n)
	nseen := 0
	sc := bufio.NewScanner(bytes.NewReader(out.stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	var perr error
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "----------":
			if nseen != want {
				perr = fmt.Errorf("solution assigns %d of %d variables", nseen, want)
			} else {
				r.values = append([]int64(nil), cur...)
			}
			r.solutions++
			clear(seen)
			nseen = 0
		case line == "==========":
			r.complete = true
		case line == "=====UNSATISFIABLE=====":
			r.unsat = true
		case line == "=====ERROR=====":
			r.errored = true
		case strings.HasPrefix(line, "====="): // UNKNOWN, UNBOUNDED, UNSATorUNBOUNDED
		default:
			g := assignRE.FindStringSubmatch(line)
			if g == nil || !strings.HasPrefix(g[1], prefix+"x") {
				continue
			}
			i, err := strconv.Atoi(g[1][len(prefix)+1:])
			if err != nil || i < 0 || i >= n || (skip != nil && skip[i]) {
				continue
			}
			v, err := strconv.ParseInt(g[2], 10, 64)
			if err != nil {
				perr = fmt.Errorf("bad value in %q", line)
				continue
			}
			if !seen[i] {
				seen[i] = true
				nseen++
			}
			cur[i] = v
		}
	}
	return r, perr
}

// Stats describes the FlatZinc a model flattens to.
type Stats struct {
	Variables   int // FlatZinc var declarations (not arrays of them)
	Constraints int // FlatZinc constraint items
	Duration    time.Duration
}

// Flatten compiles a MiniZinc model for b's solver (minizinc -c) and
// counts the FlatZinc variables and constraints.
func (b Backend) Flatten(ctx context.Context, model string) (Stats, error) {
	start := time.Now()
	dir, err := os.MkdirTemp("", "weave-mzn-")
	if err != nil {
		return Stats{}, err
	}
	defer os.RemoveAll(dir)
	in, fzn := filepath.Join(dir, "model.mzn"), filepath.Join(dir, "model.fzn")
	if err := os.WriteFile(in, []byte(model), 0o600); err != nil {
		return Stats{}, err
	}
	cmd := exec.CommandContext(ctx, b.path(), "-c", "--solver", b.solver(), "--no-output-ozn", "-o", fzn, in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	setProcessGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Run(); err != nil {
		return Stats{}, fmt.Errorf("%w: minizinc -c: %v\n%s", ErrMiniZinc, err, tail(stderr.Bytes()))
	}
	st := Stats{Duration: time.Since(start)}
	f, err := os.ReadFile(fzn)
	if err != nil {
		return Stats{}, err
	}
	for _, line := range strings.Split(string(f), "\n") {
		switch line = strings.TrimSpace(line); {
		case strings.HasPrefix(line, "var "):
			st.Variables++
		case strings.HasPrefix(line, "constraint "):
			st.Constraints++
		}
	}
	return st, nil
}

// Flatten is Backend{}.Flatten: Gecode through the minizinc on PATH.
func Flatten(ctx context.Context, model string) (Stats, error) {
	return Backend{}.Flatten(ctx, model)
}
