-- vars: node
-- fk: yes
-- At most two pods of an app per node (kubernetes issue 40358), grouping
-- by the decision column itself.
-- @hard_constraint
create view max_two as
select pod.node, pod.app from pod group by pod.node, pod.app having count(*) <= 2;

-- @soft_constraint
create view pack as
select 0 - count(*) from node where node.name in (select pod.node from pod);
