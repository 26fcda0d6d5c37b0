-- vars: node nullable
-- fk: yes
-- A decision column whose domain is a pushed-down view's set (the ready
-- nodes) has the tables joined only through it read reduced to that set
-- (node: "where name in (select name from ready_node)"): a join, a group
-- per node, an EXISTS correlated with the decision and a count of
-- distinct zones must not see the difference.
create view ready_node as
select n.name from node n where n.ready = true;

-- @hard_constraint
create view ready_only as
select * from pod
where pod.node is null or pod.node in (select r.name from ready_node r);

-- @hard_constraint
create view fits as
select node.name from pod join node on pod.node = node.name
group by node.name, node.cpu
having sum(pod.cpu) <= node.cpu;

-- @soft_constraint
create view placed as
select 4 * count(*) from pod where pod.node is not null;

-- @soft_constraint
create view zones_used as
select count(distinct node.zone) from pod join node on node.name = pod.node;

-- @soft_constraint
create view on_big_nodes as
select sum(case when exists (select 1 from node n where n.name = pod.node and n.cpu >= 4)
                then pod.prio else 0 end)
from pod;

-- label is read reduced too: each use is "pod.node [not] in (select the
-- label's not-NULL node ...)".
-- @hard_constraint
create view not_bad as
select * from pod
where pod.node is null or pod.node not in (select l.node from label l where l.k = 'bad');

-- @soft_constraint
create view on_gpu as
select sum(case when pod.node in (select l.node from label l where l.k = 'gpu') then 2 else 0 end)
from pod;
