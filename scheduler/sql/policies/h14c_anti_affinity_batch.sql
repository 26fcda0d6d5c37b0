-- H14 (InterPodAffinity, anti-affinity among the pods placed together):
-- the pods whose required anti-affinity term selects themselves (replicas
-- kept apart) share no topology domain: at most one per domain and term.
create view anti_affinity_group as
select t.pod_name, t.namespace, t.label_key, t.label_value, t.topology_key
from batch_affinity_term t
join batch_pod_label l on l.pod_name = t.pod_name
 and l.label_key = t.label_key and l.label_value = t.label_value
where t.anti = true;

-- Counted per term and node label (the domain), over the pods that may
-- be placed on the node; hostname terms are h14e's.
-- @hard_constraint
create view h14c_anti_affinity_batch as
select a.namespace, a.label_key, a.label_value, a.topology_key, d.label_value as domain
from (select distinct namespace, label_key, label_value, topology_key from anti_affinity_group
      where topology_key <> 'kubernetes.io/hostname') a
join node_label d on d.label_key = a.topology_key
join pending_pod on pending_pod.node_name = d.node_name
where pending_pod.pod_name in (select g.pod_name from anti_affinity_group g
                               where g.namespace = a.namespace and g.label_key = a.label_key
                                 and g.label_value = a.label_value and g.topology_key = a.topology_key)
group by a.namespace, a.label_key, a.label_value, a.topology_key, d.label_value
having count(*) <= 1;
