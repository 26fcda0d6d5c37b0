-- H6 (NodePorts, among the pods placed together; see h06): the same
-- address twice on a node.
-- @hard_constraint
create view h06_host_ports_batch as
select pending_pod.node_name, hp.protocol, hp.port, hp.host_ip
from pending_pod join batch_host_port hp on hp.pod_name = pending_pod.pod_name
group by pending_pod.node_name, hp.protocol, hp.port, hp.host_ip
having count(*) <= 1;

-- A port on every address beside the same port of another pod of the
-- batch, on any address: the two pods take different nodes.
create view host_port_wildcard_pair as
select distinct a.pod_name as wild, b.pod_name as other
from batch_host_port a join batch_host_port b
  on b.protocol = a.protocol and b.port = a.port and b.pod_name <> a.pod_name
where a.host_ip = '0.0.0.0';

-- @hard_constraint
create view h06_host_ports_batch_wildcard as
select * from host_port_wildcard_pair w
join pending_pod a on a.pod_name = w.wild
join pending_pod b on b.pod_name = w.other
where a.node_name is null or b.node_name is null or a.node_name <> b.node_name;
