-- VM load balancing (the Weave paper, §6.2): suggest at most K live
-- migrations that even out memory utilisation across heterogeneous hosts,
-- respecting capacity and the cluster's affinity rules.

-- Hosts and their capacities (CPU in MHz, memory in MB).
create table host (
  name varchar(20) not null primary key,
  cpu_capacity integer not null,
  mem_capacity integer not null
);

-- VMs with their reservations and where they run now. host is the
-- decision: Weave fills it in. current_host is an input that never changes
-- during a solve, so "host <> current_host" means "this VM migrates".
-- @variable_columns (host)
create table vm (
  name varchar(20) not null primary key,
  cpu integer not null,
  mem integer not null,
  current_host varchar(20) not null references host(name),
  host varchar(20) references host(name)
);

-- VM–VM rules: together = true keeps the two VMs on one host (affinity),
-- together = false keeps them apart (anti-affinity).
create table vm_vm_rule (
  vm1 varchar(20) not null references vm(name),
  vm2 varchar(20) not null references vm(name),
  together boolean not null
);

-- VM–host rules: a VM listed in vm_host_must runs on one of its listed
-- hosts; a VM never runs on a host listed for it in vm_host_must_not.
create table vm_host_must (
  vm_name varchar(20) not null references vm(name),
  host_name varchar(20) not null references host(name)
);
create table vm_host_must_not (
  vm_name varchar(20) not null references vm(name),
  host_name varchar(20) not null references host(name)
);

-- The round's parameters: the migration budget K and the penalty per
-- migration, in hundredths of a percentage point of utilisation.
create table balance_policy (
  max_migrations integer not null,
  migration_penalty integer not null
);
