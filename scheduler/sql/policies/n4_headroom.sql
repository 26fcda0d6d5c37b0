-- N4 (new): keep room for large pods. The roomiest node (most CPU plus
-- memory free, in percent of the largest node's allocatable, so that on
-- mixed sizes room counts in absolute terms; of a tie, the first on the
-- sampling ring) is kept for the pods that need it: each percent of it
-- that the batch takes costs a point. Balancing alone (S2-S5) leaves every
-- node the same room, less than a large pod of a later batch may need.
create view roomiest_node as
select f.node_name, n.cpu_allocatable, n.memory_allocatable
from node_free f join node n on n.name = f.node_name
where n.cpu_allocatable > 0 and n.memory_allocatable > 0
order by f.cpu_free * 100 / (select max(m.cpu_allocatable) from node m)
       + f.memory_free * 100 / (select max(m.memory_allocatable) from node m) desc, n.sample_key
limit 1;

-- @soft_constraint
create view n4_headroom as
select 0 - sum(pending_pod.cpu_request) * 100 / r.cpu_allocatable
         - sum(pending_pod.memory_request) * 100 / r.memory_allocatable
from pending_pod join roomiest_node r on r.node_name = pending_pod.node_name
group by r.node_name, r.cpu_allocatable, r.memory_allocatable;
