-- P2 (preemption, cross-node): among the placements of greatest weight,
-- evict as few bound pods as possible (a bound pod without a node is
-- evicted). Kube's DefaultPreemption minimises victims per node only.
-- @soft_constraint
create view p02_evictions as
select 0 - 1000 * count(*) from pending_pod
where pending_pod.bound_node is not null and pending_pod.node_name is null;
