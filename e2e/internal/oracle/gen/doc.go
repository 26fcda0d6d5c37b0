// Package gen generates random cluster states, seeded, for differential tests of a scheduler against
// kube-scheduler's Filter plugins: nodes, namespaces, bound pods and pending pods whose specs exercise every
// field the v1.37 default profile's Filter plugins read, selectors with several labels and expressions first.
// The objects are as the API server stores them (defaults applied, matchLabelKeys merged into pod-affinity
// selectors and topology-spread selectors, hostPort set from containerPort on host-network pods, spec.overhead
// set beside spec.runtimeClassName). Nodes are Ready, without pressure conditions or their taints; no pod
// tolerates node.kubernetes.io/not-ready, unreachable or a pressure taint by key. Memory is in multiples of 1Mi.
package gen
