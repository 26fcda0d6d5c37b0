package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	quickPolicy     = "../../examples/quickstart/policy.sql"
	quickState      = "../../examples/quickstart/state.sql"
	quickInfeasible = "../../examples/quickstart/state-infeasible.sql"
)

// schedulable lists the quickstart nodes a pod may be placed on (node-f
// is cordoned).
var schedulable = map[string]bool{"node-a": true, "node-b": true, "node-c": true, "node-d": true, "node-e": true}

// runCmd runs the command in-process and returns its exit status, stdout
// and stderr.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runStdin(t, "", args...)
}

// runStdin is runCmd with the given standard input.
func runStdin(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// writeFile writes content to name in a fresh temporary directory and
// returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// packPolicy is a bin-packing policy: every pod on a node, no node over
// its capacity.
const packPolicy = `
create table node
(
  name varchar(100) not null primary key,
  capacity integer not null
);

-- @variable_columns (node_name)
create table pod
(
  name varchar(100) not null primary key,
  node_name varchar(100),
  cpu integer not null
);

-- @hard_constraint
create view constraint_on_a_node as
select * from pod where pod.node_name in (select name from node);

-- @hard_constraint
create view constraint_capacity as
select node.name
from node join pod on pod.node_name = node.name
group by node.name, node.capacity
having sum(pod.cpu) <= node.capacity;
`

// packData returns a perfect bin-packing instance: each of the nodes'
// capacities is cut into pods (sizes 37..211, deterministic pseudo-random)
// and the pods are shuffled, so the only solutions fill every node
// exactly. Finding one is a hard search problem; proving there is none is
// impossible (one exists by construction).
func packData(nodes int) string {
	state := uint64(7)
	rnd := func(lo, hi int) int { // xorshift: deterministic, no dependency on math/rand's stream
		state ^= state << 13
		state ^= state >> 7
		state ^= state << 17
		return lo + int(state%uint64(hi-lo+1))
	}
	var caps, sizes []int
	for range nodes {
		c := rnd(900, 1100)
		caps = append(caps, c)
		for left := c; left > 0; {
			s := min(left, rnd(37, 211))
			if r := left - s; r > 0 && r < 37 {
				s = left
			}
			sizes = append(sizes, s)
			left -= s
		}
	}
	for i := len(sizes) - 1; i > 0; i-- {
		j := rnd(0, i)
		sizes[i], sizes[j] = sizes[j], sizes[i]
	}
	var b strings.Builder
	b.WriteString("insert into node values ")
	for i, c := range caps {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "('n%d', %d)", i, c)
	}
	b.WriteString(";\ninsert into pod values ")
	for i, s := range sizes {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "('p%d', null, %d)", i, s)
	}
	b.WriteString(";\n")
	return b.String()
}
