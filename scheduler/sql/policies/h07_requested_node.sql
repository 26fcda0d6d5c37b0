-- H7 (NodeName): a pod that names a node (spec.nodeName) goes there.
-- @hard_constraint
create view h07_requested_node as
select * from pending_pod
join node on pending_pod.node_name = node.name
where pending_pod.requested_node is null
   or node.name = pending_pod.requested_node;
