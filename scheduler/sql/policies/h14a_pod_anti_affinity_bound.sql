-- H14 (InterPodAffinity, required anti-affinity against bound pods;
-- plugins/interpodaffinity/filtering.go, satisfyPodAntiAffinity): a pod
-- avoids the topology domains (hostname, zone, any node label) holding a
-- bound pod its anti-affinity term selects (term_domain_match, schema.sql:
-- the term's whole label selector, over the namespaces it covers as the
-- pod being placed reads them: incoming_key).
-- @hard_constraint
create view h14a_pod_anti_affinity_bound as
select * from pending_pod
join batch_affinity_term t on t.pod_name = pending_pod.pod_name and t.anti = true
where not exists (select 1 from term_domain_match m
                  where m.match_key = t.incoming_key and m.topology_key = t.topology_key
                    and m.node_name = pending_pod.node_name);
