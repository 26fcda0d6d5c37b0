-- H5 (NodeResourcesFit, extended resources and hugepages): per node and
-- scalar resource the batch requests, the requests of the pods placed
-- there fit in what the bound pods leave of its allocatable
-- (node_resource_free, computed by the database; 0 where the node has
-- none). Pods that request none of a resource have no row for it, so it
-- never bounds them, as fitsRequest skips requests of 0. Mirrors
-- pkg/scheduler/framework/plugins/noderesources/fit.go (fitsRequest) of
-- kube-scheduler v1.37. The requests come first: the grounder then pairs
-- each requesting pod with the nodes of its domain (from the rooms first,
-- it paired every (node, resource) with every pod of the batch: 58 ms of
-- grounding a 100-pod batch asking for GPUs at 500 nodes, 20 ms this way).
-- @hard_constraint
create view h05b_scalar_resources as
select f.node_name, f.resource
from batch_pod_resource r
join pending_pod on pending_pod.pod_name = r.pod_name
join node_resource_free f on f.node_name = pending_pod.node_name and f.resource = r.resource
group by f.node_name, f.resource, f.free
having sum(r.request) <= f.free;
