-- S8 (NodeResourceLimits, weight 1): prefer nodes whose CPU and memory
-- limits, summed over their pods, stay within allocatable: each node that
-- receives pods and is overcommitted costs 100.
-- @soft_constraint
create view s08_resource_limits as
select 0 - 100 * count(*) from node_load
where node_load.cpu_limit_spare < 0 or node_load.memory_limit_spare < 0;
