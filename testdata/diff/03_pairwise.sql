-- vars: node
-- fk: no
-- Pairwise anti-affinity with a self join; domain from the join with node.
-- @hard_constraint
create view on_some_node as
select * from pod join node on pod.node = node.name
where node.ready = true or pod.prio >= 5;

-- @hard_constraint
create view apart as
select * from pod p1 join pod p2 on p1.app = p2.app and p1.name < p2.name
where p1.node <> p2.node;

-- @soft_constraint
create view high_prio_on_big as
select sum(node.cpu * pod.prio) from pod join node on pod.node = node.name;
