-- G2 (TopologyPlacement, PodGroup schedulingConstraints.topology): every
-- pod of a PodGroup with a topology key is on a node carrying that label,
-- all with one value: the domain of the members already bound
-- (gang_topology_conflict, schema.sql, lists the nodes outside it), else
-- one domain the batch chooses for the group: each pod's domain number
-- (gang_node_domain) is read from a table indexed by its node, and all are
-- equal (a literal per pod and node was 18,500 variables a batch). The
-- domain table comes first: grouped by the pod, the sum is then made
-- without the join (decision_sum.go), where the pods first made a tuple
-- per pod and node of its group's domains (G2's grounding 70-130 ms a
-- batch of 100 pods in PodGroups at 500 nodes, 10-35 ms this way,
-- 2026-11-27, BatchLatencyGroups, loaded machine).
-- @hard_constraint
create view g02_topology_bound as
select * from pending_pod
where not exists (select 1 from gang_topology_conflict c
                  where c.pod_group = pending_pod.pod_group and c.node_name = pending_pod.node_name);

create view gang_pod_domain as
select pending_pod.pod_group, sum(d.domain_id) as domain_id
from gang_node_domain d join pending_pod on pending_pod.pod_group = d.pod_group and pending_pod.node_name = d.node_name
group by pending_pod.pod_name, pending_pod.pod_group;

-- @hard_constraint
create view g02_topology_batch as
select all_equal(u.domain_id) from gang_pod_domain u group by u.pod_group;
