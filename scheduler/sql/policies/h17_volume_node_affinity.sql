-- H17 (VolumeBinding and VolumeZone, pkg/scheduler/framework/plugins/volumebinding
-- and volumezone): a pod goes to a node that meets the node constraints of
-- its volumes (a bound PersistentVolume's node affinity, its zone and
-- region labels), each a node selector: one of its terms holds.
create view batch_volume_node_term as
select distinct t.pod_name, t.selector, t.term_key
from batch_pod b join pod_node_affinity t on t.pod_name = b.pod_name
where t.required = true and t.selector > 0;

create view batch_volume_selector as
select distinct pod_name, selector from batch_volume_node_term;

-- @hard_constraint
create view h17_volume_node_affinity as
select * from pending_pod join batch_volume_selector s on s.pod_name = pending_pod.pod_name
where pending_pod.node_name is null or pending_pod.node_name = pending_pod.bound_node
   or exists (select 1 from batch_volume_node_term t where t.pod_name = pending_pod.pod_name and t.selector = s.selector
              and not exists (select 1 from node_affinity_unmet u
                              where u.term_key = t.term_key and u.node_name = pending_pod.node_name));
