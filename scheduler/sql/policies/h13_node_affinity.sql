-- H13 (NodeAffinity, requiredDuringSchedulingIgnoredDuringExecution):
-- node affinity (In, Exists) and anti-affinity (NotIn, DoesNotExist): one
-- term must hold, all its requirements. node_affinity_unmet (schema.sql)
-- lists the (pod, term, node) whose term fails.
create view node_affinity_mismatch as
select u.pod_name, u.node_name from node_affinity_unmet u
group by u.pod_name, u.node_name
having count(distinct u.term) = (select count(distinct t.term) from pod_node_affinity t
                                 where t.pod_name = u.pod_name and t.required = true);

-- @hard_constraint
create view h13_node_affinity as
select * from pending_pod
where not exists (select 1 from node_affinity_mismatch c
                  where c.pod_name = pending_pod.pod_name and c.node_name = pending_pod.node_name);
