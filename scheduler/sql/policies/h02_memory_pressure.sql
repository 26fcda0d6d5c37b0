-- H2 (CheckNodeMemoryPressure): a node under memory pressure takes no
-- BestEffort pod (one that requests neither CPU nor memory).
-- @hard_constraint
create view h02_memory_pressure as
select * from pending_pod
join node on pending_pod.node_name = node.name
where node.memory_pressure = false
   or pending_pod.cpu_request > 0 or pending_pod.memory_request > 0;
