-- H6 (NodePorts, pkg/scheduler/framework/plugins/nodeports; the framework's
-- HostPortInfo.CheckConflict): two pods on one node clash on a host port of
-- the same protocol and number bound to the same address, or to 0.0.0.0
-- (every address) on either side. Against bound pods here, among the
-- pods placed together in h06b.
create view host_port_conflict as
select distinct hp.pod_name, b.node_name
from batch_host_port hp
join pod_host_port used on used.protocol = hp.protocol and used.port = hp.port
  and (used.host_ip = hp.host_ip or used.host_ip = '0.0.0.0' or hp.host_ip = '0.0.0.0')
join bound_pod b on b.name = used.pod_name;

-- @hard_constraint
create view h06_host_ports_bound as
select * from pending_pod
where not exists (select 1 from host_port_conflict c
                  where c.pod_name = pending_pod.pod_name and c.node_name = pending_pod.node_name);
