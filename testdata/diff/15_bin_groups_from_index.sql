-- vars: node nullable
-- fk: yes
-- Grouped views whose last source is joined by its decision column and by
-- conditions on stored values: bin groups built from the index of the
-- values the variables may take, with the extra conditions decided once
-- per pair of rows; by node (a bin per group) and by zone (a group over
-- several nodes, not a bin).
-- @hard_constraint
create view one_per_app_and_node as
select a.app, node.name
from (select distinct pod.app from pod) a
join node on node.cpu >= 3
join pod on pod.node = node.name
where pod.app = a.app and pod.prio > 2
group by a.app, node.name
having count(*) <= 1;

-- @hard_constraint
create view cpu_by_app_and_zone as
select a.app, node.zone
from (select distinct pod.app as app from pod) a
join node on node.ready = true or node.cpu > 3
join pod on pod.node = node.name
where pod.app in (select p2.app from pod p2 where p2.app = a.app and p2.cpu >= 2)
group by a.app, node.zone
having sum(pod.cpu) <= 3;

create view kept_load as
select node.name as name, node.cpu - sum(pod.cpu) as spare
from node join pod on pod.node = node.name
where pod.keep = true
group by node.name;

-- @soft_constraint
create view balance as
select min(spare) from kept_load;

-- @soft_constraint
create view placed as
select 3 * count(*) from pod where pod.node is not null;
