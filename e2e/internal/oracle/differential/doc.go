// Package differential judges weave-scheduler's decisions (app.Decide) on generated cluster states with
// kube-scheduler v1.37.2's own plugins (package oracle). Every binding must pass every Filter plugin on its
// node with all of weave's other bindings made (the final state); where the verdict depends on the order in
// which kube-scheduler would have made them (required pod affinity, topology spread), some order of the
// bindings must let it make each one in turn. Every pod weave calls unschedulable must fit no node of the
// final state (else a missed placement, reported apart from wrong bindings), every refusal must name the
// field (spec.…), and a pod with scheduling gates must be neither bound nor refused.
//
// Run it from the e2e module (the default, 250 seeded cases, takes about two minutes on two cores):
//
//	go test ./internal/oracle/differential                                   # TestDifferential and the mutation check
//	WEAVE_DIFF_CASES=20000 go test -timeout 0 -run 'TestDifferential$' ./internal/oracle/differential
//	WEAVE_DIFF_SEED=72 go test -run 'TestDifferential$' ./internal/oracle/differential   # one case, in full
//	WEAVE_DIFF_ATTRIBUTE=50 go test -run 'TestDifferential$' ./internal/oracle/differential  # explain missed placements
//
// JudgeLive judges a live cluster's state the same way, whichever scheduler made its bindings: package e2e's
// TestLiveParity and TestLiveNginxRedis judge weave-scheduler's and kube-scheduler's with it.
//
// TestDifferentialCatchesDisabledCapacity runs weave with its capacity policy (H5) disabled and requires the
// oracle to find bindings NodeResourcesFit rejects: the proof that the differential test can fail.
package differential
