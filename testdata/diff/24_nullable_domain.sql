-- vars: node nullable
-- fk: no
-- "node is null or node in (select ...)" is the nullable column's domain:
-- the pods go to ready nodes of a high enough cpu, or nowhere; NULL stays
-- possible (a pod that fits no such node is left out).
-- @hard_constraint
create view ready_only as
select * from pod
where pod.node is null or pod.node in (select n.name from node n where n.ready = true and n.cpu >= 2);

-- @hard_constraint
create view two_per_node as
select pod.node from pod group by pod.node having pod.node is null or count(*) <= 2;

-- @soft_constraint
create view placed as
select 4 * count(*) from pod where pod.node is not null;

-- @soft_constraint
create view high_prio_first as
select sum(pod.prio) from pod where pod.node is not null;
