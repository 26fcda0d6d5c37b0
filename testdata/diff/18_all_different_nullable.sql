-- vars: node nullable
-- fk: yes
-- all_different over a nullable decision column: SQL aggregates skip
-- NULL, so any number of unplaced pods may share it (posted as one
-- all_different except the NULL code); placing is rewarded.
-- @hard_constraint
create view anti_affinity as
select all_different(pod.node) from pod where pod.prio > 2 group by pod.app;

-- Pods of app a0 stay unplaced unless their priority is 9: its members
-- share the NULL.
-- @hard_constraint
create view a0_waits as
select * from pod where pod.node is null or pod.app <> 'a0' or pod.prio > 8;

-- Members present under a decision (the node is ready): not that shape,
-- posted pairwise.
-- @hard_constraint
create view ready_apart as
select all_different(node.name) from pod join node on pod.node = node.name
where node.ready = true and pod.cpu > 1;

-- @soft_constraint
create view placed as
select 3 * count(*) from pod where pod.node is not null;

-- @soft_constraint
create view capacity_left as
select sum(node.cpu) - count(*) from node join pod on pod.node = node.name;
