-- H4 (NodeUnschedulable, pkg/scheduler/framework/plugins/nodeunschedulable):
-- a cordoned node takes no new pod, unless the pod tolerates the taint
-- node.kubernetes.io/unschedulable:NoSchedule (Toleration.ToleratesTaint:
-- its key empty or that key, its effect empty or NoSchedule, Exists or an
-- empty value). A pod the preemption model may keep on its node is not new
-- there.
-- @hard_constraint
create view h04_unschedulable as
select * from pending_pod
join node on pending_pod.node_name = node.name
where node.unschedulable = false
   or node.name = pending_pod.bound_node
   or pending_pod.pod_name in (select t.pod_name from pod_toleration t
      where (t.toleration_key = '' or t.toleration_key = 'node.kubernetes.io/unschedulable')
        and (t.effect = '' or t.effect = 'NoSchedule')
        and (t.operator = 'Exists' or (t.operator = 'Equal' and t.toleration_value = '')));
