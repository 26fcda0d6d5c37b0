-- S3 (NodeResourcesFit LeastAllocated, memory, weight 1): keep the least
-- memory left on a node that receives pods as high as possible (MiB / 100).
-- @soft_constraint
create view s03_least_requested_memory as
select min(node_load.memory_spare) / 100 from node_load;
