-- S2 (NodeResourcesFit LeastAllocated, CPU, weight 1): keep the least CPU
-- left on a node that receives pods as high as possible (millicores / 100).
-- @soft_constraint
create view s02_least_requested_cpu as
select min(node_load.cpu_spare) / 100 from node_load;
