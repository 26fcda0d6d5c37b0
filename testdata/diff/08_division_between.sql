-- vars: node
-- fk: yes
-- Integer division and between over decision-dependent sums.
create view load as
select node.name as name, sum(pod.cpu * 10) / 3 as scaled, count(*) as n
from node join pod on pod.node = node.name
group by node.name;

-- @hard_constraint
create view bounded as
select * from load where load.scaled between 0 and 20;

-- @soft_constraint
create view spread as
select 0 - max(n) from load;
