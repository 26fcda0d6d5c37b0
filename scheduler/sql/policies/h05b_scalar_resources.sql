-- H5 (NodeResourcesFit, extended resources and hugepages): per node and
-- scalar resource the batch requests, the requests of the pods placed
-- there fit in what the bound pods leave of its allocatable
-- (node_resource_free, computed by the database; 0 where the node has
-- none). Pods that request none of a resource have no row for it, so it
-- never bounds them, as fitsRequest skips requests of 0. Mirrors
-- pkg/scheduler/framework/plugins/noderesources/fit.go (fitsRequest) of
-- kube-scheduler v1.37. The pods' requests are joined to their decision
-- first (pending_pod_resource: a row per pod and resource, carrying the
-- pod's node variable), and the rooms come first in the constraint: each
-- (node, resource) is then a bin whose items are the pods that may go to
-- the node (bingroups.go), where joining the requests, the pods and the
-- rooms in that order made a tuple per pod and node (100-pod batches in
-- PodGroups at 500 nodes: H5b's grounding 100-115 ms, 28-48 ms this way,
-- 2026-11-27, BatchLatencyGroups, loaded machine).
create view pending_pod_resource as
select r.pod_name, r.resource, r.request, pending_pod.node_name
from batch_pod_resource r join pending_pod on pending_pod.pod_name = r.pod_name;

-- @hard_constraint
create view h05b_scalar_resources as
select f.node_name, f.resource
from node_resource_free f
join pending_pod_resource pr on pr.node_name = f.node_name and pr.resource = f.resource
group by f.node_name, f.resource, f.free
having sum(pr.request) <= f.free;
