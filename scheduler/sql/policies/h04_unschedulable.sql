-- H4 (NodeUnschedulable): a cordoned node takes no new pod, unless the pod
-- tolerates the node.kubernetes.io/unschedulable taint. A pod the
-- preemption model may keep on its node is not new there.
-- @hard_constraint
create view h04_unschedulable as
select * from pending_pod
join node on pending_pod.node_name = node.name
where node.unschedulable = false
   or node.name = pending_pod.bound_node
   or pending_pod.pod_name in (select t.pod_name from pod_toleration t
      where t.toleration_key = 'node.kubernetes.io/unschedulable' or (t.toleration_key = '' and t.operator = 'Exists'));
