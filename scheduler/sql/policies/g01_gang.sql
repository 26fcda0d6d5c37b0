-- G1 (GangScheduling, PodGroup schedulingPolicy.gang): a PodGroup's pods
-- are placed all or nothing: the members the model places, with those
-- already bound, number 0 or at least min_count (kube-scheduler v1.37's
-- PlacementFeasible and Permit). A group none of whose members is placed
-- has no row here, so it has no group either: leaving it out is allowed.
-- Several groups are decided in one model: it chooses which to admit.
-- @hard_constraint
create view g01_gang as
select pending_pod.pod_group
from pending_pod join gang_need n on n.pod_group = pending_pod.pod_group
where pending_pod.node_name is not null
group by pending_pod.pod_group, n.need
having count(*) >= n.need;
