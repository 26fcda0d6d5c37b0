-- vars: node
-- fk: yes
-- case and coalesce over decision columns.
-- @soft_constraint
create view scored as
select sum(case when pod.node = 'n0' then 3 when pod.node = 'n1' then pod.cpu else 0 - pod.prio end) from pod;

-- @hard_constraint
create view n2_small as
select * from pod where coalesce(case when pod.node = 'n2' then pod.cpu end, 0) <= 2;
