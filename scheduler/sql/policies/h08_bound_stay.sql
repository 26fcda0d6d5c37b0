-- H8 (no rescheduling in Kubernetes): a bound pod is never moved. In the
-- preemption model a bound pod keeps its node or is evicted (no node).
-- Written over the pod's row alone (no join with node): it is then one
-- domain cut per pod, where a join grounded pods x nodes rows.
-- @hard_constraint
create view h08_bound_stay as
select * from pending_pod
where pending_pod.bound_node is null
   or pending_pod.node_name is null
   or pending_pod.node_name = pending_pod.bound_node;
