-- H6 (NodePorts): a host port (protocol, port) is used at most once per
-- node, against bound pods and among the pods placed together.
create view host_port_conflict as
select distinct hp.pod_name, b.node_name
from batch_host_port hp
join pod_host_port used on used.protocol = hp.protocol and used.port = hp.port
join bound_pod b on b.name = used.pod_name;

-- @hard_constraint
create view h06_host_ports_bound as
select * from pending_pod
where not exists (select 1 from host_port_conflict c
                  where c.pod_name = pending_pod.pod_name and c.node_name = pending_pod.node_name);

-- @hard_constraint
create view h06_host_ports_batch as
select pending_pod.node_name, hp.protocol, hp.port
from pending_pod join batch_host_port hp on hp.pod_name = pending_pod.pod_name
group by pending_pod.node_name, hp.protocol, hp.port
having count(*) <= 1;
