-- S1 (SelectorSpread, weight 1): spread a group over nodes: each pod
-- placed on a node costs 10 per bound pod of its group there (kube scores
-- one pod at a time against the pods already placed; batch-mates of a
-- group are spread by S2-S5 and kept apart by H14 where required).
-- @soft_constraint
create view s01_spread_group as
select 0 - 10 * sum(g.pods) from pending_pod
join group_node_load g on g.group_name = pending_pod.group_name and g.node_name = pending_pod.node_name;
