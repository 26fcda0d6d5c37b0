-- Failure handling: a node that answers is up; a silent node is marked
-- unavailable, and removed once it failed too often or stayed silent too
-- long. (Input columns only: the database evaluates this view.)
create view node_status as
select node.name as name, node.rack as rack,
       case when node.healthy then 'up'
            when node.failures >= cluster_config.remove_after_failures
              or node.heartbeat_age >= cluster_config.remove_after_seconds then 'removed'
            else 'unavailable' end as status
from node, cluster_config;

-- Roles only on nodes that are up.
-- @hard_constraint
create view roles_on_live_nodes as
select * from node_role
where (node_role.active_sequencer = false and node_role.backup_sequencer = false and node_role.management = false)
   or node_role.node in (select name from node_status where status = 'up');

-- Exactly one active and one backup sequencer...
-- @hard_constraint
create view one_active_sequencer as
select count(*) from node_role
having sum(case when node_role.active_sequencer then 1 else 0 end) = 1;

-- @hard_constraint
create view one_backup_sequencer as
select count(*) from node_role
having sum(case when node_role.backup_sequencer then 1 else 0 end) = 1;

-- ...on different racks (hence different nodes).
-- @hard_constraint
create view sequencers_apart as
select node.rack from node_role join node on node_role.node = node.name
group by node.rack
having sum(case when node_role.active_sequencer then 1 else 0 end
         + case when node_role.backup_sequencer then 1 else 0 end) <= 1;

-- Management servers: as many as configured, at most one per rack.
-- @hard_constraint
create view management_count as
select count(*) from node_role
having sum(case when node_role.management then 1 else 0 end) = (select management_servers from cluster_config);

-- @hard_constraint
create view management_spread as
select node.rack from node_role join node on node_role.node = node.name
where node_role.management = true
group by node.rack having count(*) <= 1;

-- Replicas live on nodes that are up; a replica may stay on a node that is
-- only temporarily unavailable (no data movement for a transient failure).
-- @hard_constraint
create view replicas_on_live_nodes as
select * from replica join node_status on replica.node = node_status.name
where node_status.status = 'up'
   or (node_status.status = 'unavailable' and replica.node = replica.current_node);

-- Rack-aware placement: no two replicas of a shard in one rack.
-- @hard_constraint
create view replicas_rack_aware as
select replica.shard, node.rack from replica join node on replica.node = node.name
group by replica.shard, node.rack having count(*) <= 1;

-- Balance: a node should hold at most its fair share of replicas (rounded
-- up). Each node above it outweighs ten moves, so a join or leave
-- rebalances, with as few moves as that takes.
create view fair_share as
select ((select count(*) from replica) + (select count(*) from node_status where status = 'up') - 1)
       / (select count(*) from node_status where status = 'up') as quota
from cluster_config;

create view node_load as
select replica.node as node, count(*) as n from replica group by replica.node;

-- @soft_constraint
create view replica_balance as
select 0 - 100 * count(*) from node_load where node_load.n > (select quota from fair_share);

-- Minimal movement: every replica moved (or created) copies data...
-- @soft_constraint
create view replica_moves as
select 0 - 10 * count(*) from replica
where replica.current_node is null or replica.node <> replica.current_node;

-- ...and every role that changes hands costs a little.
-- @soft_constraint
create view role_changes as
select 0 - count(*) from node_role
where node_role.active_sequencer <> node_role.was_active_sequencer
   or node_role.backup_sequencer <> node_role.was_backup_sequencer
   or node_role.management <> node_role.was_management;
