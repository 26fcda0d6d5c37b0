-- vars: node
-- fk: yes
-- Capacity as group by + having; least-loaded node maximised.
-- @hard_constraint
create view capacity as
select node.name
from node join pod on pod.node = node.name
group by node.name
having sum(pod.cpu) <= node.cpu;

create view load_per_node as
select node.name as name, node.cpu - sum(pod.cpu) as spare
from node join pod on pod.node = node.name
group by node.name;

-- @soft_constraint
create view balance as
select min(spare) from load_per_node;
