-- H14 (InterPodAffinity, anti-affinity among the pods placed together):
-- the pods whose required anti-affinity term selects themselves (replicas
-- kept apart) share no topology domain: at most one per domain and term.
create view anti_affinity_group as
select t.pod_name, t.namespace, t.label_key, t.label_value, t.topology_key
from batch_affinity_term t
join batch_pod_label l on l.pod_name = t.pod_name
 and l.label_key = t.label_key and l.label_value = t.label_value
where t.anti = true;

-- @hard_constraint
create view h14c_anti_affinity_batch as
select g.namespace, g.label_key, g.label_value, g.topology_key, d.label_value as domain
from pending_pod
join anti_affinity_group g on g.pod_name = pending_pod.pod_name
join node_label d on d.node_name = pending_pod.node_name and d.label_key = g.topology_key
group by g.namespace, g.label_key, g.label_value, g.topology_key, d.label_value
having count(*) <= 1;
