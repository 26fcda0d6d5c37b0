-- N1 (new; kubernetes issue 40358): at most max_per_node pods of a group
-- on one node, counting the group's bound pods there.
create view group_node_spare as
select p.group_name, node.name as node_name, min(p.max_per_node)
  - (select count(*) from bound_pod b where b.group_name = p.group_name and b.node_name = node.name) as spare
from batch_pod, pod p, node
where p.name = batch_pod.pod_name and p.max_per_node is not null
group by p.group_name, node.name;

-- @hard_constraint
create view n1_max_per_node as
select s.group_name, s.node_name
from pending_pod
join node on node.name = pending_pod.node_name
join group_node_spare s on s.group_name = pending_pod.group_name and s.node_name = node.name
group by s.group_name, s.node_name, s.spare
having count(*) <= s.spare;
