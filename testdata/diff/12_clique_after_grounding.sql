-- vars: node
-- fk: yes
-- Anti-affinity the IR rewrite does not recognise (an extra filter): the
-- clique of inequalities appears only after grounding.
-- @hard_constraint
create view apart as
select * from pod a join pod b on a.app = b.app and a.name <> b.name and a.cpu > 0
where a.node <> b.node;

-- @soft_constraint
create view on_big as
select sum(node.cpu) from pod join node on pod.node = node.name;
