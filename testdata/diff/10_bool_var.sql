-- vars: node, keep
-- fk: yes
-- A Boolean decision column next to the placement.
-- @hard_constraint
create view kept_on_ready as
select * from pod join node on pod.node = node.name
where pod.keep = false or node.ready = true;

-- @hard_constraint
create view some_kept as
select count(*) from pod having sum(case when pod.keep then 1 else 0 end) >= 1;

-- @soft_constraint
create view keep_high as
select sum(case when pod.keep = true then pod.prio else 0 end) - count(*) from pod where pod.keep;
