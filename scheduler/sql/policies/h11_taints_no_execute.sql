-- H11 (TaintToleration, NoExecute; pkg/scheduler/framework/plugins/tainttoleration):
-- a pod goes to a node only if it tolerates every NoExecute taint of the
-- node, tolerations matched as in H10. NoExecute also evicts: it holds for
-- pods kept on their node by the preemption model too.
create view untolerated_no_execute as
select distinct batch_pod.pod_name, t.node_name
from batch_pod, node_taint t
where t.effect = 'NoExecute'
  and not exists (select 1 from pod_toleration o
    where o.pod_name = batch_pod.pod_name and (o.effect = '' or o.effect = t.effect)
      and (o.toleration_key = '' or o.toleration_key = t.taint_key)
      and (o.operator = 'Exists' or (o.operator = 'Equal' and o.toleration_value = t.taint_value)));

-- @hard_constraint
create view h11_taints_no_execute as
select * from pending_pod
where not exists (select 1 from untolerated_no_execute u
                  where u.pod_name = pending_pod.pod_name and u.node_name = pending_pod.node_name);
