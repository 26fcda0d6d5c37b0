-- H14 (InterPodAffinity, required affinity; nodeTopologyMatchesAffinity,
-- satisfiesSelfAffinityCheck): a pod's node carries the topology key of
-- each of its required affinity terms, and each term's domain there holds
-- a pod that matches every term of the pod (match_key), bound before it.
-- When no bound pod matches (on a node carrying one of the keys), a pod
-- that matches its own terms may be the first: kube-scheduler's exemption.
--
-- The batch is bound one pod at a time, so a batch pod supports another
-- only if it is bound first and no cycle of pods supports itself. The
-- supporters here are bound pods, and (hostname terms only) batch pods
-- without required affinity terms on the same node, bound before the pods
-- they support; the exemption is taken when every batch pod that matches
-- the terms shares them (a self-affine group placed at once): then the
-- group's pods share each term's domain (h14g), one of them is bound
-- first, and it supports the others. Not used: support by batch pods in a
-- wider domain than the node (a zone term met only by a batch pod, not yet
-- bound: the pod waits for the next batch) and by batch pods that have
-- required affinity terms of their own. The helper views (batch_affinity,
-- affinity_anchor, affinity_first_peer) are in schema.sql.

-- @hard_constraint
create view h14d_pod_affinity as
select * from pending_pod
join batch_affinity t on t.pod_name = pending_pod.pod_name
where pending_pod.node_name is null
   or exists (select 1 from term_domain_match m where m.match_key = t.match_key
              and m.topology_key = t.topology_key and m.node_name = pending_pod.node_name)
   or (t.topology_key = 'kubernetes.io/hostname'
       and exists (select 1 from affinity_anchor a join pending_pod q on q.pod_name = a.pod_name
                   where a.match_key = t.match_key and q.node_name = pending_pod.node_name))
   or (exists (select 1 from affinity_first_peer f where f.pod_name = t.pod_name and f.match_key = t.match_key)
       and pending_pod.node_name in (select l.node_name from node_label l where l.label_key = t.topology_key));
