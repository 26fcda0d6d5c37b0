package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/weavesql/weave"
)

// jsonResult is the JSON form of a solve: one object, the command's
// contract with other tools.
type jsonResult struct {
	Status      string                  `json:"status"`
	Objective   *int64                  `json:"objective"`
	Soft        map[string]int64        `json:"soft_constraints"`
	Tables      map[string][]orderedRow `json:"tables"`
	Stats       jsonStats               `json:"stats"`
	Explanation *weave.Explanation      `json:"explanation,omitempty"`
}

type jsonStats struct {
	Variables   int            `json:"variables"`
	Constraints int            `json:"constraints"`
	ByKind      map[string]int `json:"constraints_by_kind"`
	ByView      map[string]int `json:"constraints_by_view"`
	RowsRead    map[string]int `json:"rows_read"`
	FetchMS     float64        `json:"fetch_ms"`
	GroundMS    float64        `json:"ground_ms"`
	SolveMS     float64        `json:"solve_ms"`
	ExtractMS   float64        `json:"extract_ms"`
	VerifyMS    float64        `json:"verify_ms"`
	// Views details what each hard and soft view added, before and
	// after presolve (as weave explain prints it).
	Views map[string]weave.ViewStats `json:"views"`
}

// orderedRow is a solved row encoded as a JSON object whose keys follow
// the schema's column order.
type orderedRow struct {
	cols []string
	row  weave.Row
}

func (r orderedRow) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range r.cols {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(r.row[c])
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// nonNil returns m, or an empty map so that JSON has {} rather than null.
func nonNil[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return m
}

func toJSON(res *weave.Result) jsonResult {
	out := jsonResult{
		Status:    res.Status.String(),
		Objective: res.Objective,
		Soft:      nonNil(res.Soft),
		Tables:    map[string][]orderedRow{},
		Stats: jsonStats{
			Variables:   res.Stats.Variables,
			Constraints: res.Stats.Constraints,
			ByKind:      nonNil(res.Stats.ByKind),
			ByView:      nonNil(res.Stats.PerView),
			RowsRead:    nonNil(res.Stats.Rows),
			FetchMS:     ms(res.Stats.Fetch),
			GroundMS:    ms(res.Stats.Ground),
			SolveMS:     ms(res.Stats.Solve),
			ExtractMS:   ms(res.Stats.Extract),
			VerifyMS:    ms(res.Stats.Verify),
			Views:       nonNil(res.Stats.Views),
		},
	}
	if !res.Status.HasSolution() {
		out.Objective = nil
		out.Soft = map[string]int64{}
		out.Explanation = res.Explanation
		return out
	}
	for name, t := range res.Tables {
		rows := make([]orderedRow, 0, len(t.Rows))
		for _, r := range t.Rows {
			rows = append(rows, orderedRow{cols: t.Columns, row: r})
		}
		out.Tables[name] = rows
	}
	return out
}

// writeJSON prints the result as exactly one JSON object.
func writeJSON(w io.Writer, res *weave.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(toJSON(res))
}

// writeText prints the result for people: status, objective, each soft
// constraint, each solved table aligned in schema column order, then a
// one-line stats summary. Soft constraints are listed in the order of
// views (the schema's order), then any others by name.
func writeText(w io.Writer, res *weave.Result, views []weave.ViewInfo) error {
	var b strings.Builder
	fmt.Fprintf(&b, "status: %s\n", res.Status)
	if res.Status.HasSolution() {
		if res.Objective != nil {
			fmt.Fprintf(&b, "objective: %d\n", *res.Objective)
		} else {
			fmt.Fprintf(&b, "objective: none (no soft constraints)\n")
		}
		for _, name := range softOrder(res.Soft, views) {
			fmt.Fprintf(&b, "soft %s: %d\n", name, res.Soft[name])
		}
		for _, name := range sortedKeys(res.Tables) {
			t := res.Tables[name]
			fmt.Fprintf(&b, "\n%s (%d rows)\n", t.Name, len(t.Rows))
			tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, strings.Join(t.Columns, "\t")+"\t")
			for _, r := range t.Rows {
				cells := make([]string, len(t.Columns))
				for i, c := range t.Columns {
					cells[i] = formatValue(r[c])
				}
				fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		b.WriteByte('\n')
	}
	if res.Explanation != nil {
		b.WriteString(res.Explanation.String())
	}
	b.WriteString(statsLine(res.Stats))
	b.WriteByte('\n')
	// Trailing blanks from the tab writer's last column.
	lines := strings.Split(b.String(), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

// formatValue renders a cell: NULL for nil, strings as they are.
func formatValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		return v
	}
	return fmt.Sprint(v)
}

// statsLine summarises the stats on one line.
func statsLine(s weave.Stats) string {
	rows := 0
	for _, n := range s.Rows {
		rows += n
	}
	d := func(x time.Duration) string { return x.Round(10 * time.Microsecond).String() }
	line := fmt.Sprintf("stats: %d variables, %d constraints, %d rows read; fetch %s, ground %s, solve %s, extract %s",
		s.Variables, s.Constraints, rows, d(s.Fetch), d(s.Ground), d(s.Solve), d(s.Extract))
	if s.Verify > 0 {
		line += ", verify " + d(s.Verify)
	}
	return line
}

// softOrder lists the soft constraints in schema order.
func softOrder(soft map[string]int64, views []weave.ViewInfo) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range views {
		if _, ok := soft[v.Name]; ok && !seen[v.Name] {
			out = append(out, v.Name)
			seen[v.Name] = true
		}
	}
	for _, name := range sortedKeys(soft) {
		if !seen[name] {
			out = append(out, name)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
