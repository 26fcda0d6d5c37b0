-- H14 (InterPodAffinity, anti-affinity among the pods placed together):
-- the pods whose required anti-affinity term selects themselves (replicas
-- kept apart; anti_affinity_group, schema.sql) share no topology domain:
-- at most one per domain and term. Pairs of other pods (one holds the
-- term, the other is selected by it) are h14f's.

-- Counted per term and node label (the domain), over the pods that may
-- be placed on the node; hostname terms are h14e's.
-- @hard_constraint
create view h14c_anti_affinity_batch as
select a.match_key, a.topology_key, d.label_value as domain
from (select distinct match_key, topology_key from anti_affinity_group
      where topology_key <> 'kubernetes.io/hostname') a
join node_label d on d.label_key = a.topology_key
join pending_pod on pending_pod.node_name = d.node_name
where pending_pod.pod_name in (select g.pod_name from anti_affinity_group g
                               where g.match_key = a.match_key and g.topology_key = a.topology_key)
group by a.match_key, a.topology_key, d.label_value
having count(*) <= 1;
