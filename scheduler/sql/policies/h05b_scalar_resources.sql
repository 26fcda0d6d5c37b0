-- H5 (NodeResourcesFit, extended resources and hugepages): per node and
-- scalar resource the batch requests, the requests of the pods placed
-- there fit in what the bound pods leave of its allocatable
-- (node_resource_free, computed by the database; 0 where the node has
-- none). Pods that request none of a resource have no row for it, so it
-- never bounds them, as fitsRequest skips requests of 0. Mirrors
-- pkg/scheduler/framework/plugins/noderesources/fit.go (fitsRequest) of
-- kube-scheduler v1.37.
-- @hard_constraint
create view h05b_scalar_resources as
select f.node_name, f.resource
from node_resource_free f
join pending_pod on pending_pod.node_name = f.node_name
join batch_pod_resource r on r.pod_name = pending_pod.pod_name and r.resource = f.resource
group by f.node_name, f.resource, f.free
having sum(r.request) <= f.free;
