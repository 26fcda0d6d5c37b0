-- The placement model of the benchmarks: a batch of pending pods onto
-- nodes with predicates, two-resource capacity, anti-affinity and CPU load
-- balancing (paper Fig. 1 H1-H5, H14, S2).
create table node (
  name varchar(50) not null primary key,
  cpu_free integer not null,
  mem_free integer not null,
  unschedulable boolean not null,
  ready boolean not null,
  zone varchar(10) not null
);

-- @variable_columns (node_name)
create table pending_pod (
  name varchar(50) not null primary key,
  app varchar(50) not null,
  anti_affine boolean not null,
  cpu integer not null,
  mem integer not null,
  node_name varchar(50)
);

-- @hard_constraint
create view node_predicates as
select * from pending_pod join node on pending_pod.node_name = node.name
where node.unschedulable = false and node.ready = true;

-- @hard_constraint
create view capacity as
select node.name from node join pending_pod on pending_pod.node_name = node.name
group by node.name
having sum(pending_pod.cpu) <= node.cpu_free and sum(pending_pod.mem) <= node.mem_free;

-- @hard_constraint
create view anti_affinity as
select all_different(pending_pod.node_name) from pending_pod
where pending_pod.anti_affine = true
group by pending_pod.app;

create view spare_cpu as
select node.cpu_free - sum(pending_pod.cpu) as spare
from node join pending_pod on pending_pod.node_name = node.name
group by node.name;

-- @soft_constraint
create view balance_cpu as
select min(spare) from spare_cpu;
