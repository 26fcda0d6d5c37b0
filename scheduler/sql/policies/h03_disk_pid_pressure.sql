-- H3 (CheckNodeDiskPressure, CheckNodePIDPressure): no pod goes to a node
-- under disk or process-id pressure.
-- @hard_constraint
create view h03_disk_pid_pressure as
select * from pending_pod
join node on pending_pod.node_name = node.name
where node.disk_pressure = false and node.pid_pressure = false;
