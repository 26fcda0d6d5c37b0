-- H15 (ServiceAffinity): the pods of a service share one zone: the zone of
-- its bound pods, and a single zone among the pods placed together. The
-- zones the batch's pods are bound to come first (a small table, often
-- empty), then the nodes in other zones.
create view service_zone_conflict as
select distinct c.pod_name, node.name as node_name
from (select distinct batch_pod.pod_name, n.zone from batch_pod
      join pod p on p.name = batch_pod.pod_name
      join bound_pod q on q.service_name = p.service_name
      join node n on n.name = q.node_name) c
join node on node.zone <> c.zone;

-- @hard_constraint
create view h15_service_zone_bound as
select * from pending_pod
where not exists (select 1 from service_zone_conflict c
                  where c.pod_name = pending_pod.pod_name and c.node_name = pending_pod.node_name);

create view service_zone_used as
select pending_pod.service_name, node.zone
from pending_pod join node on node.name = pending_pod.node_name
where pending_pod.service_name is not null
group by pending_pod.service_name, node.zone;

-- @hard_constraint
create view h15_service_zone_batch as
select u.service_name from service_zone_used u group by u.service_name having count(*) <= 1;
