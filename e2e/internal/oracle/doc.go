// Package oracle runs kube-scheduler v1.37.2's own PreEnqueue, PreFilter and Filter plugins in-process, as
// its default profile configures them, to judge where a pod may be bound: the reference against which
// weave-scheduler's decisions are checked (package differential). The framework is built once (NewFramework
// over the in-tree registry, the default profile and plugin arguments of the v1 component config, the
// default feature gates) and judges any number of cluster states; each judgement builds a fresh node
// snapshot, as the scheduler's cache would hold it, and runs the plugins exactly as
// findNodesThatFitPod does (PreFilter, the nodes a PreFilterResult leaves out, Filter on each node).
//
// Left out of the profile: DefaultPreemption (PostFilter only) and the plugins that need a running
// scheduler's internals (DynamicResources, GangScheduling, TopologyPlacementGenerator, PodGroupPodsCount,
// DeferredPodScheduling; the last four are off by default in v1.37 anyway). A pod with
// spec.resourceClaims is judged as DynamicResources' PreEnqueue judges it in a cluster without
// ResourceClaim objects: not schedulable (see Verdict.PreEnqueue). Volumes are out of scope: a Cluster holds
// no PersistentVolumes, claims or storage classes, so the volume plugins judge a pod that uses a claim as in
// a cluster without it.
package oracle
