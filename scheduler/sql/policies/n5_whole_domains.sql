-- N5 (new, issue 23): anti-fragmentation. Keep whole domains free for the
-- PodGroups still waiting: a pod of a PodGroup goes to the fullest node
-- and, for each topology key a known PodGroup uses, the fullest domain
-- (rack) of it, in the scalar resources (GPUs) the batch's pods of
-- PodGroups request. Each such pod costs 5 points per percent of room
-- left before the batch on its node and in each of its node's domains,
-- per resource, in percent of the largest node's or domain's allocatable
-- (so room counts in absolute terms: on nodes of 2, 1 and 1 GPUs two
-- 1-GPU pods cost less on the small nodes, and the 2-GPU node stays whole
-- for a 2-GPU pod). A node without the key's label is in no domain: a
-- small gang without topology goes there or to a partly used rack before
-- an empty one. Placement model only. Its weight: at most 500 x (1 +
-- keys) per pod and resource, so below one pod's reward in P1 (1,000,000)
-- in batches of up to 1,000 such pods with one key and one resource: it
-- ranks after pods placed and priority. It is not above the balancing
-- scores (S2-S5) in every case: S2 and S4 each count a node's spare CPU
-- per 100 millicores, so on nodes 48 cores apart they differ by 960
-- points, N5 by 500 for two pods moved from a half-used rack to an empty
-- one. Pods without a PodGroup, and requests of CPU or memory only, cost
-- nothing. Its helper views (whole_domain_*) are in schema.sql.

-- Per node, one row per resource the batch's pods of PodGroups request
-- and per domain of the node: rows, not sums (PostgreSQL sums bigints to
-- numeric); the soft view adds them up. The node's own rows come from
-- node_resource_free, which holds every resource the batch requests: a
-- resource no pod of a PodGroup requests has no row in
-- whole_domain_largest, and its cost is NULL, which the sum skips as a
-- join would drop it. A join (or an exists filter) there made SQLite
-- push it into node_resource_free and read the sampled nodes first:
-- 24 ms a read at 500 nodes, 2.7 ms this way. The domains' rows are empty,
-- and read at no cost, for a batch without such requests: the
-- uncorrelated exists is tested once, where SQLite otherwise read every
-- node's labels (22 ms a batch at 15,000 nodes).
create view whole_domain_cost as
select f.node_name, f.free * 100 / (select m.most from whole_domain_largest m where m.resource = f.resource) as cost
from node_resource_free f
union all
select s.node_name, s.share from whole_domain_share s
where exists (select 1 from whole_domain_request);

-- @soft_constraint
create view n5_whole_domains as
select 0 - 5 * sum(c.cost)
from whole_domain_cost c join pending_pod on pending_pod.node_name = c.node_name
where pending_pod.pod_group is not null;
