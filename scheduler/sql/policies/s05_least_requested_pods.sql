-- S5 (NodeResourcesFit on the pods resource, weight 1): keep the least
-- number of free pod slots on a node that receives pods high.
-- @soft_constraint
create view s05_least_requested_pods as
select min(node_load.pods_spare) from node_load;
