// Command weave compiles a SQL cluster-management policy and solves it
// over a cluster state.
//
//	weave solve --schema POLICY.sql (--data STATE.sql | --db DSN) [--timeout 5s] [--seed N] [--format text|json] [--verify]
//	weave check --schema POLICY.sql [--format text|json]
//	weave help
//
// Exit status: 0 a solution was found (OPTIMAL or FEASIBLE), 2 the hard
// constraints are proven infeasible, 3 no solution was found within the
// time limit (UNKNOWN), 1 any error (bad SQL, bad data, database,
// verification, usage), with the message on stderr.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
