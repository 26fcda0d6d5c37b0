-- N3 (PodTopologySpread, DoNotSchedule; plugins/podtopologyspread,
-- filtering.go and common.go): a pod goes to a node whose domain, with the
-- pods the constraint counts there (the labelSelector's, matchLabelKeys
-- merged, in the pod's namespace, not terminating, on the nodes carrying
-- every topology key of the pod's hard constraints and passing this
-- constraint's node-inclusion policies: topology_spread_node, schema.sql)
-- and the pod itself if its selector selects it, exceeds the least loaded
-- domain by at most maxSkew; with fewer domains than minDomains the least
-- loaded counts as empty. The node must be one the constraint counts on:
-- every topology key present, and (the other Filters' business too) its
-- node affinity and tolerations as the policies say.
--
-- A batch is bound one pod at a time, and the least loaded domain rises
-- while it is. Where a spread key's pods are exactly the batch pods it
-- counts, with no other hard spread constraint and no required affinity
-- (topology_spread_ordered: the replicas of one deployment), binding each
-- into the least loaded domain first keeps every pod within maxSkew if and
-- only if each domain that receives one ends within maxSkew of the least
-- loaded domain at the end: that is the rule. Otherwise each pod is held
-- to the bound pods' least loaded domain and counts every other pod placed
-- in its domain as bound before it: true in any order, stricter than
-- kube-scheduler where the minimum would rise within the batch.
create view topology_spread_min as
select c.spread_key, min(c.pods) as pods
from topology_spread_count c
group by c.spread_key;

-- @hard_constraint
create view n3_topology_spread as
select * from topology_spread_count c
join topology_spread_min m on m.spread_key = c.spread_key
where c.holders = 0
   or c.pods - c.counted + c.self_match
      - (case when c.domains < c.min_domains then 0 when c.ordered = 1 then m.pods else c.bound_min end) <= c.max_skew;

-- @hard_constraint
create view n3_topology_spread_node as
select * from pending_pod
join batch_spread_constraint c on c.pod_name = pending_pod.pod_name
where pending_pod.node_name is null
   or pending_pod.node_name in (select s.node_name from topology_spread_sampled_node s where s.spread_key = c.spread_key);
