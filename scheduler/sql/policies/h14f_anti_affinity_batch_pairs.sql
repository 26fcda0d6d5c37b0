-- H14 (InterPodAffinity, anti-affinity within the batch, other pairs): a
-- pod holding a required anti-affinity term and a pod of the batch the
-- term selects share no topology domain (the pod bound second fails the
-- Filter, whichever it is: its own term, or the other's as an existing
-- pod's), unless both hold the term and are selected by it (h14c, h14e).
-- A node is its own hostname domain; other topology keys are compared
-- domain by domain (anti_affinity_pair and anti_affinity_pair_domain,
-- schema.sql).

-- @hard_constraint
create view h14f_anti_affinity_batch_pairs_node as
select * from anti_affinity_pair p
join pending_pod a on a.pod_name = p.pod_a
join pending_pod b on b.pod_name = p.pod_b
where p.topology_key <> 'kubernetes.io/hostname' or a.node_name is null or b.node_name is null
   or a.node_name <> b.node_name;

-- @hard_constraint
create view h14f_anti_affinity_batch_pairs as
select * from anti_affinity_pair_domain d
join pending_pod a on a.pod_name = d.pod_a
join pending_pod b on b.pod_name = d.pod_b
where a.node_name is null or b.node_name is null
   or not (a.node_name in (select l.node_name from node_label l where l.label_key = d.label_key and l.label_value = d.label_value)
           and b.node_name in (select l.node_name from node_label l where l.label_key = d.label_key and l.label_value = d.label_value));
