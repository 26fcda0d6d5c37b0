-- The same constraint as a having clause over the join.
-- @hard_constraint
create view constraint_capacity as
select node.name from node
join pending_pod on pending_pod.node_name = node.name
group by node.name
having sum(pending_pod.cpu_request) <= node.available_cpu_capacity;
