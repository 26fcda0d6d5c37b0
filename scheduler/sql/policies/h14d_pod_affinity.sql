-- H14 (InterPodAffinity, required affinity): every affinity term of a pod
-- is met in its topology domain by a bound pod, or (hostname topology) by
-- a pod placed together on the same node; a pod that matches its own term
-- when no bound pod does is exempt (kube's rule for the first replica).
-- @hard_constraint
create view h14d_pod_affinity as
select * from pending_pod
join batch_affinity_term t on t.pod_name = pending_pod.pod_name and t.anti = false
where pending_pod.node_name is null
   or exists (select 1 from term_domain_match m where m.namespace = t.namespace and m.anti = false
              and m.label_key = t.label_key and m.label_value = t.label_value
              and m.topology_key = t.topology_key and m.node_name = pending_pod.node_name)
   or (t.topology_key = 'kubernetes.io/hostname' and exists (select 1 from batch_pod_label l
       join pending_pod q on q.pod_name = l.pod_name
       where l.label_value = t.label_value and l.label_key = t.label_key
         and q.pod_name <> t.pod_name and q.node_name = pending_pod.node_name))
   or (t.pod_name in (select s.pod_name from batch_pod_label s where s.label_value = t.label_value
                      and s.label_key = t.label_key)
       and not exists (select 1 from term_domain_match m where m.namespace = t.namespace and m.anti = false
                       and m.label_key = t.label_key and m.label_value = t.label_value));
