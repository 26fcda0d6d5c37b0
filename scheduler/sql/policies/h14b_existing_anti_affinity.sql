-- H14 (InterPodAffinity, anti-affinity of existing pods;
-- satisfyExistingPodsAntiAffinity): a pod avoids the topology domains of
-- bound pods whose required anti-affinity term selects it (pod_match: the
-- term's selector, its namespaces matched against the pod's namespace's
-- labels). Per selector, not per pod: the batch's replicas share theirs.
create view existing_anti_affinity_conflict as
select distinct o.match_key, dn.node_name
from (select distinct t.match_key, t.topology_key, dq.label_value as domain
      from (select distinct match_key from batch_pod_match) bk
      join pod_affinity_term t on t.match_key = bk.match_key
      join bound_pod q on q.name = t.pod_name
      join node_label dq on dq.node_name = q.node_name and dq.label_key = t.topology_key
      where t.anti = true and t.required = true) o
join node_label dn on dn.label_key = o.topology_key and dn.label_value = o.domain;

-- @hard_constraint
create view h14b_existing_anti_affinity as
select * from pending_pod join batch_pod_match k on k.pod_name = pending_pod.pod_name
where not exists (select 1 from existing_anti_affinity_conflict c
                  where c.match_key = k.match_key and c.node_name = pending_pod.node_name);
