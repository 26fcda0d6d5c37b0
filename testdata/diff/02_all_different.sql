-- vars: node
-- fk: yes
-- Pods of one app on distinct nodes; prefer ready nodes.
-- @hard_constraint
create view anti_affinity as
select all_different(pod.node) from pod group by pod.app;

-- @soft_constraint
create view prefer_ready as
select count(*) from pod join node on pod.node = node.name where node.ready = true;
