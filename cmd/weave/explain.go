package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/weavesql/weave"
)

// runExplain is "weave explain": it grounds and solves the model once and
// prints, per view, what it became — pushed down to the database, or the
// variables and constraints by kind it contributed — and the model before
// and after the solver's presolve.
func runExplain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var cfg solveConfig
	fs := flagSet("explain", &cfg, stderr)
	if code, done := parseFlags(fs, args, stdout, stderr); done {
		return code
	}
	model, db, code := connectState(ctx, "explain", cfg, stdin, stderr)
	if model == nil {
		return code
	}
	defer db.Close()
	res, err := model.Solve(ctx, weave.SolveOptions{Timeout: cfg.timeout, NoExplain: true})
	if err != nil {
		reportError(stderr, cfg.schema, err)
		return exitError
	}
	report := explainReport(model, res)
	if cfg.format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(report)
	} else {
		err = writeExplain(stdout, report)
	}
	if err != nil {
		fmt.Fprintf(stderr, "weave: writing the report: %v\n", err)
		return exitError
	}
	return exitOK
}

// viewReport is one line of the explain report.
type viewReport struct {
	View        string         `json:"view"`
	Role        string         `json:"role"`
	Line        int            `json:"line,omitempty"`
	Variables   int            `json:"variables"`
	Constraints int            `json:"constraints"`
	ByKind      map[string]int `json:"constraints_by_kind"`
	Presolved   int            `json:"presolved_constraints"`
	PresolvedBy map[string]int `json:"presolved_constraints_by_kind"`
	Note        string         `json:"note,omitempty"`
}

type report struct {
	Status      string         `json:"status"`
	Rewrites    []string       `json:"rewrites"`
	Views       []viewReport   `json:"views"`
	Variables   int            `json:"variables"`
	Constraints int            `json:"constraints"`
	ByKind      map[string]int `json:"constraints_by_kind"`
	Presolved   struct {
		Variables   int            `json:"variables"`
		Constraints int            `json:"constraints"`
		ByKind      map[string]int `json:"constraints_by_kind"`
	} `json:"after_presolve"`
	RowsRead map[string]int `json:"rows_read"`
}

func explainReport(m *weave.Model, res *weave.Result) report {
	st := res.Stats
	r := report{Status: res.Status.String(), Rewrites: m.Rewrites(), Variables: st.Variables, Constraints: st.Constraints,
		ByKind: nonNil(st.ByKind), RowsRead: nonNil(st.Rows)}
	r.Presolved.Variables, r.Presolved.Constraints, r.Presolved.ByKind = st.PresolvedVariables, st.PresolvedConstraints, nonNil(st.PresolvedByKind)
	for _, v := range m.Views() {
		vr := viewReport{View: v.Name, Role: v.Role, Line: v.Line, ByKind: map[string]int{}}
		switch v.Role {
		case "pushdown":
			vr.Note = "evaluated by the database"
			if n, ok := st.Rows[v.Name]; ok {
				vr.Note += fmt.Sprintf("; the model reads its %d rows", n)
			}
		case "intermediate":
			vr.Note = "compiled into the views that read it"
		}
		if vs, ok := st.Views[v.Name]; ok {
			vr.Variables, vr.Constraints, vr.ByKind, vr.Presolved = vs.Variables, vs.Constraints, nonNil(vs.ByKind), vs.Presolved
			vr.PresolvedBy = nonNil(vs.PresolvedByKind)
		}
		r.Views = append(r.Views, vr)
	}
	if vs, ok := st.Views["load"]; ok {
		r.Views = append(r.Views, viewReport{View: "(bin loads)", Role: "shared", Variables: vs.Variables,
			Constraints: vs.Constraints, ByKind: nonNil(vs.ByKind), Presolved: vs.Presolved, PresolvedBy: nonNil(vs.PresolvedByKind), Note: "sums over rows placed on one node, shared by the views above"})
	}
	return r
}

func kinds(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func writeExplain(w io.Writer, r report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "view\trole\tvariables\tconstraints\tafter presolve\tby kind")
	for _, v := range r.Views {
		detail := kinds(v.ByKind)
		if v.Presolved > 0 {
			detail += " -> " + kinds(v.PresolvedBy)
		}
		if v.Note != "" {
			if detail != "" {
				detail += "; "
			}
			detail += v.Note
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", v.View, v.Role, v.Variables, v.Constraints, v.Presolved, detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	rewrites := "none"
	if len(r.Rewrites) > 0 {
		rewrites = strings.Join(r.Rewrites, ", ")
	}
	_, err := fmt.Fprintf(w, "\nrewrites applied: %s\nmodel: %d variables, %d constraints (%s)\nafter presolve: %d variables, %d constraints (%s)\nstatus: %s\n",
		rewrites, r.Variables, r.Constraints, kinds(r.ByKind), r.Presolved.Variables, r.Presolved.Constraints, kinds(r.Presolved.ByKind), r.Status)
	return err
}
