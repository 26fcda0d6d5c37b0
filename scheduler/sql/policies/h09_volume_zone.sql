-- H9 (VolumeZone): a pod using a zonal volume goes to a node of that zone.
create view volume_zone_conflict as
select distinct pv.pod_name, node.name as node_name
from batch_pod, pod_volume pv, volume v, node
where pv.pod_name = batch_pod.pod_name and v.name = pv.volume_name
  and v.zone <> '' and node.zone <> v.zone;

-- @hard_constraint
create view h09_volume_zone as
select * from pending_pod
where not exists (select 1 from volume_zone_conflict c
                  where c.pod_name = pending_pod.pod_name and c.node_name = pending_pod.node_name);
