-- The management plane of a distributed transactional datastore (CorfuDB,
-- the Weave paper §6.3): nodes in racks, their roles, and the replicas of
-- every shard. The control loop keeps this state; Weave decides the roles
-- and the replica placement.

-- Tunables of the failure policy and the layout.
create table cluster_config (
  remove_after_failures integer not null,  -- failures before a node is removed
  remove_after_seconds integer not null,   -- silence before a node is removed
  management_servers integer not null      -- how many management servers
);

-- Nodes as the failure detector sees them.
create table node (
  name varchar(30) not null primary key,
  rack varchar(30) not null,
  healthy boolean not null,        -- answered the last probe
  heartbeat_age integer not null,  -- seconds since its last heartbeat
  failures integer not null        -- failures seen in the last hour
);

-- Roles per node: decided by Weave; was_* hold the current layout, so
-- that Weave can keep roles where they are.
-- @variable_columns (active_sequencer, backup_sequencer, management)
create table node_role (
  node varchar(30) not null primary key references node(name),
  active_sequencer boolean,
  backup_sequencer boolean,
  management boolean,
  was_active_sequencer boolean not null,
  was_backup_sequencer boolean not null,
  was_management boolean not null
);

-- Shards and their replication factor.
create table shard (
  name varchar(30) not null primary key,
  replication_factor integer not null
);

-- One row per replica (replication_factor rows per shard). node is
-- decided by Weave; current_node is where the replica's data is now (NULL
-- for a replica not yet created).
-- @variable_columns (node)
create table replica (
  shard varchar(30) not null references shard(name),
  idx integer not null,
  current_node varchar(30),
  node varchar(30) references node(name),
  primary key (shard, idx)
);
