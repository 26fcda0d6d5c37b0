-- S7 (InterPodAffinity preferred terms, weight 2): + the weight of a
-- preferred affinity term, - that of an anti-affinity term, for each bound
-- pod the term selects (pod_match: its whole label selector over the
-- namespaces it covers) in the node's topology domain.
create view preferred_pod_score as
select t.pod_name, dn.node_name, sum(case when t.anti then 0 - t.weight else t.weight end) as score
from batch_pod
join pod_affinity_term t on t.pod_name = batch_pod.pod_name and t.required = false
join pod_match m on m.match_key = t.match_key
join bound_pod q on q.name = m.pod_name
join node_label dq on dq.node_name = q.node_name and dq.label_key = t.topology_key
join node_label dn on dn.label_key = dq.label_key and dn.label_value = dq.label_value
group by t.pod_name, dn.node_name;

-- @soft_constraint
create view s07_preferred_pod_affinity as
select 2 * sum(s.score) from pending_pod
join preferred_pod_score s on s.pod_name = pending_pod.pod_name and s.node_name = pending_pod.node_name;
