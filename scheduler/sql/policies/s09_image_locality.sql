-- S9 (ImageLocality, weight 1): prefer nodes that already hold the pod's
-- container images, by image size (MiB / 100, at most 100 per pod).
create view image_score as
select pi.pod_name, ni.node_name, sum(ni.size_mb) / 100 as score
from batch_pod, pod_image pi, node_image ni
where pi.pod_name = batch_pod.pod_name and ni.image_name = pi.image_name
group by pi.pod_name, ni.node_name;

-- @soft_constraint
create view s09_image_locality as
select sum(case when s.score > 100 then 100 else s.score end) from pending_pod
join image_score s on s.pod_name = pending_pod.pod_name and s.node_name = pending_pod.node_name;
