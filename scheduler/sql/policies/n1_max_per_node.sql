-- N1 (new; kubernetes issue 40358): at most max_per_node pods of a group
-- on one node, counting the group's bound pods there. The batch's limited
-- groups come first (usually few or none), then the nodes: not the other
-- way round, which pairs every node with every pod of the batch.
create view group_node_spare as
select g.group_name, node.name as node_name, g.max_per_node
  - (select count(*) from bound_pod b where b.group_name = g.group_name and b.node_name = node.name) as spare
from (select p.group_name, min(p.max_per_node) as max_per_node
      from batch_pod join pod p on p.name = batch_pod.pod_name
      where p.max_per_node is not null group by p.group_name) g, node;

-- @hard_constraint
create view n1_max_per_node as
select s.group_name, s.node_name
from pending_pod
join node on node.name = pending_pod.node_name
join group_node_spare s on s.group_name = pending_pod.group_name and s.node_name = node.name
group by s.group_name, s.node_name, s.spare
having count(*) <= s.spare;
