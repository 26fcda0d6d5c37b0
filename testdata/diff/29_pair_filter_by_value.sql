-- vars: node nullable
-- fk: yes
-- Bin groups whose extra condition is an equality between a column of the
-- prefix and one of the decision table (H5b's "pr.resource =
-- f.resource"): its verdicts are kept per value of the prefix's column,
-- shared by the prefix rows that hold the same value (here each app is in
-- three (node, app) rows), where they were kept per prefix row.
-- @hard_constraint
create view cpu_per_node_and_app as
select f.node, f.app
from (select n.name as node, a.app from node n, (select distinct p.app from pod p) a) f
join pod on pod.node = f.node
where pod.app = f.app
group by f.node, f.app
having sum(pod.cpu) <= 3;

-- @hard_constraint
create view one_heavy_per_node_and_app as
select f.node, f.app
from (select n.name as node, a.app from node n, (select distinct p.app from pod p) a) f
join pod on pod.node = f.node
where f.app = pod.app and pod.prio > 4
group by f.node, f.app
having count(*) <= 1;

-- @soft_constraint
create view placed as
select 3 * count(*) from pod where pod.node is not null;
