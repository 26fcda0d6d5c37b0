-- H14 (InterPodAffinity, anti-affinity of existing pods): a pod avoids the
-- topology domains of bound pods whose required anti-affinity term
-- selects it (the symmetric half of anti-affinity). Per selected label,
-- not per pod: the batch's replicas share their labels.
create view existing_anti_affinity_conflict as
select distinct o.namespace, o.label_key, o.label_value, dn.node_name
from (select distinct t.label_key, t.label_value, q.namespace, t.topology_key, dq.label_value as domain
      from (select distinct label_key, label_value from batch_pod_label) bl
      join pod_affinity_term t on t.label_key = bl.label_key and t.label_value = bl.label_value
      join bound_pod q on q.name = t.pod_name
      join node_label dq on dq.node_name = q.node_name and dq.label_key = t.topology_key
      where t.anti = true and t.required = true) o
join node_label dn on dn.label_key = o.topology_key and dn.label_value = o.domain;

-- @hard_constraint
create view h14b_existing_anti_affinity as
select * from pending_pod join batch_pod_label l on l.pod_name = pending_pod.pod_name
where not exists (select 1 from existing_anti_affinity_conflict c
                  where c.namespace = pending_pod.namespace and c.label_key = l.label_key
                    and c.label_value = l.label_value and c.node_name = pending_pod.node_name);
