-- G3 (DefaultPreemption's victims of a PodGroup with disruptionMode all,
-- kube-scheduler v1.37): the bound pods of such a group are evicted all
-- together or not at all. The members the plan evicts number 0 (no row,
-- so no group) or every live bound member of the group: a member the
-- plan may not evict (not a victim: of equal or higher priority, or left
-- out of the plan) makes the count unreachable, so none is evicted.
-- Preemption model only; gang_disrupt_all is in schema.sql.
-- @hard_constraint
create view g03_disrupt_all as
select pending_pod.pod_group
from pending_pod join gang_disrupt_all d on d.pod_group = pending_pod.pod_group
where pending_pod.bound_node is not null and pending_pod.node_name is null
group by pending_pod.pod_group, d.members
having count(*) >= d.members;
