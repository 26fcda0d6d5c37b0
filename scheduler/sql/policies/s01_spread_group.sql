-- S1 (SelectorSpread, weight 1; PodTopologySpread ScheduleAnyway): spread
-- a group over nodes: avoid nodes holding bound pods of the group, and
-- keep the most pods of a group placed together on one node low.
-- @soft_constraint
create view s01_spread_bound as
select 0 - 10 * sum(g.pods) from pending_pod
join group_node_load g on g.group_name = pending_pod.group_name and g.node_name = pending_pod.node_name;

-- @soft_constraint
create view s01_spread_batch as
select 0 - 10 * max(c.pods) from (select count(*) as pods from pending_pod
  where pending_pod.node_name is not null
  group by pending_pod.group_name, pending_pod.node_name) as c;
