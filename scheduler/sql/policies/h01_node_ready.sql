-- H1 (CheckNodeCondition / NodeReady): a pod goes only to a node that
-- reports Ready and has a working network.
-- @hard_constraint
create view h01_node_ready as
select * from pending_pod
join node on pending_pod.node_name = node.name
where node.ready = true and node.network_unavailable = false;
