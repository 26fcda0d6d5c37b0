-- S4 (NodeResourcesBalancedAllocation, weight 1; the paper's 4-line least
-- requested): maximise the least CPU plus memory slack of a node.
-- @soft_constraint
create view s04_balanced_allocation as
select min(node_load.cpu_spare + node_load.memory_spare) / 100 from node_load;
