-- H5 (NodeResourcesFit): the requests of the pods placed on a node fit in
-- what the bound pods leave of its allocatable CPU, memory, ephemeral
-- storage and pod count (node_free, computed by the database). A resource
-- bounds only pods that request it (fitsRequest checks cpu, memory and
-- ephemeral-storage only for requests above 0), so what is left counts
-- as 0 where the bound pods already use more; the pod count bounds every
-- pod. Mirrors pkg/scheduler/framework/plugins/noderesources/fit.go of
-- kube-scheduler v1.37.
-- @hard_constraint
create view h05_capacity as
select node_free.node_name
from node_free
join pending_pod on pending_pod.node_name = node_free.node_name
group by node_free.node_name, node_free.cpu_free, node_free.memory_free,
         node_free.storage_free, node_free.pods_free
having sum(pending_pod.cpu_request) <= case when node_free.cpu_free > 0 then node_free.cpu_free else 0 end
   and sum(pending_pod.memory_request) <= case when node_free.memory_free > 0 then node_free.memory_free else 0 end
   and sum(pending_pod.storage_request) <= case when node_free.storage_free > 0 then node_free.storage_free else 0 end
   and count(*) <= node_free.pods_free;
