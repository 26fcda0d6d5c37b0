-- H10 (TaintToleration, NoSchedule; pkg/scheduler/framework/plugins/tainttoleration):
-- a pod goes to a node only if it tolerates every NoSchedule taint of the
-- node (Toleration.ToleratesTaint: key empty or equal, effect empty or
-- equal, Exists or the same value; Lt and Gt, whose feature gate is off by
-- default, tolerate nothing). A pod the preemption model may keep
-- on its node stays there (NoSchedule does not evict).
create view untolerated_no_schedule as
select distinct batch_pod.pod_name, t.node_name
from batch_pod, node_taint t
where t.effect = 'NoSchedule'
  and coalesce(batch_pod.bound_node, '') <> t.node_name
  and not exists (select 1 from pod_toleration o
    where o.pod_name = batch_pod.pod_name and (o.effect = '' or o.effect = t.effect)
      and (o.toleration_key = '' or o.toleration_key = t.taint_key)
      and (o.operator = 'Exists' or (o.operator = 'Equal' and o.toleration_value = t.taint_value)));

-- @hard_constraint
create view h10_taints_no_schedule as
select * from pending_pod
where not exists (select 1 from untolerated_no_schedule u
                  where u.pod_name = pending_pod.pod_name and u.node_name = pending_pod.node_name);
