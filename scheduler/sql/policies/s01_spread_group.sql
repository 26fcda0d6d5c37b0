-- S1 (SelectorSpread, weight 1): spread a group over nodes: each pod
-- placed on a node costs 10 per bound pod of its group there (kube scores
-- one pod at a time against the pods already placed; batch-mates of a
-- group are spread by S2-S5 and kept apart by H14 where required). The
-- loads come first: each finds the pods that may go to its node in the
-- index of the decision column, where the pods first compared their node
-- with every load of their group (half S1's time on TopologySpreading).
-- @soft_constraint
create view s01_spread_group as
select 0 - 10 * sum(g.pods) from group_node_load g
join pending_pod on pending_pod.node_name = g.node_name and pending_pod.group_name = g.group_name;
