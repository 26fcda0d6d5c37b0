-- vars: node nullable
-- fk: yes
-- Checks that hold for a row of one source whatever it is paired with (the
-- grounder tests them once per row and does not pair such rows), and group
-- keys over the columns of two sources (classified once per row of each).
-- @hard_constraint
create view ready_or_small as
select * from pod join node on pod.node = node.name
where node.ready = true or pod.cpu = 1 or (node.cpu >= 4 and pod.prio > 5)
   or node.name in (select label.node from label where label.k = 'gpu');

-- @hard_constraint
create view two_per_app_and_zone as
select pod.app, node.zone from pod join node on pod.node = node.name
where pod.keep = false
group by pod.app, node.zone having count(*) <= 1 + 0 * sum(pod.cpu) + 1;

-- @soft_constraint
create view placed as
select 5 * count(*) from pod where pod.node is not null;

-- @soft_constraint
create view zone_zero as
select count(*) from pod join node on pod.node = node.name where node.zone = 'z0';
