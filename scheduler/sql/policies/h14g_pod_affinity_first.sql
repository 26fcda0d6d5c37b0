-- H14 (InterPodAffinity, required affinity, the first pods of a
-- self-affine group placed together): when no bound pod matches a key's
-- terms and every batch pod that does has the terms (affinity_first_peer,
-- schema.sql), the first of them bound is exempt (satisfiesSelfAffinityCheck)
-- and must support every other: they all share one domain of each term's
-- topology key. A hostname domain is the node: one all_equal per key.

create view affinity_first_domain as
select f.match_key, f.topology_key, d.label_value as domain
from affinity_first_peer f
join pending_pod on pending_pod.pod_name = f.pod_name
join node_label d on d.node_name = pending_pod.node_name and d.label_key = f.topology_key
where f.topology_key <> 'kubernetes.io/hostname'
group by f.match_key, f.topology_key, d.label_value;

-- @hard_constraint
create view h14g_pod_affinity_first as
select match_key, topology_key from affinity_first_domain
group by match_key, topology_key
having count(*) <= 1;

-- @hard_constraint
create view h14g_pod_affinity_first_node as
select all_equal(pending_pod.node_name)
from affinity_first_peer f join pending_pod on pending_pod.pod_name = f.pod_name
where f.topology_key = 'kubernetes.io/hostname'
group by f.match_key;
