-- N5 (new, issue 23): anti-fragmentation. Keep whole domains free for the
-- PodGroups still waiting: a pod of a PodGroup prefers the fullest node
-- and, for each topology key a known PodGroup uses, the fullest domain
-- (rack) of it, in the scalar resources (GPUs) it requests. Each
-- (pod, resource) costs its request times the room left before the batch
-- on its node plus in each of its node's domains, all in percent of the
-- largest node's or domain's allocatable (so that room counts in absolute
-- terms: on nodes of 2, 1 and 1 GPUs two 1-GPU pods cost less on the
-- small nodes, and the 2-GPU node stays whole for a 2-GPU pod). A node
-- without the key's label is in no domain: a small gang without topology
-- goes there or to a partly used rack before an empty one. Placement
-- model only. Its weight: at most 1,000 x (1 + keys) per pod and
-- resource (request and room in percent, multiplied, over 10), so below
-- one pod's reward in P1 (1,000,000) for batches of up to 500 such
-- pod-resources with one key: it ranks after pods placed and priority.
-- Over 10 rather than 100 so that it outweighs the balancing scores
-- (S2-S5) where nodes differ little in size; it is not above them in
-- every case (S2 and S4 each count a node's spare CPU per 100 millicores:
-- two pods of 2 GPUs on an empty rack's 8-GPU nodes with 16 cores more
-- than a half-used rack's gain 161 points in each, and cost 250 in N5).
-- Pods without a PodGroup, and requests of CPU or memory only, cost
-- nothing. Its helper views (whole_domain_*) are in schema.sql.

-- (node, resource): what each percent of the resource a pod of a PodGroup
-- takes there costs, in hundredths.
create view whole_domain_cost as
select f.node_name, f.resource, f.free * 100 / m.most + coalesce(s.share, 0) as cost
from node_resource_free f join whole_domain_largest m on m.resource = f.resource
left join whole_domain_share s on s.node_name = f.node_name and s.resource = f.resource;

-- @soft_constraint
create view n5_whole_domains as
select 0 - sum(q.request * 100 / m.most * c.cost) / 10
from whole_domain_request q
join whole_domain_largest m on m.resource = q.resource
join pending_pod on pending_pod.pod_name = q.pod_name
join whole_domain_cost c on c.node_name = pending_pod.node_name and c.resource = q.resource;
