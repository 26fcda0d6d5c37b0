-- H14 (InterPodAffinity, anti-affinity within the batch, hostname
-- topology): every node is its own hostname domain (the scheduler labels
-- each node kubernetes.io/hostname = its name), so the replicas of a term
-- take distinct nodes, those left unplaced (NULL) excepted: one
-- all_different per term instead of a count per term and node.
-- @hard_constraint
create view h14e_anti_affinity_batch_node as
select all_different(pending_pod.node_name)
from anti_affinity_group g join pending_pod on pending_pod.pod_name = g.pod_name
where g.topology_key = 'kubernetes.io/hostname'
group by g.match_key;
