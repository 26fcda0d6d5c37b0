-- vars: node
-- fk: yes
-- Capacity written as a correlated scalar subquery over every node.
-- @hard_constraint
create view capacity as
select * from node
where node.cpu >= coalesce((select sum(pod.cpu) from pod where pod.node = node.name), 0);

-- @soft_constraint
create view used_nodes as
select 0 - count(*) from node where exists (select 1 from pod where pod.node = node.name);
