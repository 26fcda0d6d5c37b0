-- P1 (the scheduler itself): place as many pods as possible, weighted by
-- priority. place_weight is set by the scheduler so that one pod of a
-- priority outweighs every pod of lower priorities and every other soft
-- constraint: a pod without a node (NULL) is the penalty.
-- @soft_constraint
create view p01_place_pods as
select sum(pending_pod.place_weight) from pending_pod
where pending_pod.node_name is not null;
