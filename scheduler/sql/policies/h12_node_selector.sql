-- H12 (NodeAffinity, spec.nodeSelector): a pod goes to a node carrying
-- every label of its node selector (ignored for a pod kept on its node).
create view node_selector_mismatch as
select distinct s.pod_name, node.name as node_name
from batch_pod, pod_node_selector s, node
where s.pod_name = batch_pod.pod_name and coalesce(batch_pod.bound_node, '') <> node.name
  and not exists (select 1 from node_label l where l.node_name = node.name
                  and l.label_key = s.label_key and l.label_value = s.label_value);

-- @hard_constraint
create view h12_node_selector as
select * from pending_pod
where not exists (select 1 from node_selector_mismatch c
                  where c.pod_name = pending_pod.pod_name and c.node_name = pending_pod.node_name);
