package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// checkView is one view in check's JSON output.
type checkView struct {
	Name string `json:"name"`
	Role string `json:"role"`
	Line int    `json:"line"`
}

func runCheck(args []string, stdout, stderr io.Writer) int {
	var cfg solveConfig
	fs := flagSet("check", &cfg, stderr)
	if code, done := parseFlags(fs, args, stdout, stderr); done {
		return code
	}
	if cfg.schema == "" {
		fmt.Fprintf(stderr, "weave check: --schema is required\n\n%s", usage)
		return exitError
	}
	if cfg.format != "text" && cfg.format != "json" {
		fmt.Fprintf(stderr, "weave check: --format must be text or json, not %q\n\n%s", cfg.format, usage)
		return exitError
	}
	model, err := compileFile(cfg.schema)
	if err != nil {
		reportError(stderr, cfg.schema, err)
		return exitError
	}
	views := model.Views()
	cols := model.VariableColumns()
	if cfg.format == "json" {
		out := struct {
			Views           []checkView `json:"views"`
			VariableColumns []string    `json:"variable_columns"`
		}{Views: []checkView{}, VariableColumns: cols}
		if out.VariableColumns == nil {
			out.VariableColumns = []string{}
		}
		for _, v := range views {
			out.Views = append(out.Views, checkView{Name: v.Name, Role: v.Role, Line: v.Line})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "weave: %v\n", err)
			return exitError
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s: ok, %d views\n", cfg.schema, len(views))
	if len(views) > 0 {
		fmt.Fprintln(tw, "\nVIEW\tROLE\tLINE")
		for _, v := range views {
			fmt.Fprintf(tw, "%s\t%s\t%d\n", v.Name, v.Role, v.Line)
		}
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(stderr, "weave: %v\n", err)
		return exitError
	}
	fmt.Fprintln(stdout, "\ndecision columns:")
	if len(cols) == 0 {
		fmt.Fprintln(stdout, "  (none: nothing to decide)")
	}
	for _, c := range cols {
		fmt.Fprintf(stdout, "  %s\n", c)
	}
	return exitOK
}
