-- vars: node
-- fk: yes
-- Membership: avoid nodes labelled bad; big pods need a gpu label.
-- @hard_constraint
create view avoid_bad as
select * from pod
where pod.node not in (select label.node from label where label.k = 'bad');

-- @hard_constraint
create view gpu_for_big as
select * from pod
where pod.cpu < 3 or exists (select 1 from label l where l.node = pod.node and l.k = 'gpu');

-- @soft_constraint
create view same_zone_as_first as
select count(*) from pod join node on pod.node = node.name where node.zone = 'z0';
