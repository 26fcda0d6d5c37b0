-- H14 (InterPodAffinity, anti-affinity of existing pods): a pod avoids the
-- topology domains of bound pods whose required anti-affinity term
-- selects it (the symmetric half of anti-affinity).
create view existing_anti_affinity_conflict as
select distinct l.pod_name, dn.node_name
from batch_pod_label l
join pod p on p.name = l.pod_name
join pod_affinity_term t on t.label_key = l.label_key and t.label_value = l.label_value
join bound_pod q on q.name = t.pod_name and q.namespace = p.namespace
join node_label dq on dq.node_name = q.node_name and dq.label_key = t.topology_key
join node_label dn on dn.label_key = dq.label_key and dn.label_value = dq.label_value
where t.anti = true and t.required = true;

-- @hard_constraint
create view h14b_existing_anti_affinity as
select * from pending_pod
where not exists (select 1 from existing_anti_affinity_conflict c
                  where c.pod_name = pending_pod.pod_name and c.node_name = pending_pod.node_name);
