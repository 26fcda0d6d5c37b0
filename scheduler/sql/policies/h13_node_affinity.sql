-- H13 (NodeAffinity, requiredDuringSchedulingIgnoredDuringExecution):
-- node affinity (In, Exists) and anti-affinity (NotIn, DoesNotExist): one
-- term must hold, all its requirements (node_affinity_unmet, schema.sql,
-- lists the nodes each term fails on); a bound pod may keep its node.
-- @hard_constraint
create view h13_node_affinity as
select * from pending_pod
where pending_pod.node_name is null or pending_pod.node_name = pending_pod.bound_node
   or not exists (select 1 from batch_node_affinity_term t where t.pod_name = pending_pod.pod_name)
   or exists (select 1 from batch_node_affinity_term t where t.pod_name = pending_pod.pod_name
              and not exists (select 1 from node_affinity_unmet u
                              where u.term_key = t.term_key and u.node_name = pending_pod.node_name));
