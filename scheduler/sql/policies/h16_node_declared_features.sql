-- H16 (NodeDeclaredFeatures, pkg/scheduler/framework/plugins/nodedeclaredfeatures):
-- a pod whose spec needs node features (inferred by
-- k8s.io/component-helpers/nodedeclaredfeatures for Kubernetes v1.37.2)
-- goes to a node that declares each of them (status.declaredFeatures).
create view node_feature_missing as
select distinct f.pod_name, node.name as node_name
from batch_pod b join pod_feature f on f.pod_name = b.pod_name, node
where not exists (select 1 from node_feature nf where nf.node_name = node.name and nf.feature = f.feature);

-- @hard_constraint
create view h16_node_declared_features as
select * from pending_pod
where not exists (select 1 from node_feature_missing m
                  where m.pod_name = pending_pod.pod_name and m.node_name = pending_pod.node_name);
