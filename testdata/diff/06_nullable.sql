-- vars: node nullable
-- fk: yes
-- Unplaced pods (null node) are allowed but penalised; capacity holds.
-- @hard_constraint
create view capacity as
select node.name from node join pod on pod.node = node.name
group by node.name having sum(pod.cpu) <= node.cpu;

-- @hard_constraint
create view ready_only as
select * from pod join node on pod.node = node.name where node.ready = true;

-- @soft_constraint
create view placed as
select 10 * count(*) from pod where pod.node is not null;

-- @soft_constraint
create view prio_placed as
select sum(pod.prio) from pod where pod.node is not null and pod.prio > 4;
