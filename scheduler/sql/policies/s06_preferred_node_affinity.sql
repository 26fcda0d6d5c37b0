-- S6 (NodeAffinity preferredDuringScheduling, weight 2): the weights of
-- the preferred terms (In, Exists) whose requirements the node meets.
create view preferred_node_score as
select a.pod_name, l.node_name, sum(a.weight) as score
from batch_pod, pod_node_affinity a, node_label l
where a.pod_name = batch_pod.pod_name and a.required = false and l.label_key = a.label_key
  and (a.operator = 'Exists' or (a.operator = 'In' and l.label_value = a.label_value))
group by a.pod_name, l.node_name;

-- @soft_constraint
create view s06_preferred_node_affinity as
select 2 * sum(s.score) from pending_pod
join preferred_node_score s on s.pod_name = pending_pod.pod_name and s.node_name = pending_pod.node_name;
