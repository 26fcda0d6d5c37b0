-- H8 (no rescheduling in Kubernetes): a bound pod is never moved. In the
-- preemption model a bound pod keeps its node or is evicted (no node).
-- @hard_constraint
create view h08_bound_stay as
select * from pending_pod
join node on pending_pod.node_name = node.name
where pending_pod.bound_node is null
   or node.name = pending_pod.bound_node;
