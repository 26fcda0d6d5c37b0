-- H5 (NodeResourcesFit): the requests of the pods placed on a node fit in
-- what the bound pods leave of its allocatable CPU, memory, ephemeral
-- storage and pod count (node_free, computed by the database).
-- @hard_constraint
create view h05_capacity as
select node_free.node_name
from node_free
join pending_pod on pending_pod.node_name = node_free.node_name
group by node_free.node_name, node_free.cpu_free, node_free.memory_free,
         node_free.storage_free, node_free.pods_free
having sum(pending_pod.cpu_request) <= node_free.cpu_free
   and sum(pending_pod.memory_request) <= node_free.memory_free
   and sum(pending_pod.storage_request) <= node_free.storage_free
   and count(*) <= node_free.pods_free;
